// `make web`: bundles the web client and GraphiQL into dealroom/web/ (committed, so serving
// needs no Node.js). Both bundles are minified, hashed into no file name (the server sends
// them with a revalidating cache header), and self-contained: no CDN, no runtime import.
import { build } from "esbuild";
import { gzipSync } from "node:zlib";
import { readFileSync, statSync } from "node:fs";

const out = new URL("../dealroom/web/", import.meta.url).pathname;
const common = {
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  legalComments: "none",
  logLevel: "warning",
  define: { "process.env.NODE_ENV": '"production"' },
};

await build({
  ...common,
  entryPoints: { app: "src/main.tsx" },
  outdir: out + "assets",
  jsx: "automatic",
  jsxImportSource: "preact",
  loader: { ".graphql": "text" },
});

await build({
  ...common,
  entryPoints: { graphiql: "graphiql/main.tsx" },
  outdir: out + "graphiql",
  loader: { ".woff2": "file", ".woff": "file", ".ttf": "file", ".svg": "dataurl" },
  assetNames: "[name]",
});

for (const file of ["assets/app.js", "assets/app.css", "graphiql/graphiql.js", "graphiql/graphiql.css"]) {
  try {
    const body = readFileSync(out + file);
    const kib = (n) => (n / 1024).toFixed(1);
    console.log(`${file}: ${kib(statSync(out + file).size)} KiB, ${kib(gzipSync(body, { level: 9 }).length)} KiB gzip`);
  } catch {
    // app.css exists only when the client imports CSS
  }
}
