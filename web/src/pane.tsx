// One participant's pane: its messages (newest 50, then live over paneEvents by participant),
// the agent's typing indicator and streamed reply, and — when it is the reader's own pane —
// the composer.
import { useEffect, useRef, useState } from "preact/hooks";
import { GraphQLFailure, gql, needsLogin, newId } from "./gql";
import { follow, type Following } from "./live";
import type { Message, PaneEvent, Seat, Stage } from "./types";

interface PaneData {
  room: {
    pane: {
      relationshipLabel: string;
      messages: { edges: { node: Message }[]; pageInfo: { endCursor: string | null } };
    } | null;
  };
}

export interface PaneProps {
  roomId: string;
  /** Whose pane (Room.panes' participantId): what it reads and follows. */
  participantId: string;
  /** The participant's key (host, visitor, visitor_2 …): names the pane's elements. */
  paneKey: string;
  /** The participant's side: what postMessage and retryTurn address for the reader's own. */
  seat: Seat;
  writable: boolean;
  heading: string;
  /** In a room of more than two: whose pane this is, above who talks there. */
  name?: string;
  /** A written offer's stage changed (a new offer, or the current one moved). */
  onStage?: (offerId: string, stage: Stage, version: number) => void;
  /** The guest gate: the room needs the guest to sign in (an event, or a refused post). */
  onLoginRequired?: (required: boolean) => void;
  /** A message arrived (the room list's unread marker). */
  onActivity?: (cursor: string) => void;
}

const STORED: ReadonlySet<string> = new Set(["MessageAdded", "SystemLine", "StageChanged", "LoginRequiredChanged"]);

export function Pane(props: PaneProps) {
  const { roomId, participantId, seat, writable } = props;
  const [messages, setMessages] = useState<Message[]>([]);
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [label, setLabel] = useState(props.heading);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [announce, setAnnounce] = useState("");
  const listRef = useRef<HTMLOListElement>(null);
  const composerRef = useRef<HTMLTextAreaElement>(null);
  const following = useRef<Following | null>(null);
  const callbacks = useRef(props);
  callbacks.current = props;

  useEffect(() => {
    let stream: Following | null = null;
    let cancelled = false;
    setMessages([]);
    setDrafts({});
    setLoading(true);
    gql<PaneData>("PaneMessages", { roomId, participantId, last: 50 })
      .then((data) => {
        if (cancelled) return;
        const pane = data.room.pane;
        const page = pane?.messages;
        setMessages(page ? page.edges.map((e) => e.node) : []);
        if (pane) setLabel(pane.relationshipLabel);
        setLoading(false);
        stream = following.current = follow<PaneEvent>({
          operation: "PaneEvents",
          variables: { roomId, participantId },
          after: page?.pageInfo.endCursor ?? null,
          cursorOf: (event) => (STORED.has(event.__typename) ? event.cursor : null),
          onEvent: (event) => {
            setError(null); // a stream resumed after a refusal (a reconnect after sign-in)
            handle(event);
          },
          onError: (message) => setError(message),
        });
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(e instanceof Error ? e.message : String(e));
      });
    return () => {
      cancelled = true;
      stream?.stop();
      following.current = null;
    };
  }, [roomId, participantId]);

  function add(message: Message) {
    setMessages((list) => (list.some((m) => m.id === message.id) ? list : [...list, message]));
  }

  function handle(event: PaneEvent) {
    switch (event.__typename) {
      case "MessageAdded":
      case "SystemLine":
        add(event.message);
        if (event.message.systemKind === "TURN_RETRYING" || event.message.systemKind === "TURN_FAILED") {
          // A pane streams one reply at a time: a failed attempt's notice ends what was
          // streaming there, which will never be stored under that id.
          setDrafts({});
        } else {
          setDrafts(({ [event.message.id]: _done, ...rest }) => rest);
        }
        if (event.message.authorKind !== "PARTICIPANT") setAnnounce(event.message.body);
        callbacks.current.onActivity?.(event.cursor);
        break;
      case "AgentTyping":
        setDrafts((d) => ({ ...d, [event.messageId]: d[event.messageId] ?? "" }));
        break;
      case "MessageDelta":
        setDrafts((d) => ({ ...d, [event.messageId]: (d[event.messageId] ?? "") + event.delta }));
        break;
      case "StageChanged":
        callbacks.current.onStage?.(event.offerId, event.stage, event.version);
        break;
      case "LoginRequiredChanged":
        callbacks.current.onLoginRequired?.(event.loginRequired);
        break;
    }
  }

  // Keep the newest line in view; focus follows it unless the reader is typing.
  useEffect(() => {
    const list = listRef.current;
    if (!list) return;
    const last = list.lastElementChild as HTMLElement | null;
    last?.scrollIntoView({ block: "end" });
    if (last && document.activeElement && list.contains(document.activeElement)) last.focus();
  }, [messages.length, Object.keys(drafts).length]);

  async function send(body: string): Promise<boolean> {
    const clientMessageId = newId();
    // One retry with the same clientMessageId on a network failure: the server keeps one.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const data = await gql<{ postMessage: Message }>("PostMessage", {
          input: { roomId, body, clientMessageId, seat },
        });
        add(data.postMessage);
        following.current?.catchUp(data.postMessage.cursor);
        setError(null);
        return true;
      } catch (e) {
        if (e instanceof GraphQLFailure && e.code === "NETWORK" && attempt === 0) continue;
        if (needsLogin(e) && callbacks.current.onLoginRequired) {
          // The guest must sign in first: show the gate; the composer keeps the text.
          callbacks.current.onLoginRequired(true);
          setError(null);
          return false;
        }
        setError(e instanceof Error ? e.message : String(e));
        return false;
      }
    }
    return false;
  }

  async function retryTurn() {
    try {
      await gql("RetryTurn", { roomId, seat });
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  const typing = Object.entries(drafts);
  const paneId = `pane-${roomId}-${props.paneKey}`;
  const title = props.name ? `${props.name} · ${label}` : label;
  return (
    <section
      class={`pane ${writable ? "own" : "readonly"}`}
      aria-labelledby={`${paneId}-h`}
      data-seat={seat}
      data-key={props.paneKey}
      data-participant-id={participantId}
    >
      <h2 id={`${paneId}-h`} class="pane-heading">
        {props.name ? (
          <>
            {props.name}
            <span class="pane-label">{label}</span>
          </>
        ) : (
          label
        )}
        {!writable && <span class="tag">read-only</span>}
      </h2>
      {loading && <p class="muted">Loading messages…</p>}
      <ol class="messages" ref={listRef} aria-label={`Messages: ${title}`}>
        {messages.map((m, i) => (
          <li
            key={m.id}
            id={`m-${m.id}`}
            tabIndex={-1}
            data-message-id={m.id}
            class={`msg ${m.alignment.toLowerCase()} ${m.authorKind.toLowerCase()}`}
          >
            <span class="who">{author(m, writable, props.name)}</span>
            <p class="body">{m.body}</p>
            {/* Only on a turn that failed for good, while nothing has followed it. */}
            {m.systemKind === "TURN_FAILED" && writable && i === messages.length - 1 && (
              <button type="button" class="link" onClick={retryTurn}>
                Try again
              </button>
            )}
          </li>
        ))}
        {typing.map(([id, text]) => (
          <li key={`draft-${id}`} class="msg left agent draft" data-draft-id={id} aria-busy="true">
            <span class="who">Agent</span>
            {text ? <p class="body">{text}</p> : <p class="typing" aria-label="The agent is typing">
              <span />
              <span />
              <span />
            </p>}
          </li>
        ))}
      </ol>
      <div class="visually-hidden" aria-live="polite" role="status">
        {announce && `Agent: ${announce}`}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {writable && <Composer id={paneId} inputRef={composerRef} onSend={send} />}
    </section>
  );
}

function author(m: Message, own: boolean, name?: string): string {
  if (m.authorKind === "AGENT") return "Agent";
  if (m.authorKind === "SYSTEM") return "System";
  if (m.authorKind === "OPERATOR") return "Operator";
  if (own) return "You";
  return name ?? (m.seat === "VISITOR" ? "Visitor" : "Host");
}

function Composer(props: {
  id: string;
  inputRef: { current: HTMLTextAreaElement | null };
  onSend: (body: string) => Promise<boolean>;
}) {
  const [body, setBody] = useState("");
  const [busy, setBusy] = useState(false);

  async function submit(e?: Event) {
    e?.preventDefault();
    const text = body.trim();
    if (!text || busy) return;
    setBusy(true);
    if (await props.onSend(text)) setBody("");
    setBusy(false);
    props.inputRef.current?.focus();
  }

  return (
    <form class="composer" onSubmit={submit}>
      <label for={`${props.id}-input`} class="visually-hidden">
        Message
      </label>
      <textarea
        id={`${props.id}-input`}
        ref={props.inputRef}
        rows={2}
        value={body}
        placeholder="Write a message — Enter sends, Shift+Enter for a new line"
        onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) void submit(e);
        }}
      />
      <button type="submit" disabled={busy || !body.trim()}>
        Send
      </button>
    </form>
  );
}
