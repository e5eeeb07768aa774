// Real npm GraphQL clients against a live dealroom server, as a client developer sets them up:
// `node clients.mjs apollo|urql http://127.0.0.1:PORT/graphql`.
//
// Each signs up (a mutation), reads `me` twice (a query), subscribes to its home room's pane
// over graphql-ws with connectionParams {authorization}, posts a message (a mutation) and waits
// for it on the subscription. Automatic persisted queries are on for queries and mutations.
// Every HTTP request is recorded (hash only or with the document, status, error codes) so the
// Python test can check the protocol ran as it should. Prints one JSON object.
import { createHash, randomUUID } from "node:crypto";
import { createClient as createWsClient } from "graphql-ws";
import WebSocket from "ws";

const [kind, url] = process.argv.slice(2);
const wsUrl = url.replace(/^http/, "ws");
const sha256 = (text) => createHash("sha256").update(text).digest("hex");
const handle = `${kind}${randomUUID().slice(0, 8)}`;
const requests = [];

async function recordingFetch(input, init = {}) {
  const method = (init.method || "GET").toUpperCase();
  let payload = {};
  if (method === "POST") payload = JSON.parse(init.body);
  else {
    const params = new URL(typeof input === "string" ? input : input.url).searchParams;
    payload = { query: params.get("query"), extensions: JSON.parse(params.get("extensions") || "{}") };
  }
  const response = await fetch(input, init);
  const body = await response.clone().json().catch(() => null);
  requests.push({
    method,
    accept: new Headers(init.headers).get("accept"),
    operation: payload.operationName || null,
    hashOnly: !payload.query && Boolean(payload.extensions?.persistedQuery),
    withHash: Boolean(payload.extensions?.persistedQuery),
    status: response.status,
    contentType: response.headers.get("content-type"),
    codes: (body?.errors || []).map((error) => error.extensions?.code),
  });
  return response;
}

const SIGN_UP = `mutation SignUp($input: SignUpInput!) {
  signUp(input: $input) { token account { handle homeRoom { id } } }
}`;
const ME = `query Me { me { handle } }`;
const POST = `mutation Post($input: PostMessageInput!) { postMessage(input: $input) { body } }`;
const EVENTS = `subscription Events($roomId: ID!) {
  paneEvents(roomId: $roomId, seat: HOST) { __typename ... on MessageAdded { cursor message { body } } }
}`;
const signUpInput = {
  email: `${handle}@example.com`,
  password: "correct horse battery",
  handle,
  displayName: `The ${kind} client`,
};

function wsClient(token) {
  return createWsClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
}

function withTimeout(promise, what, ms = 20000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function apollo() {
  const { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } = await import("@apollo/client");
  const { PersistedQueryLink } = await import("@apollo/client/link/persisted-queries");
  const { GraphQLWsLink } = await import("@apollo/client/link/subscriptions");
  const { getMainDefinition } = await import("@apollo/client/utilities");
  let token = null;
  const auth = new ApolloLink((operation, forward) => {
    if (token) operation.setContext({ headers: { authorization: `Bearer ${token}` } });
    return forward(operation);
  });
  const http = ApolloLink.from([
    new PersistedQueryLink({ sha256 }),
    auth,
    new HttpLink({ uri: url, fetch: recordingFetch }),
  ]);
  let ws = null;
  const link = ApolloLink.split(
    ({ query }) => getMainDefinition(query).operation === "subscription",
    new ApolloLink((operation) => ws.request(operation)),
    http,
  );
  const client = new ApolloClient({
    link,
    cache: new InMemoryCache(),
    clientAwareness: { name: "dealroom-conformance", version: "1" },
  });
  const signed = await client.mutate({ mutation: gql(SIGN_UP), variables: { input: signUpInput } });
  token = signed.data.signUp.token;
  const roomId = signed.data.signUp.account.homeRoom.id;
  const me = [];
  for (let i = 0; i < 2; i++) {
    const result = await client.query({ query: gql(ME), fetchPolicy: "network-only" });
    me.push(result.data.me.handle);
  }
  const socket = wsClient(token);
  ws = new GraphQLWsLink(socket);
  const body = `hello from ${kind}`;
  const event = new Promise((resolve, reject) => {
    const subscription = client.subscribe({ query: gql(EVENTS), variables: { roomId } }).subscribe({
      next: (result) => {
        if (result.error) reject(result.error);
        const got = result.data?.paneEvents;
        if (got?.__typename === "MessageAdded" && got.message.body === body) {
          subscription.unsubscribe();
          resolve(got.message.body);
        }
      },
      error: reject,
    });
  });
  // The subscribe is sent once the socket is acknowledged; a post before that would be missed
  // by a subscription without `after`, so wait for the acknowledgement first.
  await withTimeout(new Promise((resolve) => socket.on("connected", resolve)), "connection_ack");
  await new Promise((resolve) => setTimeout(resolve, 300));
  await client.mutate({
    mutation: gql(POST),
    variables: { input: { roomId, body, clientMessageId: randomUUID() } },
  });
  const received = await withTimeout(event, "the posted message on the subscription");
  await socket.dispose();
  return { me, received };
}

async function urql() {
  const { Client, fetchExchange, subscriptionExchange } = await import("@urql/core");
  const { persistedExchange } = await import("@urql/exchange-persisted");
  let token = null;
  let socket = null;
  const client = new Client({
    url,
    fetch: recordingFetch,
    fetchOptions: () => (token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    requestPolicy: "network-only",
    exchanges: [
      persistedExchange({ generateHash: async (query) => sha256(query), enableForMutation: true }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || "" };
          return {
            subscribe(sink) {
              return { unsubscribe: socket.subscribe(input, sink) };
            },
          };
        },
      }),
    ],
  });
  const signed = await client.mutation(SIGN_UP, { input: signUpInput }).toPromise();
  if (signed.error) throw signed.error;
  token = signed.data.signUp.token;
  const roomId = signed.data.signUp.account.homeRoom.id;
  const me = [];
  for (let i = 0; i < 2; i++) {
    const result = await client.query(ME, {}).toPromise();
    if (result.error) throw result.error;
    me.push(result.data.me.handle);
  }
  socket = wsClient(token);
  const body = `hello from ${kind}`;
  const event = new Promise((resolve, reject) => {
    const { unsubscribe } = client.subscription(EVENTS, { roomId }).subscribe((result) => {
      if (result.error) reject(result.error);
      const got = result.data?.paneEvents;
      if (got?.__typename === "MessageAdded" && got.message.body === body) {
        unsubscribe();
        resolve(got.message.body);
      }
    });
  });
  await withTimeout(new Promise((resolve) => socket.on("connected", resolve)), "connection_ack");
  await new Promise((resolve) => setTimeout(resolve, 300));
  const posted = await client
    .mutation(POST, { input: { roomId, body, clientMessageId: randomUUID() } })
    .toPromise();
  if (posted.error) throw posted.error;
  const received = await withTimeout(event, "the posted message on the subscription");
  await socket.dispose();
  return { me, received };
}

try {
  const result = await (kind === "apollo" ? apollo() : urql());
  console.log(JSON.stringify({ kind, handle, ...result, requests }));
  process.exit(0);
} catch (error) {
  console.log(JSON.stringify({ kind, handle, error: String(error?.stack || error), requests }));
  process.exit(1);
}
