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

// The operators' pages, loaded only under /ops (src/share.ts). Preact and the client's shared
// modules come from the app bundle's instances (window.dealroomShared), never a second copy:
// two preacts would not share hooks, and gql.ts keeps the one document table.
const SHARED = /^(preact|preact\/hooks|preact\/jsx-runtime|\.\/gql|\.\/nav|\.\/offer|\.\/types)$/;
const fromApp = {
  name: "from-app",
  setup(b) {
    b.onResolve({ filter: SHARED }, (args) => ({ path: args.path, namespace: "from-app" }));
    b.onLoad({ filter: /.*/, namespace: "from-app" }, (args) => ({
      contents: `module.exports = window.dealroomShared[${JSON.stringify(args.path)}];`,
      loader: "js",
    }));
  },
};

await build({
  ...common,
  entryPoints: { ops: "src/opsentry.ts" },
  outdir: out + "assets",
  jsx: "automatic",
  jsxImportSource: "preact",
  loader: { ".graphql": "text" },
  plugins: [fromApp],
});

await build({
  ...common,
  entryPoints: { graphiql: "graphiql/main.tsx" },
  outdir: out + "graphiql",
  loader: { ".woff2": "file", ".woff": "file", ".ttf": "file", ".svg": "dataurl" },
  assetNames: "[name]",
});

for (const file of ["assets/app.js", "assets/app.css", "assets/ops.js", "assets/ops.css", "graphiql/graphiql.js", "graphiql/graphiql.css"]) {
  try {
    const body = readFileSync(out + file);
    const kib = (n) => (n / 1024).toFixed(1);
    console.log(`${file}: ${kib(statSync(out + file).size)} KiB, ${kib(gzipSync(body, { level: 9 }).length)} KiB gzip`);
  } catch {
    // app.css exists only when the client imports CSS
  }
}
