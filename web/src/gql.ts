// The client's one way to send queries and mutations: POST /graphql on this origin. Auth rides
// in the HttpOnly cookies the server sets (dealroom_session on signUp/signIn, dealroom_guest on
// openVisitorRoom), so the page never holds a token. A mobile client would send
// `Authorization: Bearer <token>` / `X-Guest-Key` instead.
import documents from "./operations.graphql";

type Definition = { name: string; text: string; uses: string[] };

// Split operations.graphql (and ops.graphql, which the ops bundle adds) into its top-level definitions (brace-matched) and send each
// operation with only the fragments it reaches: the server counts tokens per document.
function parseDefinitions(source: string, defs = new Map<string, Definition>()): Map<string, Definition> {
  const text = source.replace(/#[^\n]*/g, "");
  const head = /\b(query|mutation|subscription|fragment)\s+(\w+)/g;
  let match: RegExpExecArray | null;
  while ((match = head.exec(text))) {
    let depth = 0;
    let end = text.indexOf("{", match.index);
    for (; end < text.length; end++) {
      if (text[end] === "{") depth++;
      else if (text[end] === "}" && --depth === 0) break;
    }
    const body = text.slice(match.index, end + 1);
    const uses = [...body.matchAll(/\.\.\.\s*(\w+)/g)].map((m) => m[1]).filter((n) => n !== "on");
    defs.set(match[2], { name: match[2], text: body, uses });
    head.lastIndex = end + 1;
  }
  return defs;
}

const DEFINITIONS = parseDefinitions(documents);

/** More documents (the ops bundle's ops.graphql); they may spread the fragments above. */
export function addDocuments(source: string) {
  parseDefinitions(source, DEFINITIONS);
}

export function documentFor(operation: string): string {
  const seen = new Set<string>();
  const order: string[] = [];
  const visit = (name: string) => {
    if (seen.has(name)) return;
    const def = DEFINITIONS.get(name);
    if (!def) throw new Error(`unknown GraphQL definition ${name}`);
    seen.add(name);
    order.push(def.text);
    def.uses.forEach(visit);
  };
  visit(operation);
  return order.join("\n");
}

export class GraphQLFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The guest gate's refusal: FORBIDDEN with extensions.reason LOGIN_REQUIRED (sign in, keep the text). */
export function needsLogin(e: unknown): boolean {
  return e instanceof GraphQLFailure && e.code === "FORBIDDEN" && e.extensions.reason === "LOGIN_REQUIRED";
}

/** An ops field refused: the signed-in account is not an operator. */
export function forbidden(e: unknown): boolean {
  return e instanceof GraphQLFailure && e.code === "FORBIDDEN";
}

export async function gql<T>(operation: string, variables: Record<string, unknown> = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch("/graphql", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: documentFor(operation), variables, operationName: operation }),
    });
  } catch {
    throw new GraphQLFailure("The server cannot be reached. Check your connection.", "NETWORK");
  }
  const result = (await response.json()) as {
    data?: T;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  };
  if (result.errors?.length) {
    const first = result.errors[0];
    const ext = first.extensions ?? {};
    throw new GraphQLFailure(first.message, String(ext.code ?? "INTERNAL"), ext);
  }
  return result.data as T;
}

export function newId(): string {
  return crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}
