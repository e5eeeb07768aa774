// The written offer, as the reader sees it: terms, what paying costs, its stage (live over
// offerStage), and the buttons the server says this reader may press now (viewerActions).
import { useEffect, useRef, useState } from "preact/hooks";
import { gql, needsLogin, newId } from "./gql";
import { follow } from "./live";
import { STAGE_LABEL, type Offer, type OfferAction, type Stage, type StageChange } from "./types";

export const TEST_CARDS: { method: string; label: string }[] = [
  { method: "test_card_ok", label: "Test card — succeeds" },
  { method: "test_card_delayed_capture", label: "Test card — captured later" },
  { method: "test_card_declined", label: "Test card — declined" },
];

export function StageChip(props: { stage: Stage }) {
  return (
    <span class={`stage stage-${props.stage.toLowerCase()}`} data-stage={props.stage}>
      {STAGE_LABEL[props.stage]}
    </span>
  );
}

const money = (amount: string, currency: string) => `${amount} ${currency}`;

export function OfferCard(props: {
  offer: Offer;
  onChange: (offer: Offer) => void;
  /** A guest was refused (FORBIDDEN, reason LOGIN_REQUIRED): show the sign-in gate. */
  onLoginRequired?: () => void;
}) {
  const { offer } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const [method, setMethod] = useState(TEST_CARDS[0].method);
  const [payKey, setPayKey] = useState(newId());
  const [paid, setPaid] = useState<string | null>(null);
  const latest = useRef(props);
  latest.current = props;

  // Live stage for this offer; on any change, re-read the offer (its viewerActions change).
  useEffect(
    () =>
      follow<StageChange>({
        operation: "OfferStage",
        variables: { offerId: offer.id },
        after: null,
        cursorOf: (event) => event.cursor,
        onEvent: () => void refresh(),
      }).stop,
    [offer.id],
  );

  async function refresh() {
    try {
      const data = await gql<{ offer: Offer }>("Offer", { id: latest.current.offer.id });
      latest.current.onChange(data.offer);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  async function run(action: () => Promise<Offer>) {
    setBusy(true);
    setError(null);
    try {
      props.onChange(await action());
    } catch (e) {
      if (needsLogin(e) && props.onLoginRequired) {
        props.onLoginRequired();
        return;
      }
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  const approve = () =>
    run(async () => (await gql<{ approveOffer: Offer }>("ApproveOffer", { offerId: offer.id, version: offer.version })).approveOffer);

  const pay = () =>
    run(async () => {
      try {
        const data = await gql<{ payOffer: { offer: Offer; payment: { status: string; total: string; currency: string } } }>(
          "PayOffer",
          { offerId: offer.id, paymentMethod: method, idempotencyKey: payKey },
        );
        setPaid(`Paid ${money(data.payOffer.payment.total, data.payOffer.payment.currency)} (${data.payOffer.payment.status})`);
        return data.payOffer.offer;
      } finally {
        setPayKey(newId()); // the next attempt (another card) is a new payment
      }
    });

  const chat = (operation: "CounterOffer" | "AddToOffer" | "RejectOffer", field: string) =>
    run(async () => {
      const data = await gql<Record<string, { offer: Offer }>>(operation, {
        offerId: offer.id,
        text: note.trim(),
        clientMessageId: newId(),
      });
      setNote("");
      return data[field].offer;
    });

  const can = (action: OfferAction) => offer.viewerActions.includes(action);
  const t = offer.terms;
  const q = offer.payment;
  const noteId = `offer-note-${offer.id}`;
  const cardId = `offer-card-${offer.id}`;
  return (
    <section class="offer" aria-labelledby={`offer-h-${offer.id}`} data-offer-id={offer.id}>
      <header>
        <h2 id={`offer-h-${offer.id}`}>Written offer · v{offer.version}</h2>
        <StageChip stage={offer.stage} />
      </header>
      <p class="gloss" aria-live="polite">
        {offer.stageGloss}
      </p>
      <dl class="terms">
        <dt>Fee</dt>
        <dd>{t.fee ? money(t.fee.amount, t.fee.currency) : "not settled"}</dd>
        {t.deliverables.length > 0 && (
          <>
            <dt>Deliverables</dt>
            <dd>{t.deliverables.join("; ")}</dd>
          </>
        )}
        {t.dates.length > 0 && (
          <>
            <dt>Dates</dt>
            <dd>{t.dates.join(", ")}</dd>
          </>
        )}
        {t.usageRights && (
          <>
            <dt>Usage</dt>
            <dd>{t.usageRights}</dd>
          </>
        )}
        {t.exclusivity && (
          <>
            <dt>Exclusivity</dt>
            <dd>{t.exclusivity}</dd>
          </>
        )}
        <dt>Parties</dt>
        <dd>
          {t.seller.displayName} (talent) · {t.buyer ? t.buyer.displayName : "a guest brand"}
        </dd>
        {q && (
          <>
            <dt>Due now</dt>
            <dd>
              {money(q.due, q.currency)} ({q.duePercent}%) + platform fee {q.platformFee} ={" "}
              <strong>{money(q.total, q.currency)}</strong>
            </dd>
          </>
        )}
      </dl>
      {t.openQuestions.length > 0 && (
        <p class="muted">Open questions: {t.openQuestions.join("; ")}</p>
      )}
      {offer.payments.length > 0 && (
        <p class="muted">
          Payments: {offer.payments.map((p) => `${money(p.total, p.currency)} ${p.status}`).join("; ")}
        </p>
      )}
      {paid && <p class="ok" role="status">{paid}</p>}
      <div class="actions">
        {can("APPROVE") && (
          <button type="button" class="primary" disabled={busy} onClick={approve}>
            Approve v{offer.version}
          </button>
        )}
        {can("PAY") && q && (
          <div class="pay">
            <label for={cardId}>Payment method</label>
            <select id={cardId} value={method} onChange={(e) => setMethod((e.target as HTMLSelectElement).value)}>
              {TEST_CARDS.map((c) => (
                <option value={c.method} key={c.method}>
                  {c.label}
                </option>
              ))}
            </select>
            <button type="button" class="primary" disabled={busy} onClick={pay}>
              Pay {money(q.total, q.currency)}
            </button>
          </div>
        )}
      </div>
      {(can("COUNTER") || can("ADD") || can("REJECT")) && (
        <div class="offer-chat">
          <label for={noteId}>Change the offer (posted in your pane for your agent)</label>
          <input id={noteId} value={note} onInput={(e) => setNote((e.target as HTMLInputElement).value)} />
          <div class="actions">
            {can("COUNTER") && (
              <button type="button" disabled={busy || !note.trim()} onClick={() => chat("CounterOffer", "counterOffer")}>
                Counter
              </button>
            )}
            {can("ADD") && (
              <button type="button" disabled={busy || !note.trim()} onClick={() => chat("AddToOffer", "addToOffer")}>
                Add
              </button>
            )}
            {can("REJECT") && (
              <button type="button" disabled={busy} onClick={() => chat("RejectOffer", "rejectOffer")}>
                Reject
              </button>
            )}
          </div>
        </div>
      )}
      {offer.agreement && (
        <details>
          <summary>Agreement draft{offer.agreement.current ? "" : " (being redrawn)"}</summary>
          <pre class="agreement">{offer.agreement.text}</pre>
        </details>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
