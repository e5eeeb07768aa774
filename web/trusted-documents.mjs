// `make web` (after the bundles): lists every GraphQL document the web client can send, each as
// gql.ts composes it (the operation and the fragments it reaches), in Apollo's persisted-query
// manifest format, to dealroom/web/trusted-documents.json. A deployment that serves only this
// client sets DEALROOM_TRUSTED_DOCUMENTS to that file and runs nothing else. `--stdout` prints
// it instead (the test suite compares the two).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

const src = new URL("src/", import.meta.url).pathname;
const sources = ["operations.graphql", "ops.graphql"].map((name) => readFileSync(src + name, "utf8"));

// gql.ts itself, bundled for Node, so the documents are the ones the client builds. ESBUILD
// names another copy of esbuild (the test suite's, in tests/js) when web/ has no node_modules.
const esbuild = await import(process.env.ESBUILD || "esbuild");
const bundled = await (esbuild.build || esbuild.default.build)({
  stdin: {
    contents: `export { documentFor, addDocuments } from "./gql";`,
    resolveDir: src,
    loader: "ts",
  },
  bundle: true,
  write: false,
  format: "esm",
  platform: "node",
  loader: { ".graphql": "text" },
  logLevel: "warning",
});
const module = await import(
  "data:text/javascript;base64," + Buffer.from(bundled.outputFiles[0].text).toString("base64")
);
module.addDocuments(sources[1]);

const operations = [];
for (const source of sources) {
  for (const match of source.replace(/#[^\n]*/g, "").matchAll(/\b(query|mutation|subscription)\s+(\w+)/g)) {
    const body = module.documentFor(match[2]);
    const id = createHash("sha256").update(body).digest("hex");
    operations.push({ id, name: match[2], type: match[1], body });
  }
}
operations.sort((a, b) => a.name.localeCompare(b.name));
const manifest = JSON.stringify({ format: "apollo-persisted-query-manifest", version: 1, operations }, null, 1) + "\n";
if (process.argv.includes("--stdout")) process.stdout.write(manifest);
else writeFileSync(new URL("../dealroom/web/trusted-documents.json", import.meta.url), manifest);
