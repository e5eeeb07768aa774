// One room as operators see it (/ops/rooms/<id>): run history, goal events, the Guard's
// verdicts, flags, spend by agent, model and day, both panes' transcripts, the memory with its
// history, the dispatch record and offers; the controls are in opscontrols.tsx.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { gql } from "./gql";
import { StageChip } from "./offer";
import { Link, OpsError } from "./opsui";
import { GoalForm, ModelsForm, TakeoverPanel } from "./opscontrols";
import { QueueHistory } from "./opsqueue";
import { type OpsRoomData, type OpsTranscript, type Spend, usd, when } from "./opstypes";

export function OpsRoomPage(props: { roomId: string }) {
  const [data, setData] = useState<OpsRoomData | null>(null);
  const [teammates, setTeammates] = useState<OpsTranscript[]>([]);
  const [error, setError] = useState<unknown>(null);

  async function load() {
    try {
      const found = await gql<OpsRoomData>("OpsRoom", { roomId: props.roomId });
      setData(found);
      // The two leads' panes come with the room; each teammate's pane is read by its key.
      const extra = found.opsRoom.paneKeys.filter((k) => k !== "host" && k !== "visitor");
      const read = await Promise.all(
        extra.map((key) =>
          gql<{ opsRoom: { lines: OpsTranscript } }>("OpsPaneLines", { roomId: props.roomId, key }),
        ),
      );
      setTeammates(read.map((r) => r.opsRoom.lines));
      setError(null);
    } catch (e) {
      setError(e);
    }
  }

  useEffect(() => void load(), [props.roomId]);

  if (error && !data) return <OpsError error={error} />;
  if (!data) return <p class="muted">Loading the room…</p>;
  const room = data.opsRoom;
  const guard = data.roomOps.guardVerdicts;
  return (
    <article class="ops-room" data-room-id={room.id}>
      <Link href="/ops">‹ Rooms</Link>
      <header class="ops-room-header">
        <h1>{room.title}</h1>
        <p class="muted small">
          @{room.hostHandle} · {room.kind.toLowerCase()} · {room.mode.toLowerCase()} · last activity{" "}
          {when(room.lastActivityAt)}
        </p>
        {room.kind.toUpperCase() === "DEAL" && <StageChip stage={room.stage} />}
        <p class="spend">
          Spend {usd(room.totalSpend)} · {room.totalSpend.calls} calls · {room.flagCount} flags
        </p>
      </header>
      {error !== null && <OpsError error={error} />}

      <Section id="takeover" title="Panes">
        <TakeoverPanel roomId={room.id} takeovers={room.takeovers} onChange={load} />
      </Section>

      <Section id="runs" title={`Runs (${room.runs.nodes.length}${room.runs.hasNextPage ? "+" : ""})`}>
        <Table
          label="Run history"
          head={["Agent", "Pane", "Status", "Verdict", "Tokens in/out", "Price", "Latency", "Refusal or error", "Queued"]}
          rows={room.runs.nodes.map((r) => [
            r.agent,
            r.pane,
            r.attempts > 1 ? `${r.status} (${r.attempts} tries)` : r.status,
            r.verdict,
            `${r.usage.inputTokens}/${r.usage.outputTokens}`,
            usd(r.usage),
            `${r.modelLatencyMs} ms`,
            r.error ?? "",
            when(r.createdAt),
          ])}
          rowClass="run-row"
        />
      </Section>

      <Section id="spend" title="Spend">
        <SpendTable label="Spend by agent" rows={room.byAgent} />
        <SpendTable label="Spend by model" rows={room.byModel} />
        <SpendTable label="Spend by day" rows={room.byDay} />
      </Section>

      <Section id="models" title="Models">
        <ModelsForm roomId={room.id} picks={room.modelPicks} onSaved={load} />
      </Section>

      <Section id="goals" title="Goal events">
        <Table
          label="Goal events"
          head={["Goal", "From", "To", "By", "Reason", "When"]}
          rows={room.goalEvents.nodes.map((g) => [
            g.goalKey,
            g.fromStatus ?? "",
            g.toStatus,
            `${g.agent} (${g.byPane})`,
            g.reason,
            when(g.createdAt),
          ])}
        />
        <GoalForm roomId={room.id} onDone={load} />
      </Section>

      <Section id="guard" title="Guard verdicts">
        {guard.length === 0 ? (
          <p class="muted small">No Guard audits yet.</p>
        ) : (
          <ul class="plain">
            {guard.map((v) => (
              <li key={v.id}>
                <strong>{v.verdict}</strong> · {when(v.createdAt)}
                {v.findings.map((f) => (
                  <div class="small">{f}</div>
                ))}
                {v.edits.map((e) => (
                  <div class="small muted">
                    {e.kind} {e.target}: {e.detail}
                  </div>
                ))}
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section id="transcripts" title="Transcripts">
        <div class="ops-transcripts">
          {[room.hostLines, room.visitorLines, ...teammates].map((t) => (
            <div class="ops-transcript" data-seat={t.seat} role="log" aria-label={`${t.seat} pane`}>
              <h3>{t.seat} pane</h3>
              {t.nodes.length === 0 && <p class="muted small">No lines yet.</p>}
              <ol class="plain">
                {[...t.nodes].reverse().map((m) => (
                  <li key={m.id} class="small">
                    <strong>{m.authorKind.toLowerCase()}</strong> {m.body}
                  </li>
                ))}
              </ol>
              {t.hasNextPage && <p class="muted small">Older lines: opsRoom.transcript(before:).</p>}
            </div>
          ))}
        </div>
      </Section>

      <Section id="memory" title="Room memory">
        <pre class="ops-memory small">{JSON.stringify(room.memory, null, 2)}</pre>
        <Table
          label="Memory history"
          head={["Path", "Old", "New", "By", "Reason", "When"]}
          rows={room.memoryHistory.nodes.map((c) => [
            c.path,
            c.oldValue == null ? "" : JSON.stringify(c.oldValue),
            c.newValue == null ? "" : JSON.stringify(c.newValue),
            c.agent,
            c.reason ?? "",
            when(c.createdAt),
          ])}
        />
      </Section>

      <Section id="dispatches" title="Dispatch record">
        <Table
          label="Dispatches"
          head={["From", "To", "Substance", "Status", "When"]}
          rows={room.dispatches.nodes.map((d) => [d.fromPane, d.toPane, d.substance, d.status, when(d.createdAt)])}
        />
      </Section>

      <Section id="offers" title="Offers and payments">
        <Table
          label="Offers"
          head={["Stage", "Version", "Payments"]}
          rows={room.offers.map((o) => [
            o.stage,
            String(o.version),
            o.payments.map((p) => `${p.status} ${p.total} ${p.currency}`).join("; "),
          ])}
        />
      </Section>

      <Section id="flags" title={`Flags (${room.flagCount})`}>
        <Table
          label="Frustration flags"
          head={["Level", "Evidence", "When"]}
          rows={room.flags.nodes.map((f) => [f.level, f.evidence, when(f.createdAt)])}
        />
      </Section>

      <Section id="queue-history" title="Resolved queue items">
        <QueueHistory roomId={room.id} />
      </Section>
    </article>
  );
}

function Section(props: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="ops-section" aria-labelledby={`ops-${props.id}-h`}>
      <h2 id={`ops-${props.id}-h`}>{props.title}</h2>
      {props.children}
    </section>
  );
}

function SpendTable(props: { label: string; rows: Spend[] }) {
  return (
    <Table
      label={props.label}
      head={[props.label.replace("Spend by ", ""), "Calls", "Tokens in/out", "Cached", "Price"]}
      rows={props.rows.map((s) => [s.key, String(s.calls), `${s.inputTokens}/${s.outputTokens}`, String(s.cachedTokens), usd(s)])}
    />
  );
}

/** A table that scrolls sideways inside its own labelled region (the page never does). */
function Table(props: { label: string; head: string[]; rows: string[][]; rowClass?: string }) {
  if (props.rows.length === 0) return <p class="muted small">None yet ({props.label.toLowerCase()}).</p>;
  return (
    <div class="table-scroll" role="region" aria-label={props.label} tabIndex={0}>
      <table>
        <thead>
          <tr>
            {props.head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((cells) => (
            <tr class={props.rowClass}>
              {cells.map((c) => (
                <td>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
