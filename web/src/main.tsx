// dealroom's reference web client: the host app at / and /r/<roomId>, a visitor's room at
// /z/<handle>[/<roomId>], an invitation at /invite/<token>, the operators' pages at /ops. It
// speaks only the public GraphQL API (operations.graphql, ops.graphql).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./app.css";
import { AuthView } from "./auth";
import { gql } from "./gql";
import { HostApp } from "./host";
import { AcceptInvite, INVITED } from "./invite";
import { useRoute } from "./nav";
import { OpsPages } from "./share";
import type { Me } from "./types";
import { VisitorApp } from "./visitor";

function App() {
  const route = useRoute();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);

  async function loadMe() {
    try {
      setMe((await gql<{ me: Me | null }>("Me")).me);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  useEffect(() => {
    if (route.page !== "visitor") void loadMe();
  }, [route.page]);

  if (route.page === "visitor") return <VisitorApp handle={route.handle} roomId={route.roomId} />;
  if (error) return <p class="error" role="alert">{error}</p>;
  if (me === undefined) return <p class="boot">Loading…</p>;
  if (me === null) return <AuthView onSignedIn={loadMe} intro={route.page === "invite" ? INVITED : undefined} />;
  if (route.page === "invite") return <AcceptInvite token={route.token} />;
  if (route.page === "ops") return <OpsPages route={route} me={me} />;
  return <HostApp me={me} roomId={route.roomId} onSignedOut={() => setMe(null)} />;
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
