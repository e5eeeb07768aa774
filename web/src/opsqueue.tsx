// The operators' queue (/ops/queue): what needs a person, most urgent then oldest first, each
// with its room's link; acknowledge, assign to an operator, resolve with a note. A room's
// resolved items are listed on its page (QueueHistory). Operators only: the queue is NOT_FOUND
// to anyone else, shown as the "operators only" page.
import { useEffect, useState } from "preact/hooks";
import { GraphQLFailure, gql } from "./gql";
import { Link, OpsError } from "./opsui";
import { when } from "./opstypes";

export interface QueueItem {
  id: string;
  kind: string;
  level: "HIGH" | "MEDIUM" | "LOW";
  summary: string;
  roomId: string | null;
  roomTitle: string | null;
  link: string | null;
  raisedAt: string;
  ageSeconds: number;
  acknowledgedAt: string | null;
  assignee: string | null;
  resolvedAt: string | null;
  resolvedBy: string | null;
  note: string | null;
}

type QueueData = {
  opsQueue: { nodes: QueueItem[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
};

const KIND: Record<string, string> = {
  FLAG: "Frustration flag",
  ESCALATION: "Escalation",
  VERDICT: "Guard audit",
  FAILED_RUN: "Failed run",
  PAYMENT: "Payment",
  WEBHOOK: "Webhook",
};

/** The queue is NOT_FOUND to a non-operator: the same page as a FORBIDDEN ops read. */
function hidden(e: unknown): unknown {
  return e instanceof GraphQLFailure && e.code === "NOT_FOUND"
    ? new GraphQLFailure("Operators only.", "FORBIDDEN", {})
    : e;
}

export function age(seconds: number): string {
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

export function QueuePage() {
  const [level, setLevel] = useState("");
  const [items, setItems] = useState<QueueItem[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function load(chosen: string, after: string | null) {
    try {
      const page = (await gql<QueueData>("OpsQueue", { first: 20, after, level: chosen || null })).opsQueue;
      setItems((have) => (after && have ? [...have, ...page.nodes] : page.nodes));
      setNext(page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null);
      setError(null);
    } catch (e) {
      setError(hidden(e));
    }
  }

  useEffect(() => void load(level, null), [level]);

  if (error && !items) return <OpsError error={error} />;
  return (
    <section aria-labelledby="ops-queue-h">
      <h1 id="ops-queue-h">Queue</h1>
      <label class="ops-filter">
        Level
        <select value={level} onChange={(e) => setLevel((e.target as HTMLSelectElement).value)}>
          <option value="">Every level</option>
          <option value="HIGH">High</option>
          <option value="MEDIUM">Medium</option>
          <option value="LOW">Low</option>
        </select>
      </label>
      {error !== null && <OpsError error={error} />}
      {items === null ? (
        <p class="muted">Loading the queue…</p>
      ) : items.length === 0 ? (
        <p class="muted">Nothing needs a person.</p>
      ) : (
        <ul class="ops-rooms" aria-label="Queue items">
          {items.map((item) => (
            <QueueEntry key={item.id} item={item} onChange={() => void load(level, null)} />
          ))}
        </ul>
      )}
      {next && (
        <button type="button" onClick={() => void load(level, next)}>
          Load more
        </button>
      )}
    </section>
  );
}

function QueueEntry(props: { item: QueueItem; onChange: () => void }) {
  const { item } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function act(operation: string, variables: Record<string, unknown>) {
    setBusy(true);
    try {
      await gql(operation, { itemId: item.id, ...variables });
      setError(null);
      props.onChange();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  function submit(operation: string, field: string) {
    return (e: Event) => {
      e.preventDefault();
      const value = String(new FormData(e.target as HTMLFormElement).get(field) ?? "").trim();
      if (value) void act(operation, { [field]: value });
    };
  }

  const title = `${KIND[item.kind] ?? item.kind}: ${item.summary}`;
  return (
    <li class={`ops-room-item queue-item level-${item.level.toLowerCase()}`} data-item-id={item.id}>
      <span class="ops-facts">
        <strong class="queue-level">{item.level.toLowerCase()}</strong>
        <span>{KIND[item.kind] ?? item.kind}</span>
        <span class="muted small">waiting {age(item.ageSeconds)}</span>
        {item.acknowledgedAt && <span class="muted small">acknowledged</span>}
        {item.assignee && <span class="small">→ @{item.assignee}</span>}
      </span>
      <span class="queue-summary">{item.summary}</span>
      {item.link ? <Link href={item.link}>{item.roomTitle ?? "Open the room"}</Link> : <span class="muted small">No room</span>}
      <div class="queue-actions" aria-label={`Act on: ${title}`} role="group">
        {!item.acknowledgedAt && (
          <button type="button" disabled={busy} onClick={() => void act("AcknowledgeQueueItem", {})}>
            Acknowledge
          </button>
        )}
        <form class="ops-form" onSubmit={submit("AssignQueueItem", "operator")}>
          <input name="operator" aria-label="Operator handle" placeholder="operator handle" autoCapitalize="off" />
          <button type="submit" disabled={busy}>
            Assign
          </button>
        </form>
        <form class="ops-form" onSubmit={submit("ResolveQueueItem", "note")}>
          <input name="note" aria-label="Resolution note" placeholder="what was done" />
          <button type="submit" class="primary" disabled={busy}>
            Resolve
          </button>
        </form>
      </div>
      {error !== null && <OpsError error={error} />}
    </li>
  );
}

type HistoryData = { opsRoom: { id: string; queueHistory: { nodes: QueueItem[] } } };

/** A room's resolved queue items, on its ops page. */
export function QueueHistory(props: { roomId: string }) {
  const [items, setItems] = useState<QueueItem[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    gql<HistoryData>("OpsQueueHistory", { roomId: props.roomId })
      .then((d) => setItems(d.opsRoom.queueHistory.nodes))
      .catch(setError);
  }, [props.roomId]);
  if (error) return <OpsError error={error} />;
  if (items === null) return <p class="muted">Loading…</p>;
  if (items.length === 0) return <p class="muted small">No resolved items.</p>;
  return (
    <ul class="plain" aria-label="Resolved queue items">
      {items.map((item) => (
        <li key={item.id} data-item-id={item.id}>
          <strong>{KIND[item.kind] ?? item.kind}</strong> ({item.level.toLowerCase()}): {item.summary}
          <br />
          <span class="small">
            Resolved by @{item.resolvedBy ?? "?"} {item.resolvedAt ? when(item.resolvedAt) : ""}: {item.note}
          </span>
        </li>
      ))}
    </ul>
  );
}
