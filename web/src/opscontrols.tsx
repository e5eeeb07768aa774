// The operator's controls on a room: pick models per agent (setRoomModels), override a goal
// (overrideGoal), and take a pane over, speak in the agent's seat, release it.
import { useState } from "preact/hooks";
import { gql, newId } from "./gql";
import { OpsError } from "./opsui";
import { type OperatorLine, PICKABLE, type Takeover, when } from "./opstypes";
import type { Message, Seat } from "./types";

function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState("");
  async function run(what: () => Promise<string>) {
    setBusy(true);
    setDone("");
    try {
      setDone(await what());
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  const status = (
    <>
      {error !== null && <OpsError error={error} />}
      {done && (
        <p class="ok small" role="status">
          {done}
        </p>
      )}
    </>
  );
  return { busy, run, status };
}

const fields = (e: Event) => new FormData(e.target as HTMLFormElement);

export function ModelsForm(props: { roomId: string; picks: Record<string, string>; onSaved: () => void }) {
  const action = useAction();
  function submit(e: Event) {
    e.preventDefault();
    const form = fields(e);
    const picks = PICKABLE.map((agent) => ({ agent, model: String(form.get(agent) ?? "").trim() }));
    void action.run(async () => {
      await gql("SetRoomModels", { roomId: props.roomId, picks });
      props.onSaved();
      return "Models saved.";
    });
  }
  return (
    <form class="ops-form" onSubmit={submit} aria-label="Models for this room">
      <p class="muted small">A model from the price table per agent; empty uses the configured one.</p>
      {PICKABLE.map((agent) => (
        <label key={agent}>
          {agent}
          <input name={agent} defaultValue={props.picks[agent] ?? ""} placeholder="configured" autoCapitalize="off" />
        </label>
      ))}
      <button type="submit" disabled={action.busy}>
        Save models
      </button>
      {action.status}
    </form>
  );
}

export function GoalForm(props: { roomId: string; onDone: () => void }) {
  const action = useAction();
  function submit(e: Event) {
    e.preventDefault();
    const form = fields(e);
    const variables = {
      roomId: props.roomId,
      key: String(form.get("key")),
      status: String(form.get("status")),
      reason: String(form.get("reason")),
    };
    void action.run(async () => {
      const data = await gql<{ overrideGoal: { goalEvent: { toStatus: string } | null; queuedRuns: string[]; closedOffer: boolean } }>(
        "OverrideGoal",
        variables,
      );
      props.onDone();
      const o = data.overrideGoal;
      if (!o.goalEvent) return "The goal already had that status; nothing fired.";
      const effects = [...o.queuedRuns.map((r) => `queued ${r}`), ...(o.closedOffer ? ["closed the offer"] : [])];
      return `Goal set to ${o.goalEvent.toStatus}${effects.length ? ` (${effects.join(", ")})` : ""}.`;
    });
  }
  return (
    <form class="ops-form" onSubmit={submit} aria-label="Override a goal">
      <label>
        Goal
        <input name="key" defaultValue="new-offer" required autoCapitalize="off" />
      </label>
      <label>
        Status
        <select name="status">
          {["open", "met", "blocked", "abandoned"].map((s) => (
            <option value={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        Reason
        <input name="reason" required />
      </label>
      <button type="submit" disabled={action.busy}>
        Override goal
      </button>
      {action.status}
    </form>
  );
}

const SEATS: Seat[] = ["VISITOR", "HOST"];

export function TakeoverPanel(props: { roomId: string; takeovers: Takeover[]; onChange: () => void }) {
  const [lines, setLines] = useState<OperatorLine[]>([]);
  const action = useAction();
  const taken = (seat: Seat) => props.takeovers.find((t) => t.seat.toUpperCase() === seat);
  const name = (seat: Seat) => (seat === "VISITOR" ? "visitor" : "host");

  function toggle(seat: Seat, release: boolean) {
    void action.run(async () => {
      await gql(release ? "ReleasePane" : "TakeOverPane", { roomId: props.roomId, seat });
      props.onChange();
      return release ? `The ${name(seat)} pane is back with its agent.` : `You hold the ${name(seat)} pane; its agent is silent.`;
    });
  }

  function post(seat: Seat, e: Event) {
    e.preventDefault();
    const formEl = e.target as HTMLFormElement;
    const body = String(fields(e).get("body") ?? "").trim();
    if (!body) return;
    void action.run(async () => {
      const data = await gql<{ operatorPost: Message }>("OperatorPost", {
        roomId: props.roomId,
        seat,
        body,
        clientMessageId: newId(),
      });
      setLines((l) => [...l, { ...data.operatorPost, paneSeat: seat }]);
      formEl.reset();
      return "Posted.";
    });
  }

  return (
    <div class="takeover">
      {SEATS.map((seat) => {
        const t = taken(seat);
        const mine = lines.filter((l) => l.paneSeat === seat);
        return (
          <div class="takeover-seat" key={seat} data-seat={seat}>
            <h3>The {name(seat)} pane</h3>
            {t ? (
              <>
                <p class="small">Taken over {when(t.takenAt)}: its agent is silent.</p>
                <p class="small plan">
                  Its agent's last plan: {t.lastPlan ?? "none written"}
                </p>
                {mine.length > 0 && (
                  <ol class="messages" aria-label={`Your lines in the ${name(seat)} pane`}>
                    {mine.map((m) => (
                      <li key={m.id} data-message-id={m.id} data-author={m.authorKind} class="msg left operator">
                        <span class="who">{m.authorKind === "OPERATOR" ? "Operator" : m.authorKind}</span>
                        <p class="body">{m.body}</p>
                      </li>
                    ))}
                  </ol>
                )}
                <form class="composer" onSubmit={(e) => post(seat, e)}>
                  <label class="visually-hidden" for={`op-${seat}`}>
                    Say as operator in the {name(seat)} pane
                  </label>
                  <textarea id={`op-${seat}`} name="body" rows={2} required />
                  <button type="submit" disabled={action.busy}>
                    Post as operator
                  </button>
                </form>
                <button type="button" disabled={action.busy} onClick={() => toggle(seat, true)}>
                  Release the {name(seat)} pane
                </button>
              </>
            ) : (
              <button type="button" disabled={action.busy} onClick={() => toggle(seat, false)}>
                Take over the {name(seat)} pane
              </button>
            )}
          </div>
        );
      })}
      {action.status}
    </div>
  );
}
