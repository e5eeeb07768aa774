// Live streams over graphql-transport-ws (the `graphql-ws` client), with resume by cursor.
//
// The reference flow for any client: keep the cursor of the last *stored* event you showed
// (MessageAdded, SystemLine, StageChanged, LoginRequiredChanged; typing and deltas are not
// stored). When the connection drops, subscribe again with `after: <that cursor>`: the server
// replays what was stored meanwhile from the database, then goes live — no gap, no duplicate.
// The client library's own retry would resend the *first* subscribe (with the old `after`), so
// it is off (`retryAttempts: 0`) and each stream reconnects itself with its newest cursor.
import { createClient, type Client } from "graphql-ws";
import { documentFor } from "./gql";

export type Connection = "live" | "reconnecting";

let client: Client | null = null;
const watchers = new Set<(state: Connection) => void>();
let state: Connection = "live";

function setState(next: Connection) {
  if (next === state) return;
  state = next;
  watchers.forEach((watch) => watch(next));
}

export function watchConnection(watch: (state: Connection) => void): () => void {
  watchers.add(watch);
  return () => watchers.delete(watch);
}

function ws(): Client {
  if (!client) {
    client = createClient({
      url: `${location.origin.replace(/^http/, "ws")}/graphql`,
      lazy: true,
      retryAttempts: 0,
      keepAlive: 10_000,
      on: {
        connected: () => setState("live"),
        closed: () => {
          if (active > 0) setState("reconnecting");
        },
      },
    });
  }
  return client;
}

let active = 0;

/**
 * Reopen the socket, every stream resuming after its cursor. A websocket carries the cookies it
 * was opened with: after signing in from the gate the room belongs to the new account, and the
 * guest key the old socket carries no longer reaches it (a claimed room refuses the old key).
 */
export function reconnect() {
  const old = client;
  client = null;
  old?.terminate();
  // Every stream resubscribes at once on the new socket, even one the old socket's credentials
  // had just been refused (a claim's re-check can end the old stream before this runs).
  restarts.forEach((restart) => restart());
}

const restarts = new Set<() => void>();

export interface Stream<E> {
  operation: string;
  variables: Record<string, unknown>;
  /** Resume after this cursor (the last stored event already shown); null: start live. */
  after: string | null;
  /** The cursor to resume after once this event is shown; null for events not stored. */
  cursorOf: (event: E) => string | null;
  onEvent: (event: E) => void;
  /** A GraphQL error from the server (not a dropped connection): the stream stops. */
  onError?: (message: string, code: string) => void;
}

export interface Following {
  stop: () => void;
  /**
   * A stream started live (nothing stored was seen yet: an empty pane) cannot know whether
   * it was registered on the server before an event was stored. When the reader learns a
   * stored cursor another way (postMessage returns the message with its cursor), the
   * stream restarts from it, so what followed is replayed instead of lost.
   */
  catchUp: (cursor: string) => void;
}

/** Follow a subscription until `stop()`. */
export function follow<E>(stream: Stream<E>): Following {
  let cursor = stream.after;
  let stopped = false;
  let attempt = 0;
  let timer: number | undefined;
  let unsubscribe: (() => void) | null = null;
  active++;

  // `after` is the server's own retry hint (UNAVAILABLE's retryAfterSeconds, in ms): a
  // process refusing a subscribe burst says when to come back, and a client that retried at
  // once would only queue again.
  const retry = (after?: number) => {
    unsubscribe = null;
    if (stopped) return;
    setState("reconnecting");
    const delay = after ?? Math.min(5000, 200 * 2 ** attempt++);
    timer = window.setTimeout(start, delay);
  };

  let generation = 0;

  function start() {
    if (stopped) return;
    const mine = ++generation; // callbacks of a replaced subscription are ignored
    const current = () => !stopped && mine === generation;
    let comeBackIn: number | undefined; // set by an UNAVAILABLE refusal
    let refused = false; // a GraphQL error that resubscribing would not mend
    unsubscribe = ws().subscribe<Record<string, E>>(
      {
        query: documentFor(stream.operation),
        operationName: stream.operation,
        variables: { ...stream.variables, after: cursor },
      },
      {
        next: (result) => {
          if (!current()) return;
          const event = result.data ? Object.values(result.data)[0] : undefined;
          if (!event && result.errors?.length) {
            // A subscription refused at its start arrives as a result with errors, then
            // `complete`.
            const first = result.errors[0] as {
              message?: string;
              extensions?: { code?: string; retryAfterSeconds?: number };
            };
            const code = first.extensions?.code ?? "INTERNAL";
            if (code === "UNAVAILABLE") {
              comeBackIn = (first.extensions?.retryAfterSeconds ?? 1) * 1000;
            } else {
              refused = true;
              stream.onError?.(first.message ?? "error", code);
            }
            return;
          }
          attempt = 0;
          setState("live");
          if (!event) return;
          const next = stream.cursorOf(event);
          if (next) cursor = next;
          stream.onEvent(event);
        },
        error: (error: unknown) => {
          if (!current()) return;
          if (Array.isArray(error)) {
            // GraphQL errors (FORBIDDEN, NOT_FOUND...): resubscribing would not help.
            const first = error[0] as { message?: string; extensions?: { code?: string } };
            stream.onError?.(first?.message ?? "error", first?.extensions?.code ?? "INTERNAL");
            return;
          }
          retry(); // the socket closed or could not open: resume after `cursor`
        },
        complete: () => {
          if (current() && !refused) retry(comeBackIn);
        },
      },
    );
  }

  const restart = () => {
    if (stopped) return;
    window.clearTimeout(timer);
    const previous = unsubscribe;
    start(); // a new generation: whatever the old socket still says is ignored
    previous?.();
  };
  restarts.add(restart);

  start();
  return {
    stop: () => {
      if (stopped) return;
      stopped = true;
      active--;
      restarts.delete(restart);
      window.clearTimeout(timer);
      unsubscribe?.();
    },
    catchUp: (known: string) => {
      if (stopped || cursor !== null) return;
      cursor = known;
      window.clearTimeout(timer);
      const previous = unsubscribe;
      start(); // a new generation: the old subscription's complete() is ignored
      previous?.();
    },
  };
}
