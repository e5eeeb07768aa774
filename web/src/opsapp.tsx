// The operators' pages: /ops (rooms by host, stage and flags, with spend), /ops/queue (what
// needs a person, opsqueue.tsx), /ops/rooms/<id> (opsroom.tsx) and /ops/prompts. Everything
// comes from the ops fields of the public API, which are NOT_FOUND to anyone but an operator:
// an account that is not one gets the "operators only" page without asking for them.
import { useEffect, useState } from "preact/hooks";
import { forbidden, gql } from "./gql";
import type { Route } from "./nav";
import { StageChip } from "./offer";
import { QueuePage } from "./opsqueue";
import { OpsRoomPage } from "./opsroom";
import { type OpsRoomSummary, usd, when } from "./opstypes";
import { Link, OperatorsOnly, OpsError } from "./opsui";
import { STAGE_LABEL, type Me, type Stage } from "./types";

type OpsRoute = Extract<Route, { page: "ops" }>;

export function OpsApp(props: { route: OpsRoute; me: Me }) {
  const { route } = props;
  if (!props.me.isOperator) return <OperatorsOnly />;
  return (
    <div class="ops">
      <header class="ops-bar">
        <strong>dealroom ops</strong>
        <nav aria-label="Ops">
          <Link href="/ops" current={route.view === "rooms"}>Rooms</Link>
          <Link href="/ops/queue" current={route.view === "queue"}>Queue</Link>
          <Link href="/ops/prompts" current={route.view === "prompts"}>Prompts</Link>
          <Link href="/">Your rooms</Link>
        </nav>
        <span class="muted small">@{props.me.handle}</span>
      </header>
      <main class="ops-main">
        {route.view === "room" ? (
          <OpsRoomPage key={route.roomId} roomId={route.roomId} />
        ) : route.view === "queue" ? (
          <QueuePage />
        ) : route.view === "prompts" ? (
          <Prompts />
        ) : (
          <RoomList />
        )}
      </main>
    </div>
  );
}

interface Filter {
  hostHandle: string;
  stage: string;
  flagged: string;
}

type Page = { nodes: OpsRoomSummary[]; hasNextPage: boolean; endCursor: string | null };

function RoomList() {
  const [filter, setFilter] = useState<Filter>({ hostHandle: "", stage: "", flagged: "" });
  const [rooms, setRooms] = useState<OpsRoomSummary[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function load(f: Filter, after: string | null) {
    setBusy(true);
    try {
      const variables = {
        first: 20,
        after,
        filter: {
          hostHandle: f.hostHandle.trim().replace(/^@/, "") || null,
          stage: f.stage || null,
          flagged: f.flagged === "" ? null : f.flagged === "yes",
        },
      };
      const page = (await gql<{ opsRooms: Page }>("OpsRooms", variables)).opsRooms;
      setRooms((have) => (after && have ? [...have, ...page.nodes] : page.nodes));
      setNext(page.hasNextPage ? page.endCursor : null);
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  useEffect(() => void load(filter, null), []);

  function submit(e: Event) {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const f = {
      hostHandle: String(form.get("hostHandle") ?? ""),
      stage: String(form.get("stage") ?? ""),
      flagged: String(form.get("flagged") ?? ""),
    };
    setFilter(f);
    void load(f, null);
  }

  if (error && forbidden(error)) return <OpsError error={error} />;
  return (
    <section aria-labelledby="ops-rooms-h">
      <h1 id="ops-rooms-h">Rooms</h1>
      <form class="ops-filter" onSubmit={submit} aria-label="Filter rooms">
        <label>
          Host handle
          <input name="hostHandle" autoCapitalize="off" placeholder="any" />
        </label>
        <label>
          Stage
          <select name="stage">
            <option value="">Any stage</option>
            {Object.entries(STAGE_LABEL).map(([stage, label]) => (
              <option value={stage}>{label}</option>
            ))}
          </select>
        </label>
        <label>
          Flagged
          <select name="flagged">
            <option value="">Any</option>
            <option value="yes">Flagged</option>
            <option value="no">Not flagged</option>
          </select>
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Filter
        </button>
      </form>
      {error !== null && <OpsError error={error} />}
      {rooms === null ? (
        <p class="muted">Loading rooms…</p>
      ) : rooms.length === 0 ? (
        <p class="muted">No rooms match.</p>
      ) : (
        <ul class="ops-rooms">
          {rooms.map((room) => (
            <li key={room.id} data-room-id={room.id} class="ops-room-item">
              <Link href={`/ops/rooms/${room.id}`}>{room.title}</Link>
              <span class="muted small">
                @{room.hostHandle} · {room.kind.toLowerCase()} · {when(room.lastActivityAt)}
              </span>
              <span class="ops-facts">
                {room.kind.toUpperCase() === "DEAL" && <StageChip stage={room.stage as Stage} />}
                <span class="spend">Spend {usd(room.totalSpend)} · {room.totalSpend.calls} calls</span>
                <span class={room.flagCount ? "flags bad" : "flags"}>
                  {room.flagCount} {room.flagCount === 1 ? "flag" : "flags"}
                </span>
              </span>
            </li>
          ))}
        </ul>
      )}
      {next && (
        <button type="button" disabled={busy} onClick={() => void load(filter, next)}>
          Load more
        </button>
      )}
    </section>
  );
}

function Prompts() {
  const [prompts, setPrompts] = useState<{ name: string; text: string; sha256: string }[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    gql<{ agentPrompts: { name: string; text: string; sha256: string }[] }>("AgentPrompts")
      .then((d) => setPrompts(d.agentPrompts))
      .catch(setError);
  }, []);
  if (error) return <OpsError error={error} />;
  return (
    <section aria-labelledby="ops-prompts-h">
      <h1 id="ops-prompts-h">Agent prompts</h1>
      <p class="muted small">Read-only: a prompt is code; its SHA-256 is the version that runs.</p>
      {prompts === null && <p class="muted">Loading prompts…</p>}
      {prompts?.map((p) => (
        <details key={p.name} class="prompt">
          <summary>
            <strong>{p.name}</strong> <code class="sha">sha256 {p.sha256}</code>
          </summary>
          <pre aria-label={`The ${p.name} prompt`}>{p.text}</pre>
        </details>
      ))}
    </section>
  );
}
