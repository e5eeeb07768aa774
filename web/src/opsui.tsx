// Small parts the ops pages share: an in-app link, and how an ops read fails.
import type { ComponentChildren } from "preact";
import { forbidden } from "./gql";
import { navigate } from "./nav";

export function Link(props: { href: string; current?: boolean; children: ComponentChildren }) {
  return (
    <a
      href={props.href}
      aria-current={props.current ? "page" : undefined}
      onClick={(e) => {
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

/** What a signed-in account that is not an operator sees at /ops. */
export function OperatorsOnly() {
  return (
    <section class="forbidden" role="alert" aria-labelledby="ops-forbidden">
      <h1 id="ops-forbidden">Operators only</h1>
      <p>These pages are for dealroom operators. Your account is not an operator.</p>
      <p>
        <a href="/">Back to your rooms</a>
      </p>
    </section>
  );
}

/** A failed ops read: FORBIDDEN is "operators only", anything else its message. */
export function OpsError(props: { error: unknown }) {
  if (forbidden(props.error)) return <OperatorsOnly />;
  const message = props.error instanceof Error ? props.error.message : String(props.error);
  return <p class="error" role="alert">{message}</p>;
}
