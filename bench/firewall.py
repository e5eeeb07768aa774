"""Private-value firewall benchmark: what screening a host→visitor crossing costs, against the turn
that makes the crossing.

Method. SQLite in a temporary file, the in-process broker, the offline engine; the app is
built in-process with ``workers=0`` and served by uvicorn on a loopback port, driven over HTTP
like a client app. A host tells its agent its rules in the home room ("$8,000 a sponsored
post, never below $6,000, no alcohol brands"), so its branch holds a limit and a private
term. Guests open deal rooms and each post one proposal under the floor ("Could you do a
sponsored post for $4,000?"); every queued run is then executed with ``runner.run_once()``.
The host-side persona turn woken by the visitor's proposal rules on it and sends the ruling
across: that is the crossing. Each persona turn (``PersonaTurn._turn``: request, model,
apply) is timed.

(1) turn with and without the firewall, in one run: rooms alternate between the real code
    and the code with the firewall and the ruling checks removed (``held_sends.screen``
    answering nothing held, ``held_sends.known_ruling`` passing the ruling through), so both
    samples share the machine's state. The ratio of the crossing turns' medians is the
    firewall's cost per crossing.
(2) the screen alone, in process: ``held_sends.screen`` on the room's real memory for the
    rendered ruling, and for a 2,000-character free-text send; ``firewall.PrivateValues.of``
    (collecting the private values) is part of every call.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil
from _client import gql, http_client, open_room, post_body, sign_up

from dealroom.agents.models.offline import OfflineClient
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.domain import crossing
from dealroom.jobs.persona import PersonaTurn
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.realtime import create_broker
from dealroom.server import start_in_background
from dealroom.services.gate import held_sends
from dealroom.services.turns.context import TurnContext

HOST = "firewallbench"
RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000, "
    "and I never work with alcohol brands."
)
PROPOSAL = "Could you do a sponsored post for $4,000?"
HOME = "query { me { homeRoom { id } } }"

Timing = tuple[str, str, float]
"""(mode, pane, seconds) of one persona turn."""


MODE: contextvars.ContextVar[str] = contextvars.ContextVar("mode", default="on")
"""Whether the turn running now has the firewall (a room's turns all run with the same)."""


def install(samples: list[Timing], off_rooms: set[uuid.UUID], memory: dict[str, Any]) -> None:
    """Time every persona turn; in ``off_rooms`` run it without the firewall and C4/C5."""
    turn = PersonaTurn._turn
    screen, known = held_sends.screen, held_sends.known_ruling

    async def timed(self: PersonaTurn, run: Any, ctx: TurnContext, site: Any) -> None:
        MODE.set("off" if ctx.room_id in off_rooms else "on")
        started = time.perf_counter()
        await turn(self, run, ctx, site)
        samples.append((MODE.get(), ctx.pane_key, time.perf_counter() - started))

    def screened(*args: Any, **kwargs: Any) -> list[str]:
        memory.update(args[0])  # kept for the in-process figure
        return [] if MODE.get() == "off" else screen(*args, **kwargs)

    async def named(db: Any, ctx: TurnContext, target: Any, ruling: Any) -> Any:
        return ruling if MODE.get() == "off" else await known(db, ctx, target, ruling)

    PersonaTurn._turn = timed  # type: ignore[method-assign]
    held_sends.screen = screened
    held_sends.known_ruling = named


async def drain(runner: Any) -> int:
    count = 0
    while await runner.run_once():
        count += 1
    return count


async def timed_calls(call: Callable[[], Any], count: int) -> list[float]:
    out = []
    for _ in range(count):
        started = time.perf_counter()
        result = call()
        if isinstance(result, Awaitable):
            await result
        out.append(time.perf_counter() - started)
    return out


def ms(values: Sequence[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.2f} ms (n={len(values)})"


def us(values: Sequence[float]) -> str:
    return f"p50 {statistics.median(values) * 1e6:.0f} µs (n={len(values)})"


async def main(rooms: int, screens: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-firewall-"))
    url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}"
    engine = create_engine(url)
    await upgrade(engine)
    broker = create_broker(None)
    await broker.start()
    settings = Settings(
        database_url=url,
        data_dir=folder,
        debug=False,
        access_log=False,
        model_engine="offline",
        workers=0,
        posts_per_minute=100_000,
    )
    app = create_app(settings, engine=engine, broker=broker, model=OfflineClient())
    server = await start_in_background(app)
    runner = app.state.dealroom.runner
    real_screen = held_sends.screen
    samples: list[Timing] = []
    off_rooms: set[uuid.UUID] = set()
    memory_of_a_room: dict[str, Any] = {}
    install(samples, off_rooms, memory_of_a_room)
    try:
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            host = await sign_up(http, HOST, "Dev Raman")
            home = (await gql(http, HOME, headers=host))["me"]["homeRoom"]["id"]
            await http.post(
                "/graphql",
                content=post_body(home, RULES),
                headers={"Content-Type": "application/json", **host},
            )
            await drain(runner)
            opened = [await open_room(http, HOST) for _ in range(rooms)]
            off_rooms.update(uuid.UUID(room_id) for room_id, _key in opened[1::2])
            for room_id, key in opened:
                await http.post(
                    "/graphql",
                    content=post_body(room_id, PROPOSAL),
                    headers={"Content-Type": "application/json", "X-Guest-Key": key or ""},
                )
            ran = await drain(runner)
    finally:
        await server.stop()
        await broker.close()
        await engine.dispose()

    host_on = [s for mode, pane, s in samples if pane == "host" and mode == "on"]
    host_off = [s for mode, pane, s in samples if pane == "host" and mode == "off"]
    all_on = [s for mode, _pane, s in samples if mode == "on"]
    ruling = crossing.render(crossing.Ruling("counter", "8000", "USD", "sponsored_post"), "Dev")
    payload = {"ruling": {"decision": "counter", "amount": "8000", "currency": "USD",
                          "deliverable": "sponsored_post"}, "open_questions": []}  # fmt: skip
    free_text = ("Thanks for the note about the spring campaign; " * 45)[:2000]
    ruling_screen = await timed_calls(
        lambda: real_screen(memory_of_a_room, ruling, payload), screens
    )
    text_screen = await timed_calls(
        lambda: real_screen(memory_of_a_room, free_text, {"open_questions": []}), screens
    )
    on, off = statistics.median(host_on), statistics.median(host_off)
    print(f"# bench/firewall.py  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(
        f"machine: {psutil.cpu_count()} cores, {platform.machine()}, Python "
        f"{sys.version.split()[0]}, SQLite; {rooms} rooms, {ran} runs"
    )
    print(f"host-side crossing turn, firewall on : {ms(host_on)}")
    print(f"host-side crossing turn, firewall off: {ms(host_off)}")
    print(f"ratio on/off: {on / off:.3f}  (difference {(on - off) * 1000:+.2f} ms a crossing)")
    print(f"every persona turn with the firewall: {ms(all_on)}")
    print(f"screen(), rendered ruling: {us(ruling_screen)}")
    print(f"screen(), 2,000-char free text: {us(text_screen)}")
    print(
        f"screen() of a ruling as a share of the crossing turn: "
        f"{statistics.median(ruling_screen) / on * 100:.2f}%"
    )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=60)
    parser.add_argument("--screens", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(main(args.rooms, args.screens))
