// The written offer, as the reader sees it: terms, what paying costs, its stage (live over
// offerStage), and the buttons the server says this reader may press now (viewerActions).
import { useEffect, useRef, useState } from "preact/hooks";
import { gql, needsLogin, newId } from "./gql";
import { follow } from "./live";
import { paymentSetup, stripeFor, type CardElement, type PaymentSetup } from "./stripe";
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

/** Stages before the payment went in: the card's quote is still to be paid. */
const UNPAID: Stage[] = ["NO_WRITTEN_OFFER", "WRITTEN_AWAITING_BRAND", "BRAND_ACKED_AWAITING_TALENT", "BOOKED_AWAITING_PAYMENT"];

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
  const [setup, setSetup] = useState<PaymentSetup | null>(null);
  // Stripe: the Pay button's payOffer + confirmCardPayment is under way (the card form stays
  // mounted through it), then submitted: processing until Stripe's webhook moves the stage.
  const [confirming, setConfirming] = useState(false);
  const [submitted, setSubmitted] = useState(false);
  const cardBox = useRef<HTMLDivElement>(null);
  const cardElement = useRef<CardElement | null>(null);
  const latest = useRef(props);
  latest.current = props;
  const showPay = (offer.viewerActions.includes("PAY") && offer.payment !== null) || confirming;
  const stripe = setup?.provider === "stripe" ? setup : null;

  // How the server takes payments, read when there is something to pay.
  useEffect(() => {
    if (!showPay || setup) return;
    paymentSetup().then(setSetup, (e) => setError(e instanceof Error ? e.message : String(e)));
  }, [showPay, setup]);

  // With Stripe, the card is typed into an Elements card element, mounted while Pay shows.
  useEffect(() => {
    if (!showPay || !stripe || !cardBox.current) return;
    const box = cardBox.current;
    let element: CardElement | null = null;
    let gone = false;
    stripeFor(stripe.stripeJsUrl ?? "", stripe.publishableKey ?? "").then(
      (client) => {
        if (gone) return;
        element = client.elements().create("card");
        element.mount(box);
        cardElement.current = element;
      },
      (e) => setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      gone = true;
      element?.destroy();
      cardElement.current = null;
    };
  }, [showPay, stripe?.publishableKey, stripe?.stripeJsUrl]);

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
        const data = await gql<{ payOffer: { offer: Offer } }>("PayOffer", {
          offerId: offer.id,
          paymentMethod: method,
          idempotencyKey: payKey,
        });
        return data.payOffer.offer;
      } finally {
        setPayKey(newId()); // the next attempt (another card) is a new payment
      }
    });

  // Stripe: payOffer starts a PaymentIntent; the browser confirms it with the card element.
  // The stage moves on Stripe's webhook, so afterwards the card only says it is processing.
  const payWithStripe = (setupNow: PaymentSetup) =>
    run(async () => {
      const element = cardElement.current;
      if (!element) throw new Error("The card form is still loading; try again.");
      setConfirming(true);
      try {
        const data = await gql<{
          payOffer: { offer: Offer; clientSecret: string | null; publishableKey: string | null };
        }>("PayOffer", { offerId: offer.id, paymentMethod: "stripe", idempotencyKey: payKey });
        const { clientSecret, publishableKey } = data.payOffer;
        if (!clientSecret || !publishableKey) throw new Error("The server did not start a card payment.");
        const client = await stripeFor(setupNow.stripeJsUrl ?? "", publishableKey);
        const result = await client.confirmCardPayment(clientSecret, { payment_method: { card: element } });
        if (result.error) throw new Error(result.error.message ?? "The card was not accepted.");
        setSubmitted(true);
        // Re-read rather than return payOffer's offer: the webhook may already have moved it.
        return (await gql<{ offer: Offer }>("Offer", { id: offer.id })).offer;
      } finally {
        setConfirming(false);
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
  // The labels the agents name the buttons by: one source, read from the server.
  const label = (action: OfferAction) => offer.viewerButtons.find((b) => b.action === action)?.label ?? action;
  const due = UNPAID.includes(offer.stage);
  const captured = offer.payments.filter((p) => p.status === "captured");
  const pending = offer.payments.filter((p) => p.status !== "captured");
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
        <dd data-money="fee">{t.fee ? t.fee.display : "not settled"}</dd>
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
        {q && due && (
          <>
            <dt>{offer.stage === "BOOKED_AWAITING_PAYMENT" ? "Due now" : "Due at booking"}</dt>
            <dd>
              <span data-money="due">{q.dueDisplay}</span>
              {q.duePercent !== "100" && ` (${q.duePercent}% of the fee)`} + platform fee{" "}
              <span data-money="platform-fee">{q.platformFeeDisplay}</span> ={" "}
              <strong data-money="total">{q.totalDisplay}</strong>
            </dd>
          </>
        )}
        {captured.length > 0 && (
          <>
            <dt>Paid</dt>
            <dd data-money="paid">{captured.map((p) => p.totalDisplay).join(" + ")}</dd>
          </>
        )}
      </dl>
      {t.openQuestions.length > 0 && (
        <p class="muted">Open questions: {t.openQuestions.join("; ")}</p>
      )}
      {submitted && offer.stage === "PENDING_PAY_CAPTURE" && (
        <p class="muted" role="status" data-payment="processing">
          Payment processing: the card is confirmed, waiting for Stripe to hold the funds.
        </p>
      )}
      {pending.length > 0 && (
        <p class="muted" role="status">
          Payment of {pending.map((p) => p.totalDisplay).join(" + ")} is being captured.
        </p>
      )}
      <div class="actions">
        {can("APPROVE") && (
          <button type="button" class="primary" disabled={busy} onClick={approve}>
            {label("APPROVE")}
          </button>
        )}
        {showPay && stripe && (
          <div class="pay">
            <span id={`${cardId}-label`}>Card</span>
            <div role="group" aria-labelledby={`${cardId}-label`} class="stripe-card" ref={cardBox} data-stripe-card />
            <button type="button" class="primary" disabled={busy} onClick={() => payWithStripe(stripe)}>
              {label("PAY")}
            </button>
          </div>
        )}
        {showPay && !stripe && q && (
          <div class="pay">
            <label for={cardId}>Payment method</label>
            <select id={cardId} value={method} onChange={(e) => setMethod((e.target as HTMLSelectElement).value)}>
              {TEST_CARDS.map((c) => (
                <option value={c.method} key={c.method}>
                  {c.label}
                </option>
              ))}
            </select>
            <button type="button" class="primary" disabled={busy || !setup} onClick={pay}>
              {label("PAY")}
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
                {label("COUNTER")}
              </button>
            )}
            {can("ADD") && (
              <button type="button" disabled={busy || !note.trim()} onClick={() => chat("AddToOffer", "addToOffer")}>
                {label("ADD")}
              </button>
            )}
            {can("REJECT") && (
              <button type="button" disabled={busy} onClick={() => chat("RejectOffer", "rejectOffer")}>
                {label("REJECT")}
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
