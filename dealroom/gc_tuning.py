"""Garbage-collector settings for a long-lived server (issue 17, "Memory and pauses").

With thousands of subscriptions held, a full collection walks every tracked object the
process owns, most of which (modules, the schema, pools) live as long as the process. Moving
them to the permanent generation with ``gc.freeze()`` once start-up is over takes them out of
every later collection; a higher first threshold makes young collections rarer (a request
allocates many short-lived objects that reference counting frees anyway). Measured in
docs/BENCHMARKS.md ("The hot path at its floor").
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from typing import Any, Final

YOUNG_THRESHOLD: Final = 10_000
"""Net allocations between young collections (CPython's default is 700). A young collection
walks every young object still alive (about 0.4 µs each on the 2-core machine): with
thousands of subscriptions each event and ping leaves a few dozen live ones (the next
waits), so 50,000 made young collections of 20-75 ms and middle ones of 200 ms; 10,000
keeps both under the 50 ms target (docs/BENCHMARKS.md, issue 17)."""


def settle_after_startup(
    *,
    young_threshold: int = YOUNG_THRESHOLD,
    log_pauses_over_ms: float = 0.0,
    log_format: str = "console",
) -> int:
    """Collect once, then freeze what survived; returns how many objects were frozen. From
    then on every collection is timed (``watch_pauses``): that deliberate one, before any
    request, is not a pause anyone waits on."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, oldest)
    watch_pauses(log_pauses_over_ms, log_format)
    return gc.get_freeze_count()


SETTLE_QUIET_SECONDS: Final = 2.0
"""A subscribe burst is over once no subscription has opened for this long."""

SETTLE_MIN_NEW: Final = 64
"""Freeze again only once at least this many subscriptions opened since the last freeze."""

_opened = 0


def note_subscribed() -> None:
    """A subscription has opened (called by every live stream)."""
    global _opened  # one counter per process, read by refreeze_when_settled
    _opened += 1


async def refreeze_when_settled(
    quiet: float = SETTLE_QUIET_SECONDS, min_new: int = SETTLE_MIN_NEW
) -> None:
    """Run for the life of the app: once a burst of subscribes has gone quiet, freeze what
    the held subscriptions keep (sockets, handlers, tasks, queues), so full collections stop
    walking them. Only in a process that froze after start-up (``dealroom serve``): a test
    or an embedding program keeps the collector as it set it.

    A frozen object is still freed by reference counting when its subscription closes; only
    a cycle among frozen objects stays until the next ``gc.unfreeze()``. So when more
    subscriptions have closed since the last freeze than are still open, the settle unfreezes
    and collects once (a full pause, at a quiet moment) before freezing again."""
    loop = asyncio.get_running_loop()
    frozen_at = _opened
    seen, quiet_since = _opened, loop.time()
    open_at_freeze = 0
    while True:
        await asyncio.sleep(quiet / 2)
        if gc.get_freeze_count() == 0:
            continue
        now = loop.time()
        if _opened != seen:
            seen, quiet_since = _opened, now
            continue
        if _opened - frozen_at < min_new or now - quiet_since < quiet:
            continue
        refreeze(collect_all=_closed_since(open_at_freeze, frozen_at) > open_subscriptions())
        frozen_at, open_at_freeze = _opened, open_subscriptions()


def refreeze(*, collect_all: bool = False) -> int:
    """Freeze what survived a young collection (or, with ``collect_all``, a full one after
    unfreezing); returns how many objects are frozen now."""
    if collect_all:
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
    gc.freeze()
    return gc.get_freeze_count()


def open_subscriptions() -> int:
    """Live streams open in this process now."""
    return _opened - _closed


_closed = 0


def note_unsubscribed() -> None:
    """A subscription has ended."""
    global _closed  # see note_subscribed
    _closed += 1


def _closed_since(open_then: int, opened_then: int) -> int:
    """Subscriptions closed since the last freeze: those then open or opened since, less those
    open now."""
    return open_then + (_opened - opened_then) - open_subscriptions()


# --- pauses -----------------------------------------------------------------------------------

GENERATIONS: Final = (0, 1, 2)


class PauseStats:
    """Collections and their pauses by generation since ``watch_pauses``, read by ``/metrics``.
    Plain numbers updated inside the collector's callback: no lock is taken there (a lock
    held by the code the collection interrupted would deadlock it)."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.longest = [0.0, 0.0, 0.0]


PAUSES = PauseStats()
_watching: list[Any] = []


def watch_pauses(log_over_ms: float = 0.0, log_format: str = "console") -> None:
    """Time every collection into ``PAUSES``; a pause of at least ``log_over_ms`` (0: none)
    is also written to stderr as one ``gc_pause`` line with its generation, length (wall and
    the thread's CPU), objects collected and ``time.monotonic()`` stamp (the benchmarks read
    it; an operator sees which pauses break the 50 ms target). Written with ``os.write``: a
    logger's lock may be held by the very code the collection interrupted. Idempotent."""
    if _watching:
        return
    started = [0.0, 0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0], started[1] = time.perf_counter(), time.thread_time()
            return
        pause = time.perf_counter() - started[0]
        generation = info["generation"]
        PAUSES.count[generation] += 1
        PAUSES.seconds[generation] += pause
        PAUSES.longest[generation] = max(PAUSES.longest[generation], pause)
        if log_over_ms > 0 and pause * 1000 >= log_over_ms:
            cpu = time.thread_time() - started[1]
            _log_pause(generation, pause, cpu, info["collected"], log_format)

    gc.callbacks.append(timed)
    _watching.append(timed)


def unwatch_pauses() -> None:
    """Stop timing collections (tests; a server times them for its whole life)."""
    while _watching:
        gc.callbacks.remove(_watching.pop())


def _log_pause(generation: int, pause: float, cpu: float, collected: int, log_format: str) -> None:
    fields = {
        "generation": generation,
        "ms": round(pause * 1000, 1),
        "cpu_ms": round(cpu * 1000, 1),  # less than ms: the process waited for a core
        "collected": collected,
        "at": round(time.monotonic(), 3),
        "pid": os.getpid(),
    }
    if log_format == "json":
        line = json.dumps({"event": "gc_pause", "level": "warning", **fields})
    else:
        line = "gc_pause " + " ".join(f"{k}={v}" for k, v in fields.items())
    os.write(2, (line + "\n").encode())
