"""Garbage-collector settings for a long-lived server.

With thousands of subscriptions held, a full collection walks every tracked object the
process owns, most of which (modules, the schema, pools) live as long as the process. Moving
them to the permanent generation with ``gc.freeze()`` once start-up is over takes them out of
every later collection. Once serving, what survives a young collection is frozen too
(``freeze_survivors``) and the young generation is swept on time (``sweep_young``), so no
collection walks a held subscription's objects twice. Measured in docs/BENCHMARKS.md ("The
collector").
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from typing import Any, Final

YOUNG_THRESHOLD: Final = 10_000
"""Net allocations between young collections (CPython's default is 700): fewer collections
cost less CPU, but a young collection walks every young object still alive, and with
thousands of subscriptions each event and ping leaves a few dozen live ones (the next waits),
so a much larger threshold pauses too long (measured in docs/BENCHMARKS.md, "The
collector"). At 2,500 subscriptions per process no threshold bounds the pauses (deallocations
of old objects count against it): ``sweep_young`` does, on time."""


MIDDLE_THRESHOLD: Final = 2
"""Young collections between middle ones (CPython's default is 10). A middle collection
walks what survived the young ones since the last: during a burst of subscribes, when
survivors are not frozen at once, seconds of start-ups cost a long pause, so they are walked
often, in small pieces (``sweep_young`` runs them)."""


def settle_after_startup(
    *,
    young_threshold: int = YOUNG_THRESHOLD,
    log_pauses_over_ms: float = 0.0,
    log_format: str = "console",
    survivors: bool = True,
) -> None:
    """Collect once, then freeze what survived. From then on every collection is timed
    (``watch_pauses``): that deliberate one, before any request, is not a pause anyone waits
    on. With ``survivors``, what outlives each later young or middle collection is frozen
    too (``freeze_survivors``)."""
    freeze_after_startup()
    oldest = gc.get_threshold()[2]
    gc.set_threshold(young_threshold, MIDDLE_THRESHOLD, oldest)
    watch_pauses(log_pauses_over_ms, log_format)
    if survivors:
        freeze_survivors()


_frozen = False
"""Whether this process froze after start-up. Kept here because asking the collector
(``gc.get_freeze_count()``) walks the whole permanent generation: with 2,500 subscriptions
held, over a million objects, 100 ms and more of one core per call, too much for the
settle loop below to pay every second."""


def freeze_after_startup() -> None:
    """Collect everything, then freeze what survived (``dealroom serve``, before any request)."""
    global _frozen  # one per process, like the collector it describes
    gc.collect()
    gc.freeze()
    _frozen = True


def thaw() -> None:
    """Undo every freeze and stop freezing survivors, so collections walk everything again
    (tests)."""
    global _frozen, _burst  # see freeze_after_startup
    _burst = False
    if _freeze_after_collection in gc.callbacks:
        gc.callbacks.remove(_freeze_after_collection)
    gc.unfreeze()
    _frozen = False


def freeze_survivors() -> None:
    """From now on, freeze whatever survives a young or middle collection, as soon as it
    ends. Idempotent.

    With thousands of subscriptions held, most objects that survive a young collection are
    the next waits of held streams (each delivery leaves a few dozen, alive until that
    stream's next event). Left in the middle and oldest generations, every middle
    collection would walk tens of thousands of them again, in pauses several times a young
    one's. Frozen, they are walked once; reference counting still frees them when their
    stream moves on or closes.

    What stays behind is a cycle that was alive at its collection and died later. A
    subscription's start-up leaves a few dozen such objects (graphql-core's visitors,
    uvicorn's upgraded HTTP protocol: ``ws_protocol.py`` cuts the latter), so
    while a burst of subscribes is under way (``SETTLE_MIN_NEW`` since the last settle)
    only what survives a middle collection too is frozen (``MIDDLE_THRESHOLD``: two sweeps,
    about half a second old), and the start-ups' garbage that dies meanwhile is collected;
    the settle after the burst freezes what the subscriptions keep and survivors of young
    collections are frozen again from then on. The settle also thaws and collects once, at
    a quiet moment, after many closes (``refreeze_when_settled``).
    Measured in docs/BENCHMARKS.md ("`bench/realtime.py`", memory per subscription held idle)."""
    if _freeze_after_collection not in gc.callbacks:
        gc.callbacks.append(_freeze_after_collection)


_burst = False
"""A burst of subscribes is under way: only survivors of middle collections are frozen
(``freeze_survivors``)."""


def _freeze_after_collection(phase: str, info: dict[str, int]) -> None:
    # Called by the collector itself, once its lists are consistent again ("stop"). Freezing
    # splices the generations' lists onto the permanent one: constant time, no allocation.
    if phase != "stop" or info["generation"] == 2:
        return
    if info["generation"] == 1 or not _burst:
        gc.freeze()


SETTLE_QUIET_SECONDS: Final = 2.0
"""A subscribe burst is over once no subscription has opened for this long."""

SETTLE_MIN_NEW: Final = 64
"""Freeze again only once at least this many subscriptions opened since the last freeze."""

THAW_MIN_CLOSED: Final = 10_000
"""Subscriptions closed since the last thaw before the settle thaws again. A thaw is a full
collection over the whole heap, the longest pause a server has (docs/BENCHMARKS.md). It
frees cycles among frozen objects; a closed subscription leaves none (``schema/fanout.py``'s
executor and ``ws_protocol.py``'s HTTP protocol see to that), so the thaw stays only for
whatever another path may still leave, rarely."""

_opened = 0


def note_subscribed() -> None:
    """A subscription has opened (called by every live stream)."""
    global _opened  # one counter per process, read by refreeze_when_settled
    _opened += 1


async def refreeze_when_settled(
    quiet: float = SETTLE_QUIET_SECONDS,
    min_new: int = SETTLE_MIN_NEW,
    thaw_after: int = THAW_MIN_CLOSED,
) -> None:
    """Run for the life of the app: once a burst of subscribes has gone quiet, freeze what
    the held subscriptions keep (sockets, handlers, tasks, queues), so full collections stop
    walking them. Only in a process that froze after start-up (``dealroom serve``): a test
    or an embedding program keeps the collector as it set it.

    A frozen object is still freed by reference counting when its subscription closes; only
    a cycle among frozen objects stays until the next ``gc.unfreeze()``. So once
    ``thaw_after`` subscriptions have closed since the last thaw, and more have closed since
    the last freeze than are still open, the settle unfreezes and collects once (a full
    pause) before freezing again: at a quiet moment (no subscription opened or closed for
    ``quiet`` seconds), burst or not, or at once when closes have reached twice those open
    now and at the last freeze, and ``min_new`` more (steady churn is never quiet, and
    frozen garbage must not grow without bound)."""
    global _burst  # see freeze_survivors
    loop = asyncio.get_running_loop()
    frozen_at = _opened
    # Quiet means no subscription opened or closed: a mass disconnect is thawed once, after.
    seen, quiet_since = _opened + _closed, loop.time()
    open_at_freeze = 0
    closed_at_thaw = _closed
    while True:
        await asyncio.sleep(quiet / 2)
        if not _frozen:
            continue
        now = loop.time()
        _burst = _opened - frozen_at >= min_new
        closed, still_open = _closed_since(open_at_freeze, frozen_at), open_subscriptions()
        may_thaw = _closed - closed_at_thaw >= thaw_after
        overdue = may_thaw and closed > 2 * (still_open + open_at_freeze) + min_new
        if _opened + _closed != seen and not overdue:
            seen, quiet_since = _opened + _closed, now
            continue
        thaw_due = may_thaw and closed > still_open
        if not overdue and (not (_burst or thaw_due) or now - quiet_since < quiet):
            continue
        refreeze(collect_all=thaw_due)
        frozen_at, open_at_freeze = _opened, open_subscriptions()
        if thaw_due:
            closed_at_thaw = _closed
        _burst = False


YOUNG_SWEEP_SECONDS: Final = 0.25
"""How often a frozen process collects its young generation itself (``sweep_young``)."""


async def sweep_young(every: float = YOUNG_SWEEP_SECONDS) -> None:
    """Run for the life of the app: collect the young generation every ``every`` seconds,
    so each young pause covers only what a quarter second left alive.

    The collector starts a young collection when allocations less deallocations pass the
    threshold, and a deallocation of any object counts, however old. A delivery frees its
    stream's previous waits (old, frozen) and leaves new ones as it allocates them, so the
    count stays low while the young generation grows, and a young collection walks far more
    objects than the threshold, whatever the threshold. Swept on time, with what
    survives frozen at once (``freeze_survivors``), nothing is walked twice; every
    ``MIDDLE_THRESHOLD``-th sweep is a middle collection. Only in a process that froze after
    start-up (``dealroom serve``)."""
    while True:
        await asyncio.sleep(every)
        if _frozen:
            # A collection asked for by name never starts the middle one its count calls
            # for (only an allocation does): left to the threshold, middle collections come
            # every few seconds during a burst and walk seconds of start-ups at once.
            middle_due = gc.get_count()[1] >= gc.get_threshold()[1]
            gc.collect(1 if middle_due else 0)


def refreeze(*, collect_all: bool = False) -> None:
    """Freeze what survived a middle collection (or, with ``collect_all``, a full one after
    unfreezing). It does not count what is frozen: that walk would cost as much as the
    collection it avoids."""
    global refreezes  # see freeze_after_startup
    if collect_all:
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
    gc.freeze()
    refreezes += 1


refreezes = 0
"""How many times this process has frozen again since start-up."""


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
