"""Links in chat: what reading one pasted link adds to a turn, and that a turn without links is
unchanged.

One process, SQLite in a temporary folder, the in-process broker, the offline engine, agents
run one run at a time (``runner.run_once``) so each turn is timed alone. A loopback server
serves an HTML brief (and a PDF deck with ``--pdf``). Turns alternate in the same run: a guest
posts a plain message, then a message holding one link (a new URL each time, so every link
turn fetches and extracts; the room cache is not what is measured). For each kind: the wall
time of the turn's runs (persona + Distil) and the SQL statements they ran. The no-link turn is
the baseline; the link turn's extra time is printed as a difference and a ratio.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _client import UNTHROTTLED, http_client, open_room, percentile, post_body, sign_up
from sqlalchemy import event
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from dealroom.agents.models.offline import OfflineClient
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.jobs.runner import TurnRunner
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.realtime import create_broker
from dealroom.server import start_in_background

BRIEF = """<!doctype html><html><head><title>Acme Spring Campaign Brief</title></head><body>
<nav><a href="/">Home</a></nav><article><h1>Acme Spring Campaign Brief</h1>
<p>Acme Brand is launching its spring sneaker line and is looking for creators who speak to
runners and city walkers alike. The campaign runs through the whole month of May.</p>
<p>What we need: two Instagram reels in May, budget $6,000. Each reel should show the sneakers
in a real run, with the creator's own voice, and tag our account in the caption.</p>
<p>Usage: organic only, no paid amplification. Approval of the final cut within three days.</p>
</article><footer>Copyright Acme Brand</footer></body></html>"""


def pdf_deck() -> bytes:
    text = b"BT /F1 12 Tf 72 720 Td (Acme deck: two Instagram reels in May, budget $6,000.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(text)).encode() + b" >>\nstream\n" + text + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    out += trailer.encode()
    return bytes(out)


DECK = pdf_deck()


async def page(request: Request) -> Response:
    if request.url.path.endswith(".pdf"):
        return Response(DECK, media_type="application/pdf")
    return Response(BRIEF, media_type="text/html; charset=utf-8")


class Statements:
    def __init__(self, engine: Any) -> None:
        self.count = 0
        event.listen(engine.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        self.count += 1


async def drain(runner: TurnRunner) -> None:
    while await runner.run_once():
        pass


async def main(turns: int, pdf: bool) -> None:
    pages = await start_in_background(Starlette(routes=[Route("/{p:path}", page)]))
    folder = Path(tempfile.mkdtemp(prefix="bench-links-"))
    engine = create_engine(f"sqlite+aiosqlite:///{folder / 'db.sqlite3'}")
    await upgrade(engine)
    broker = create_broker(None)
    await broker.start()
    settings = Settings(
        data_dir=folder,
        database_url=f"sqlite+aiosqlite:///{folder / 'db.sqlite3'}",
        access_log=False,
        model_engine="offline",
        offline_stream_ms=0,
        workers=0,
        webhook_workers=0,
        greet_visitors=False,
        posts_per_minute=100_000,
        link_allow_loopback=True,
        link_ports=str(pages.port),
    ).model_copy(update=UNTHROTTLED)
    app = create_app(settings, engine=engine, broker=broker, model=OfflineClient())
    server = await start_in_background(app)
    runner: TurnRunner = app.state.dealroom.runner
    sql = Statements(engine)
    times: dict[str, list[float]] = {"plain": [], "link": []}
    counts: dict[str, list[int]] = {"plain": [], "link": []}
    async with http_client(f"http://127.0.0.1:{server.port}") as http:
        await sign_up(http, "benchhost", "Bench Host")
        await drain(runner)
        for number in range(turns * 2 + 2):
            kind = "link" if number % 2 else "plain"
            # A new guest room every few turns keeps the session (and so the turn's input) flat.
            if number % 8 == 0:
                room_id, key = await open_room(
                    http, "benchhost", {"X-Forwarded-For": f"10.9.{number // 256}.{number % 256}"}
                )
                headers = {"X-Guest-Key": str(key), "content-type": "application/json"}
            suffix = "deck.pdf" if pdf else "brief.html"
            body = (
                f"Here is our brief: http://127.0.0.1:{pages.port}/{number}/{suffix}"
                if kind == "link"
                else "We are planning a spring campaign with two reels in May."
            )
            response = await http.post(
                "/graphql", content=post_body(room_id, body), headers=headers
            )
            response.raise_for_status()
            before = sql.count
            started = time.perf_counter()
            await drain(runner)
            elapsed = time.perf_counter() - started
            if number >= 2:  # the first pair warms imports and caches
                times[kind].append(elapsed)
                counts[kind].append(sql.count - before)
    await server.stop()
    await pages.stop()
    await broker.close()
    await engine.dispose()
    print(f"links bench: {turns} turns of each kind, SQLite, offline engine, one run at a time")
    print(f"page: {'PDF deck' if pdf else 'HTML brief'} on a loopback server")
    for kind in ("plain", "link"):
        values = sorted(times[kind])
        print(
            f"  {kind:5}: p50 {percentile(values, 50) * 1000:7.2f} ms  "
            f"p95 {percentile(values, 95) * 1000:7.2f} ms  "
            f"statements per turn {statistics.median(counts[kind]):.0f} "
            f"(min {min(counts[kind])}, max {max(counts[kind])})"
        )
    plain = percentile(sorted(times["plain"]), 50)
    link = percentile(sorted(times["link"]), 50)
    print(f"  added by one link (p50): {(link - plain) * 1000:.2f} ms, ratio {link / plain:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--pdf", action="store_true", help="link a PDF deck instead of HTML")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.turns, arguments.pdf))
