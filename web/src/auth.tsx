// Sign in / sign up. The server sets the session as an HttpOnly cookie.
import { useState } from "preact/hooks";
import { gql } from "./gql";

export function AuthView(props: { onSignedIn: () => void; intro?: string }) {
  const [mode, setMode] = useState<"in" | "up">("in");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const field = (name: string) => String(form.get(name) ?? "");
    setBusy(true);
    setError(null);
    try {
      if (mode === "in") {
        await gql("SignIn", { input: { email: field("email"), password: field("password") } });
      } else {
        await gql("SignUp", {
          input: {
            email: field("email"),
            password: field("password"),
            handle: field("handle"),
            displayName: field("displayName"),
          },
        });
      }
      props.onSignedIn();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="auth">
      <h1>dealroom</h1>
      <p class="muted">{props.intro ?? "Your agent negotiates in your deal rooms; you approve the bookings."}</p>
      <div class="tabs" role="tablist" aria-label="Account">
        <button role="tab" type="button" aria-selected={mode === "in"} onClick={() => setMode("in")}>
          Sign in
        </button>
        <button role="tab" type="button" aria-selected={mode === "up"} onClick={() => setMode("up")}>
          Sign up
        </button>
      </div>
      <form onSubmit={submit} aria-label={mode === "in" ? "Sign in" : "Sign up"}>
        <label>
          Email
          <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete={mode === "in" ? "current-password" : "new-password"} required minLength={8} />
        </label>
        {mode === "up" && (
          <>
            <label>
              Handle (your link is /z/&lt;handle&gt;)
              <input name="handle" required pattern="[a-z0-9][a-z0-9_\-]{1,30}[a-z0-9]" autoCapitalize="off" />
            </label>
            <label>
              Display name
              <input name="displayName" required maxLength={80} />
            </label>
          </>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {mode === "in" ? "Sign in" : "Create account"}
        </button>
      </form>
      <p class="muted small">
        Developers: the whole API is in <a href="/graphql">GraphiQL</a>.
      </p>
    </main>
  );
}
