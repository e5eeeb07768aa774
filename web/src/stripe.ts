// Stripe.js, loaded only when the server runs the Stripe provider, from the URL the server names
// (paymentSetup.stripeJsUrl: Stripe's own, or a local stand-in in tests). Only the calls the offer
// card makes are typed here.
import { gql } from "./gql";

export interface PaymentSetup {
  provider: string;
  publishableKey: string | null;
  stripeJsUrl: string | null;
}

export interface CardElement {
  mount(target: HTMLElement): void;
  destroy(): void;
}

export interface StripeError {
  message?: string;
  code?: string;
}

export interface StripeClient {
  elements(): { create(type: "card", options?: Record<string, unknown>): CardElement };
  confirmCardPayment(
    clientSecret: string,
    data: { payment_method: { card: CardElement } },
  ): Promise<{ error?: StripeError | null; paymentIntent?: { id: string; status: string } }>;
}

declare global {
  interface Window {
    Stripe?: (publishableKey: string) => StripeClient;
  }
}

let setup: Promise<PaymentSetup> | null = null;
const scripts = new Map<string, Promise<void>>();
const clients = new Map<string, StripeClient>();

/** How this server takes payments (read once per page). */
export function paymentSetup(): Promise<PaymentSetup> {
  setup ??= gql<{ paymentSetup: PaymentSetup }>("PaymentSetup").then((d) => d.paymentSetup);
  setup.catch(() => (setup = null)); // a failed read is retried by the next card
  return setup;
}

function loadScript(url: string): Promise<void> {
  let loading = scripts.get(url);
  if (!loading) {
    loading = new Promise<void>((resolve, reject) => {
      const script = document.createElement("script");
      script.src = url;
      script.onload = () => resolve();
      script.onerror = () => {
        scripts.delete(url);
        reject(new Error("Stripe.js could not be loaded; try again."));
      };
      document.head.appendChild(script);
    });
    scripts.set(url, loading);
  }
  return loading;
}

/** One Stripe.js instance per publishable key (Elements belong to the instance that made them). */
export async function stripeFor(url: string, publishableKey: string): Promise<StripeClient> {
  await loadScript(url);
  let client = clients.get(publishableKey);
  if (!client) {
    if (!window.Stripe) throw new Error("Stripe.js did not load.");
    client = window.Stripe(publishableKey);
    clients.set(publishableKey, client);
  }
  return client;
}
