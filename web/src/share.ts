// The operators' pages are a second bundle (assets/ops.js, src/opsentry.ts), fetched only when
// a page under /ops opens, so hosts and visitors never download them. It brings no copy of
// preact or of the client's own modules: build.mjs points its imports of these at the
// instances exported here on window.dealroomShared. Only the names the ops modules use are
// shared (the rest of preact stays tree-shaken): an ops module that imports a new one needs
// it added below, or tests/browser/test_ops.py fails on the undefined name.
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Fragment, jsx, jsxs } from "preact/jsx-runtime";
import { addDocuments, forbidden, gql, newId } from "./gql";
import { navigate, type Route } from "./nav";
import { StageChip } from "./offer";
import type { OpsApp } from "./opsapp";
import { STAGE_LABEL, type Me } from "./types";

declare global {
  interface Window {
    dealroomShared: Record<string, unknown>;
    dealroomOps?: { OpsApp: typeof OpsApp };
  }
}

window.dealroomShared = {
  "preact/hooks": { useEffect, useState },
  "preact/jsx-runtime": { Fragment, jsx, jsxs },
  "./gql": { addDocuments, forbidden, gql, newId },
  "./nav": { navigate },
  "./offer": { StageChip },
  "./types": { STAGE_LABEL },
};

let loading: Promise<typeof OpsApp> | null = null;

function loadOps(): Promise<typeof OpsApp> {
  loading ??= new Promise((resolve, reject) => {
    const style = document.createElement("link");
    style.rel = "stylesheet";
    style.href = "/static/assets/ops.css";
    document.head.append(style);
    const script = document.createElement("script");
    script.src = "/static/assets/ops.js";
    script.onload = () => (window.dealroomOps ? resolve(window.dealroomOps.OpsApp) : reject(new Error("ops.js is empty")));
    script.onerror = () => {
      loading = null;
      reject(new Error("The ops pages could not be loaded. Check your connection and reload."));
    };
    document.head.append(script);
  });
  return loading;
}

export function OpsPages(props: { route: Extract<Route, { page: "ops" }>; me: Me }) {
  const [app, setApp] = useState<{ OpsApp: typeof OpsApp } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    loadOps().then((OpsApp) => setApp({ OpsApp }), (e: Error) => setError(e.message));
  }, []);
  if (error) return h("p", { class: "error", role: "alert" }, error);
  if (!app) return h("p", { class: "boot" }, "Loading the ops pages…");
  return h(app.OpsApp, props);
}
