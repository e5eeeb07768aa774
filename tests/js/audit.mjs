// The GraphQL-over-HTTP specification's own audit suite (graphql-http's auditServer) against a
// live server: `node audit.mjs http://127.0.0.1:PORT/graphql`. Prints one JSON line per audit
// ({id, name, status, reason}); the Python test decides what must pass.
import { auditServer } from "graphql-http";

const url = process.argv[2];
const results = await auditServer({ url });
for (const result of results) {
  const line = { id: result.id, name: result.name, status: result.status };
  if (result.status !== "ok") {
    line.reason = result.reason;
    try {
      line.response = { status: result.response.status, body: await result.response.text() };
    } catch {
      // the body was read by the audit already
    }
  }
  console.log(JSON.stringify(line));
}
