// GraphiQL served by the dealroom server itself: React, GraphiQL, its CSS and the graphql-ws
// client are bundled here from pinned npm versions, so the page needs no network but the
// server's own origin (HTTP for queries and mutations, its websocket for subscriptions).
import { createGraphiQLFetcher } from "@graphiql/toolkit";
import { GraphiQL } from "graphiql";
import "graphiql/style.css";
import { createClient } from "graphql-ws";
import { createElement } from "react";
import { createRoot } from "react-dom/client";

const url = new URL("/graphql", window.location.href);
const wsUrl = url.href.replace(/^http/, "ws");

const fetcher = createGraphiQLFetcher({
  url: url.href,
  wsClient: createClient({ url: wsUrl, lazy: true, retryAttempts: 3 }),
});

const root = document.getElementById("graphiql");
if (root) {
  createRoot(root).render(
    createElement(GraphiQL, { fetcher, defaultEditorToolsVisibility: true }),
  );
}
