// The guest gate (README "Guests become buyers"): when the room holds something it would send
// on a guest's behalf (Room.loginRequired, LoginRequiredChanged), or refuses a guest with
// FORBIDDEN + reason LOGIN_REQUIRED, the visitor signs up or in right here. signUp/signIn go
// same-origin with the guest cookie, so the server claims this room for the new account and
// replays what was held into the panes; the page never leaves the room.
import { useEffect, useRef, useState } from "preact/hooks";
import { gql } from "./gql";

interface Signed {
  account: { id: string; handle: string };
}

export function LoginGate(props: { heldEffects: number | null; onSignedIn: (handle: string) => void }) {
  const [mode, setMode] = useState<"up" | "in">("up");
  // The gate starts as one compact bar (its actions and the message box both on screen at
  // 390x844 and 1280x800); the form opens when the visitor picks an action.
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLElement>(null);

  // Bring the gate into view when it appears (the pane may have scrolled the page down).
  useEffect(() => ref.current?.scrollIntoView({ block: "nearest" }), []);

  async function submit(e: Event) {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const field = (name: string) => String(form.get(name) ?? "");
    setBusy(true);
    setError(null);
    try {
      const credentials = { email: field("email"), password: field("password") };
      const signed =
        mode === "in"
          ? (await gql<{ signIn: Signed }>("SignIn", { input: credentials })).signIn
          : (
              await gql<{ signUp: Signed }>("SignUp", {
                input: { ...credentials, handle: field("handle"), displayName: field("displayName") },
              })
            ).signUp;
      props.onSignedIn(signed.account.handle);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  const held = props.heldEffects ?? 0;
  return (
    <section class="gate" ref={ref} aria-labelledby="gate-h" data-gate="login">
      <div class="gate-bar">
        <div>
          <h2 id="gate-h">Sign in to continue</h2>
          <p role="status">
            The agent is waiting to share an update with you
            {held > 1 ? ` (${held} things are waiting)` : ""}. You stay in this room.
          </p>
        </div>
        <div class="tabs" role="tablist" aria-label="Account">
          <button
            role="tab"
            type="button"
            class={!open || mode === "up" ? "primary" : ""}
            aria-selected={open && mode === "up"}
            onClick={() => {
              setMode("up");
              setOpen(true);
            }}
          >
            Sign up
          </button>
          <button
            role="tab"
            type="button"
            aria-selected={open && mode === "in"}
            onClick={() => {
              setMode("in");
              setOpen(true);
            }}
          >
            Sign in
          </button>
        </div>
      </div>
      {open && (
        <form onSubmit={submit} aria-label={mode === "in" ? "Sign in to continue" : "Sign up to continue"}>
          <label>
            Email
            <input name="email" type="email" autoComplete="email" required />
          </label>
          <label>
            Password
            <input
              name="password"
              type="password"
              autoComplete={mode === "in" ? "current-password" : "new-password"}
              required
              minLength={8}
            />
          </label>
          {mode === "up" && (
            <>
              <label>
                Your name or brand
                <input name="displayName" required maxLength={80} autoComplete="organization" />
              </label>
              <label>
                Handle (letters, digits, - or _)
                <input name="handle" required pattern="[a-z0-9][a-z0-9_\-]{1,30}[a-z0-9]" autoCapitalize="off" />
              </label>
            </>
          )}
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" class="primary" disabled={busy}>
            {mode === "in" ? "Sign in and continue" : "Create account and continue"}
          </button>
        </form>
      )}
    </section>
  );
}
