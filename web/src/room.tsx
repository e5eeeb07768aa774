// A room from the reader's seat: header with its stage, who is in it (the participants panel),
// the written offer, and every pane the reader may read (Room.panes) — its own writable, every
// other read-only: the host side reads all of them, anyone else its own (and those shared).
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { LoginGate } from "./gate";
import { gql } from "./gql";
import { reconnect, watchConnection, type Connection } from "./live";
import { navigate } from "./nav";
import { OfferCard, StageChip } from "./offer";
import { Pane } from "./pane";
import { PeoplePanel, PeopleToggle } from "./people";
import type { Offer, PaneInfo, People, Room, Stage } from "./types";

/** The reader's own pane, then the others in the server's order (the host's, then the visitor
 * side's by arrival). A home room shows only its one pane. */
export function panesOf(room: Room): { own: PaneInfo | null; others: PaneInfo[] } {
  const you = new Set(room.participants.filter((p) => p.isYou).map((p) => p.id));
  // A host previewing its demo room holds both leads: it writes from its reader seat.
  const candidates = room.panes.filter((p) => you.has(p.participantId) && p.seat === room.readerSeat);
  const own = candidates.find((p) => p.key === "host" || p.key === "visitor") ?? candidates[0] ?? null;
  const others = room.kind === "HOME" ? [] : room.panes.filter((p) => p !== own);
  return { own, others };
}

export function RoomView(props: {
  roomId: string;
  initial?: Room;
  onActivity?: (roomId: string, cursor: string) => void;
  onMissing?: () => void;
  /** The room's stage or offer changed (the host's room list re-reads). */
  onChanged?: () => void;
  /** Grows when the reader's room list hears of activity in this room: someone may have joined. */
  activity?: number;
  actions?: ComponentChildren;
}) {
  const { roomId } = props;
  const [room, setRoom] = useState<Room | null>(props.initial?.id === roomId ? props.initial : null);
  const [error, setError] = useState<string | null>(null);
  const [connection, setConnection] = useState<Connection>("live");
  // The guest gate: up when the room says so (Room.loginRequired), when LoginRequiredChanged
  // arrives on the visitor pane, or when a post/approve/pay is refused with LOGIN_REQUIRED.
  const [gate, setGate] = useState<boolean>(room?.loginRequired ?? false);
  const [signedInAs, setSignedInAs] = useState<string | null>(null);
  const roomRef = useRef(room);
  roomRef.current = room;

  useEffect(() => watchConnection(setConnection), []);

  // Who is in the room and which panes the reader reads change when someone joins or leaves:
  // re-read them (not the whole room) when the panel opens, the page comes back into view, or
  // the room list hears of activity here.
  const [peopleOpen, setPeopleOpen] = useState(false);
  const peopleReads = useRef(0);
  async function loadPeople() {
    const n = ++peopleReads.current;
    try {
      const data = await gql<{ room: People }>("RoomPeople", { id: roomId });
      if (n === peopleReads.current) setPeople(data.room);
    } catch {
      // keep what is shown; a room the reader no longer holds says so at its next full read
    }
  }
  function setPeople(people: People) {
    setRoom((r) => (r ? { ...r, participants: people.participants, panes: people.panes } : r));
  }
  useEffect(() => {
    const visible = () => {
      if (document.visibilityState === "visible" && roomRef.current) void loadPeople();
    };
    document.addEventListener("visibilitychange", visible);
    return () => document.removeEventListener("visibilitychange", visible);
  }, [roomId]);
  useEffect(() => {
    if (!props.activity || !roomRef.current) return;
    const timer = window.setTimeout(() => void loadPeople(), 250);
    return () => window.clearTimeout(timer);
  }, [props.activity]);

  // Only the newest read is applied: one started before a sign-in must not put the gate back
  // up after the read that followed the claim.
  const loads = useRef(0);
  async function load() {
    const n = ++loads.current;
    try {
      const data = await gql<{ room: Room }>("Room", { id: roomId });
      if (n !== loads.current) return;
      setRoom(data.room);
      setGate(data.room.loginRequired);
      setError(null);
      props.onChanged?.();
    } catch (e) {
      if (n !== loads.current) return;
      if (props.onMissing) props.onMissing();
      else setError(e instanceof Error ? e.message : String(e));
    }
  }

  useEffect(() => {
    if (!(props.initial && props.initial.id === roomId)) {
      setRoom(null);
      void load();
    } else {
      setGate(props.initial.loginRequired);
    }
  }, [roomId]);

  // A signed-in visitor is never gated: a late `true` (sent before the claim) re-reads the room.
  // Read through a ref: a pane's subscription keeps the callback it was first given, and its
  // closure would still see "not signed in".
  const signedInRef = useRef<string | null>(null);
  function gateChanged(required: boolean) {
    if (required && signedInRef.current) void load();
    else setGate(required);
  }

  // The event that raises a guest's gate passes once and is not replayed: a stream that started
  // just after it missed it. Every line a guest's own pane receives (the gate's own line among
  // them, and stored lines are never missed) re-reads the room's word on it while it is down.
  const gateRef = useRef(gate);
  gateRef.current = gate;
  const gateReads = useRef(0);
  function guestLine() {
    const r = roomRef.current;
    const me = r?.participants.find((p) => p.isYou);
    if (gateRef.current || signedInRef.current || !r || r.kind !== "DEAL" || !me?.isGuest) return;
    const n = ++gateReads.current;
    window.setTimeout(async () => {
      if (n !== gateReads.current || gateRef.current || signedInRef.current) return;
      try {
        const data = await gql<{ room: { loginRequired: boolean } }>("RoomGate", { id: roomId });
        if (n === gateReads.current && data.room.loginRequired && !signedInRef.current) setGate(true);
      } catch {
        // the next line tries again
      }
    }, 300);
  }

  // Signed up or in from the gate, with the guest cookie: the server claimed this room. Re-read
  // it (loginRequired false, the new title); the streams move to a socket that carries the new
  // session, and what was held replays into the panes live.
  function signedIn(handle: string) {
    signedInRef.current = handle;
    setSignedInAs(handle);
    setGate(false);
    reconnect();
    void load();
  }

  // A StageChanged in a pane: a new offer was drawn, or the current one moved.
  function onStage(offerId: string, stage: Stage, version: number) {
    const offer = roomRef.current?.offer;
    if (!offer || offer.id !== offerId || offer.stage !== stage || offer.version !== version) void load();
  }

  function setOffer(offer: Offer) {
    setRoom((r) => (r ? { ...r, offer, stage: r.offer?.id === offer.id ? offer.stage : r.stage } : r));
    props.onChanged?.();
  }

  if (error) return <p class="error" role="alert">{error}</p>;
  if (!room) return <p class="muted">Opening the room…</p>;

  const { own, others } = panesOf(room);
  const panes = own ? [own, ...others] : others;
  // The two leads' panes look as they always have (the label says who talks there); with a
  // teammate's pane among them, each other pane is headed with its participant's name too,
  // since a side's labels read alike.
  const named = panes.length > 2 || panes.some((p) => p.key !== "host" && p.key !== "visitor");
  const names = new Map(room.participants.map((p) => [p.id, p.displayName]));
  const nameOf = (pane: PaneInfo) =>
    named && pane !== own ? (names.get(pane.participantId) ?? "Someone who left") : undefined;
  const headingFor = (pane: PaneInfo) =>
    pane === own
      ? "Your conversation"
      : pane.seat === "VISITOR"
        ? "The visitor's conversation"
        : "The host's conversation";
  const peopleId = `people-${room.id}`;
  return (
    <article class="room" data-room-id={room.id} data-kind={room.kind}>
      <header class="room-header">
        <div>
          <h1 tabIndex={-1}>{room.title}</h1>
          <p class="subtitle">
            {room.subtitle}
            {room.service && <span class="service-tag"> · {room.service.name}</span>}
          </p>
        </div>
        <div class="room-meta">
          {room.kind === "DEAL" && <StageChip stage={room.stage} />}
          {connection === "reconnecting" && (
            <span class="conn" role="status">
              Reconnecting…
            </span>
          )}
          {room.kind === "DEAL" && (
            <PeopleToggle
              room={room}
              open={peopleOpen}
              controls={peopleId}
              onToggle={() => {
                if (!peopleOpen) void loadPeople();
                setPeopleOpen(!peopleOpen);
              }}
            />
          )}
          {props.actions}
        </div>
      </header>
      {room.kind === "DEAL" && peopleOpen && (
        <PeoplePanel
          id={peopleId}
          room={room}
          onPeople={setPeople}
          onReload={() => void loadPeople()}
          onLeft={() => navigate("/")}
        />
      )}
      {gate && <LoginGate heldEffects={room.heldEffects} onSignedIn={signedIn} />}
      {signedInAs && !gate && (
        <p class="signed-in ok" role="status">
          Signed in as @{signedInAs}, in the same room.
        </p>
      )}
      {room.offer && <OfferCard offer={room.offer} onChange={setOffer} onLoginRequired={() => setGate(true)} />}
      <div class={`panes count-${Math.min(panes.length, 3)}`}>
        {panes.map((pane) => (
          <Pane
            key={`${room.id}-${pane.participantId}`}
            roomId={room.id}
            participantId={pane.participantId}
            paneKey={pane.key}
            seat={pane.seat}
            writable={pane === own}
            heading={headingFor(pane)}
            name={nameOf(pane)}
            onStage={onStage}
            onLoginRequired={pane === own ? gateChanged : undefined}
            onActivity={(cursor) => {
              props.onActivity?.(room.id, cursor);
              if (pane === own) guestLine();
            }}
          />
        ))}
      </div>
    </article>
  );
}
