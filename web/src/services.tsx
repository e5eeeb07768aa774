// The host's services: what it offers, each with its own link /z/<handle>/<key>. A room opened
// from a service's link reads the host's standing knowledge for that service only.
import { useEffect, useState } from "preact/hooks";
import { GraphQLFailure, gql } from "./gql";

interface OfferedService {
  key: string;
  name: string;
}

export function Services(props: { handle: string }) {
  const [services, setServices] = useState<OfferedService[] | null>(null);
  const [draft, setDraft] = useState("");
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    gql<{ me: { services: OfferedService[] } | null }>("MyServices")
      .then((data) => {
        const list = data.me ? data.me.services : [];
        setServices(list);
        setDraft(list.map((s) => s.name).join(", "));
      })
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, [props.handle]);

  async function save(e: Event) {
    e.preventDefault();
    const names = draft
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n.length > 0);
    try {
      const data = await gql<{ setServices: OfferedService[] }>("SetServices", { names });
      setServices(data.setServices);
      setError(null);
    } catch (err) {
      setError(err instanceof GraphQLFailure || err instanceof Error ? err.message : String(err));
    }
  }

  return (
    <form class="services" onSubmit={save}>
      <label class="muted small">
        Your services (comma-separated)
        <input value={draft} onInput={(e) => setDraft((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" class="link small">
        Save services
      </button>
      {error && (
        <p role="alert" class="small">
          {error}
        </p>
      )}
      {services && services.length > 0 && (
        <ul class="small">
          {services.map((s) => (
            <li key={s.key}>
              {s.name}: <a href={`/z/${props.handle}/${s.key}`}>/z/{props.handle}/{s.key}</a>
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
