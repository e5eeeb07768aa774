"""Web client benchmark: bundle sizes, page load to the first agent line on the demo, and the
server's memory with 100 open browser tabs' subscriptions.

Method. (1) Bundle sizes: the built files in ``dealroom/web`` (what the server sends), raw and
gzip -9. (2) The server is ``dealroom serve`` in a subprocess on a fresh embedded database in
a temporary directory (SQLite, in-process broker, offline engine), which seeds the demo host
as on a first run. Headless Chromium (Debian's /usr/bin/chromium, driven by Playwright; every
request off loopback is aborted) opens ``/z/maya`` in a fresh context (a new guest, so a new
room) ``--loads`` times. In the page, times are ``performance.now()`` (ms since navigation
start): DOMContentLoaded and load from the navigation entry, "composer ready" when the message
box can be typed in, "greeting shown" when the host's agent's welcome (stored with the new
room, so part of the pane's first read) is in the pane; then the brand sends the offline
engine's opening line at once (Enter) and a MutationObserver records when the reply's draft
(AgentTyping / MessageDelta) and the stored reply (MessageAdded: an agent line beyond those
shown at send) first appear in the pane. (3) 100 tabs: ten contexts (ten guests) each chat to
a written offer in one tab — the opening line and the bid as a guest (the note to the host is
held and the login gate comes up), sign up in the gate, agree — then open nine more tabs on
the same room (``/z/maya/<roomId>``). Every tab holds one websocket with two subscriptions
(paneEvents on its pane, offerStage on the offer). The server's RSS (psutil) is read before
the tabs, with all 100 open and subscribed (and after a settle), and after every tab is
closed; established TCP connections on the server's port are counted. Nothing here asserts;
it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from _client import ROOT, ServerProcess, free_port, machine_summary, remove_tree
from playwright.async_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    Route,
    async_playwright,
)

WEB = ROOT / "dealroom" / "web"
BUNDLES = [
    "assets/app.js",
    "assets/app.css",
    "assets/ops.js",  # the operators' pages: loaded only under /ops
    "assets/ops.css",
    "graphiql/graphiql.js",
    "graphiql/graphiql.css",
]
OPENING = "Hi, we'd like a sponsored post on 15 March 2027, 50% upfront"
LINES = [OPENING, "We can pay $7,000", "Yes, that works"]
AGENT_LINE = ".pane.own .msg.agent[data-message-id]"
"""A stored agent line (the draft being streamed is a ``.msg.agent`` too, without an id)."""

WATCH = """before => new Promise(resolve => {
  // The pane may already hold agent lines (the host's agent greets a new room's visitor):
  // what counts is the first agent line after the ``before`` already shown at send time.
  const seen = {};
  const check = () => {
    const pane = document.querySelector('.pane.own');
    if (!pane) return;
    if (!seen.draft && pane.querySelector('[data-draft-id]')) seen.draft = performance.now();
    if (!seen.line && pane.querySelectorAll('.msg.agent[data-message-id]').length > before) {
      seen.line = performance.now();
      if (!seen.draft) seen.draft = seen.line;
      observer.disconnect();
      resolve(seen);
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(document.body, {subtree: true, childList: true});
  check();
})"""

NAVIGATION = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return {dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, now: performance.now()};
}"""


def bundle_sizes() -> list[dict[str, Any]]:
    rows = []
    for name in BUNDLES:
        body = (WEB / name).read_bytes()
        rows.append({"file": name, "bytes": len(body), "gzip": len(gzip.compress(body, 9))})
    return rows


async def offline_only(route: Route) -> None:
    if urlparse(route.request.url).hostname in {"127.0.0.1", "localhost"}:
        await route.continue_()
    else:
        await route.abort("internetdisconnected")


async def new_context(browser: Browser, phone: bool = True) -> BrowserContext:
    viewport = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 860}
    context = await browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    context.set_default_timeout(60_000)
    await context.route("**/*", offline_only)
    return context


async def composer(page: Page) -> Any:
    box = page.locator(".pane.own").get_by_role("textbox", name="Message", exact=True)
    await box.wait_for()
    return box


async def one_load(browser: Browser, base: str) -> dict[str, float]:
    context = await new_context(browser)
    try:
        page = await context.new_page()
        await page.goto(f"{base}/z/maya")
        box = await composer(page)
        ready = float(await page.evaluate("() => performance.now()"))
        # The greeting is stored with the room, so it comes with the pane's first read.
        await page.locator(AGENT_LINE).first.wait_for()
        greeting = float(await page.evaluate("() => performance.now()"))
        greeted = await agent_lines(page)
        watch = asyncio.ensure_future(page.evaluate(WATCH, greeted))
        await box.fill(OPENING)
        await box.press("Enter")
        seen = await asyncio.wait_for(watch, 60)
        nav = await page.evaluate(NAVIGATION)
        return {
            "dcl": float(nav["dcl"]),
            "load": float(nav["load"]),
            "ready": ready,
            "greeting": greeting,
            "draft": float(seen["draft"]),
            "line": float(seen["line"]),
        }
    finally:
        await context.close()


async def agent_lines(page: Page) -> int:
    return await page.locator(AGENT_LINE).count()


async def chat_to_offer(page: Page, handle: str) -> None:
    """A guest's path to a written offer: the opening line and the bid as a guest (the note
    to the host is held and the login gate comes up), sign up in the gate (the held note goes
    out), then agree; the offer card shows once the brand is signed in."""
    box = await composer(page)
    await page.locator(AGENT_LINE).first.wait_for()  # the greeting, before counting replies
    gate = page.get_by_role("region", name="Sign in to continue")
    for line in LINES[:2]:
        await say(page, box, line, or_=gate)
    await gate.wait_for()
    await gate.get_by_role("tab", name="Sign up").click()
    await gate.get_by_label("Email").fill(f"{handle}@example.com")
    await gate.get_by_label("Password").fill("a-long-password")
    await gate.get_by_label("Your name or brand").fill(handle)
    await gate.get_by_label("Handle").fill(handle)
    await gate.get_by_role("button", name="Create account and continue").click()
    await page.get_by_text(f"Signed in as @{handle}").wait_for()
    await gate.wait_for(state="detached")
    # The held note goes out and the host's ruling comes back to this pane: the demo's ask.
    await page.locator(AGENT_LINE, has_text="$8,000").wait_for()
    await say(page, box, LINES[2])
    await page.locator(".offer").wait_for()


async def say(page: Page, box: Any, line: str, or_: Locator | None = None) -> None:
    """Send ``line`` and wait for the agent's next line in the pane (or for ``or_``)."""
    before = await agent_lines(page)
    await box.fill(line)
    await box.press("Enter")
    reply = page.locator(AGENT_LINE).nth(before)
    await (reply if or_ is None else reply.or_(or_)).first.wait_for()
    await asyncio.sleep(0.5)  # the host side's ruling reaches this pane shortly after


async def tabs_memory(
    browser: Browser, server: ServerProcess, contexts: int, per_context: int
) -> dict[str, Any]:
    base = server.base_url
    # Warm the paths the tabs use (imports, caches) with one tab, closed again.
    warm = await new_context(browser)
    page = await warm.new_page()
    await page.goto(f"{base}/z/maya")
    await composer(page)
    await warm.close()
    await asyncio.sleep(1)
    idle = server.rss()
    made: list[BrowserContext] = []
    rooms: list[str] = []
    for number in range(contexts):
        context = await new_context(browser)
        made.append(context)
        page = await context.new_page()
        await page.goto(f"{base}/z/maya")
        await chat_to_offer(page, f"benchbrand{number}")
        rooms.append(page.url)
    await asyncio.sleep(2)
    before = server.rss()
    connections_before = server.established()
    opened = 0
    for context, url in zip(made, rooms, strict=True):
        for _ in range(per_context - 1):
            page = await context.new_page()
            await page.goto(url)
            await page.locator(".offer").wait_for()
            await composer(page)
            opened += 1
    await asyncio.sleep(3)  # every tab subscribed and idle
    held = server.rss()
    connections_held = server.established()
    tabs = sum(len(c.pages) for c in made)
    for context in made:
        await context.close()
    await asyncio.sleep(3)
    after = server.rss()
    return {
        "tabs": tabs,
        "tabs_opened_on_top": opened,
        "rss_idle_mib": idle / 2**20,
        "rss_before_mib": before / 2**20,
        "rss_held_mib": held / 2**20,
        "rss_after_close_mib": after / 2**20,
        "per_tab_kib": (held - before) / max(1, opened) / 1024,
        "connections_before": connections_before,
        "connections_held": connections_held,
        "connections_after": server.established(),
    }


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return (
        f"median {statistics.median(ordered):7.1f} ms  p90 {p90:7.1f} ms  max {ordered[-1]:7.1f} ms"
    )


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="dealroom-bench-web-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALROOM_")}
    env.pop("GEMINI_API_KEY", None)
    env.update(
        DEALROOM_DATA_DIR=str(data_dir),
        DEALROOM_MODEL_ENGINE="offline",
        DEALROOM_ACCESS_LOG="false",
        DEALROOM_POSTS_PER_MINUTE="600",
    )
    if args.offline_stream_ms is not None:
        env["DEALROOM_OFFLINE_STREAM_MS"] = str(args.offline_stream_ms)
    server = ServerProcess(env=env, port=free_port(), log_dir=data_dir)
    result: dict[str, Any] = {
        "machine": machine_summary(),
        "offline_stream_ms": args.offline_stream_ms,
        "bundles": bundle_sizes(),
    }
    try:
        server.start(timeout=120)  # migrates and seeds the demo first
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path="/usr/bin/chromium",
                headless=True,
                args=["--no-sandbox", "--disable-dev-shm-usage", "--renderer-process-limit=8"],
            )
            try:
                await one_load(browser, server.base_url)  # warm-up, not counted
                loads = [await one_load(browser, server.base_url) for _ in range(args.loads)]
                result["loads"] = loads
                if args.tabs:
                    result["tabs"] = await tabs_memory(
                        browser, server, contexts=args.tabs // 10, per_context=10
                    )
            finally:
                await browser.close()
        result["server_problems"] = server.problems()
    finally:
        server.stop()
        remove_tree(data_dir)
    return result


def report(result: dict[str, Any]) -> None:
    for line in result["machine"]:
        print(line)
    pace = result["offline_stream_ms"]
    print(f"offline engine's stream pause: {'as served' if pace is None else f'{pace} ms'}")
    print("\n(1) bundles (what the server sends)")
    for row in result["bundles"]:
        print(
            f"  {row['file']:<22} {row['bytes'] / 1024:8.1f} KiB"
            f"   gzip {row['gzip'] / 1024:7.1f} KiB"
        )
    client = sum(r["gzip"] for r in result["bundles"] if r["file"].startswith("assets/app."))
    print(f"  web client total gzip (hosts, visitors): {client / 1024:.1f} KiB")
    loads = result["loads"]
    print(f"\n(2) /z/maya, fresh guest each time, {len(loads)} loads (ms since navigation start)")
    for key, label in (
        ("dcl", "DOMContentLoaded"),
        ("load", "load event"),
        ("ready", "composer ready (room opened)"),
        ("greeting", "greeting shown"),
        ("draft", "first reply draft shown"),
        ("line", "first reply line shown"),
    ):
        print(f"  {label:<30} {summary([load[key] for load in loads])}")
    sends = [x["line"] - x["greeting"] for x in loads]
    print(f"  send -> reply line             {summary(sends)}")
    if "tabs" in result:
        t = result["tabs"]
        print(f"\n(3) {t['tabs']} open tabs (2 subscriptions each), server RSS")
        print(f"  idle, no tab open {t['rss_idle_mib']:.1f} MiB")
        print(
            f"  before the {t['tabs_opened_on_top']} extra tabs {t['rss_before_mib']:.1f} MiB; "
            f"held {t['rss_held_mib']:.1f} MiB; "
            f"after closing all {t['rss_after_close_mib']:.1f} MiB"
        )
        print(f"  per tab: {t['per_tab_kib']:.1f} KiB")
        print(
            f"  established connections: {t['connections_before']} -> "
            f"{t['connections_held']} -> {t['connections_after']}"
        )
    count, lines = result["server_problems"]
    print(f"\nserver log problem lines: {count}")
    for line in lines:
        print("  " + line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--tabs", type=int, default=100, help="a multiple of 10; 0 skips")
    parser.add_argument(
        "--offline-stream-ms",
        type=int,
        help="the offline engine's pause between reply pieces (default: as served)",
    )
    parser.add_argument("--json", type=Path, help="also write the raw result here")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
