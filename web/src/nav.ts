// Client-side routes: the server serves the same page at /, /r/<roomId>, /z/<handle>,
// /z/<handle>/<roomId>, an invitation's /invite/<token>, and the operators' /ops, /ops/queue,
// /ops/rooms/<roomId> and /ops/prompts.
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { page: "host"; roomId: string | null }
  | { page: "visitor"; handle: string; roomId: string | null }
  | { page: "invite"; token: string }
  | { page: "ops"; view: "rooms" | "prompts" | "queue" }
  | { page: "ops"; view: "room"; roomId: string };

export function parse(path: string): Route {
  const visitor = path.match(/^\/z\/([^/]+)(?:\/([^/]+))?\/?$/);
  if (visitor) return { page: "visitor", handle: decodeURIComponent(visitor[1]), roomId: visitor[2] ?? null };
  const invite = path.match(/^\/invite\/([^/]+)\/?$/);
  if (invite) return { page: "invite", token: decodeURIComponent(invite[1]) };
  const ops = path.match(/^\/ops(?:\/(prompts|queue|rooms\/([^/]+)))?\/?$/);
  if (ops) {
    if (ops[2]) return { page: "ops", view: "room", roomId: decodeURIComponent(ops[2]) };
    return { page: "ops", view: ops[1] === "prompts" || ops[1] === "queue" ? ops[1] : "rooms" };
  }
  const room = path.match(/^\/r\/([^/]+)\/?$/);
  return { page: "host", roomId: room ? room[1] : null };
}

export function navigate(path: string, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  window.dispatchEvent(new Event("dealroom:navigate"));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parse(location.pathname));
    window.addEventListener("popstate", update);
    window.addEventListener("dealroom:navigate", update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener("dealroom:navigate", update);
    };
  }, []);
  return route;
}
