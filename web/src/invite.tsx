// /invite/<token>: a link someone was handed to join their side of a deal room. Signed out,
// the page asks to sign in or up first (main.tsx shows AuthView); signed in, it accepts the
// invitation and opens the room. A refusal is said by its reason (used, expired, other side).
import { useEffect, useRef, useState } from "preact/hooks";
import { gql } from "./gql";
import { navigate } from "./nav";
import { reasonText } from "./people";

export const INVITED = "You were invited to join a deal room. Sign in or sign up, and the room opens.";

export function AcceptInvite(props: { token: string }) {
  const [error, setError] = useState<string | null>(null);
  const started = useRef(false);

  useEffect(() => {
    // once: a second accept of the same link would answer INVITATION_USED to its own first
    if (started.current) return;
    started.current = true;
    gql<{ acceptInvitation: { id: string } }>("AcceptInvitation", { token: props.token })
      .then((data) => navigate(`/r/${data.acceptInvitation.id}`, true))
      .catch((e: unknown) => setError(reasonText(e)));
  }, [props.token]);

  if (!error) return <p class="boot">Joining the room…</p>;
  return (
    <main class="notfound">
      <h1>Cannot join this room</h1>
      <p role="alert">{error}</p>
      <p>
        <a href="/">Go to dealroom</a>
      </p>
    </main>
  );
}
