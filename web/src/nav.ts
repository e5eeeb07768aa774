// Client-side routes: the server serves the same page at /, /r/<roomId>, /z/<handle> and
// /z/<handle>/<roomId>.
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { page: "host"; roomId: string | null }
  | { page: "visitor"; handle: string; roomId: string | null };

export function parse(path: string): Route {
  const visitor = path.match(/^\/z\/([^/]+)(?:\/([^/]+))?\/?$/);
  if (visitor) return { page: "visitor", handle: decodeURIComponent(visitor[1]), roomId: visitor[2] ?? null };
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
