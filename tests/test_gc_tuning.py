"""Freezing again once a burst of subscriptions has settled."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterable, Iterator

import pytest

from dealroom import gc_tuning
from tests.conftest import Server
from tests.support.graphql import (
    PANE_EVENTS,
    open_room,
    sign_up,
    subscribe,
    until_listening,
    ws_init_for,
)
from tests.support.polling import eventually


class _Socket:
    """Stands for what a held subscription keeps (an instance the collector tracks)."""

    __slots__ = ("__weakref__",)


def _unwalked(objects: Iterable[object]) -> bool:
    """None of ``objects`` is in a generation the collector walks (all frozen)."""
    walked = {id(o) for o in gc.get_objects()}
    return not any(id(o) in walked for o in objects)


@pytest.fixture
def frozen_like_a_server() -> Iterator[None]:
    """What `dealroom serve` does after start-up; undone for the rest of the suite."""
    gc_tuning.freeze_after_startup()
    try:
        yield
    finally:
        gc_tuning.thaw()


async def test_held_objects_are_frozen_once_subscribes_go_quiet(
    frozen_like_a_server: None,
) -> None:
    settler = asyncio.create_task(gc_tuning.refreeze_when_settled(quiet=0.2, min_new=3))
    try:
        frozen = gc.get_freeze_count()
        held = []
        for _ in range(5):  # a burst: each subscription keeps objects alive
            gc_tuning.note_subscribed()
            held.append([_Socket() for _ in range(200)])
            await asyncio.sleep(0.02)
        # not while the burst goes on (a freeze would add the 200 objects of each socket list
        # held so far; frozen objects freed meanwhile make the count fall a little)
        assert gc.get_freeze_count() < frozen + 200
        assert await eventually(lambda: gc.get_freeze_count() >= frozen + 1000, 2.5)
        assert _unwalked(held[0])
    finally:
        settler.cancel()
        for _ in held:
            gc_tuning.note_unsubscribed()


async def test_churn_that_is_never_quiet_still_thaws_what_closes_left_frozen(
    frozen_like_a_server: None,
) -> None:
    """A cycle among frozen objects stays until a thaw frees it. Steady churn never goes
    quiet, so once closes reach twice the subscriptions open (now and at the last freeze) the
    settle thaws and collects anyway."""
    garbage = _cycle()
    gc.freeze()  # what a closed subscription could leave behind, frozen with it
    settler = asyncio.create_task(
        gc_tuning.refreeze_when_settled(quiet=1.0, min_new=2, thaw_after=0)
    )
    await asyncio.sleep(0)
    try:

        def churn() -> bool:  # a subscribe and a close every 50 ms: never a second of quiet
            gc_tuning.note_subscribed()
            gc_tuning.note_unsubscribed()
            return garbage() is None

        assert await eventually(churn, 4.0)
    finally:
        settler.cancel()


async def test_a_mass_disconnect_is_thawed_once_after_it(frozen_like_a_server: None) -> None:
    # Closes 0.25 s apart, quiet after 2 s: a stall of up to 1.75 s in this worker is allowed.
    settler = asyncio.create_task(
        gc_tuning.refreeze_when_settled(quiet=2.0, min_new=2, thaw_after=20)
    )
    await asyncio.sleep(0)
    try:
        for _ in range(20):
            gc_tuning.note_subscribed()
        before = gc_tuning.refreezes
        await eventually(lambda: gc_tuning.refreezes > before, 6.0)  # the burst settles
        settled = gc_tuning.refreezes
        assert settled == before + 1
        for _ in range(20):  # every subscription closes, one every 0.25 s
            gc_tuning.note_unsubscribed()
            await asyncio.sleep(0.25)
            assert gc_tuning.refreezes == settled  # no thaw while they are still closing
        await eventually(lambda: gc_tuning.refreezes > settled, 6.0)
        await asyncio.sleep(1.2)
        assert gc_tuning.refreezes == settled + 1
    finally:
        settler.cancel()


async def test_fewer_closes_than_the_thaw_wants_are_never_thawed(
    frozen_like_a_server: None,
) -> None:
    """A thaw is a full collection over the whole heap, the longest pause a server has; a
    close leaves no frozen cycle, so a few closes (a hundred subscriptions closed before a
    burst of thousands) are not worth one, quiet or not."""
    garbage = _cycle()
    gc.freeze()
    settler = asyncio.create_task(
        gc_tuning.refreeze_when_settled(quiet=0.2, min_new=2, thaw_after=50)
    )
    await asyncio.sleep(0)
    try:
        for _ in range(49):
            gc_tuning.note_subscribed()
            gc_tuning.note_unsubscribed()
        await asyncio.sleep(1.0)  # quiet, and every subscription closed
        assert garbage() is not None
        gc_tuning.note_subscribed()
        gc_tuning.note_unsubscribed()  # the fiftieth close
        assert await eventually(lambda: garbage() is None, 2.0)
    finally:
        settler.cancel()


async def test_nothing_is_frozen_in_a_process_that_did_not_freeze() -> None:
    gc_tuning.thaw()
    settler = asyncio.create_task(gc_tuning.refreeze_when_settled(quiet=0.1, min_new=1))
    try:
        for _ in range(3):
            gc_tuning.note_subscribed()
        await asyncio.sleep(0.5)
        assert gc.get_freeze_count() == 0
    finally:
        settler.cancel()
        for _ in range(3):
            gc_tuning.note_unsubscribed()


async def test_the_settle_loop_never_counts_the_frozen_generation(
    frozen_like_a_server: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gc.get_freeze_count()`` walks every frozen object (over a million with 2,500
    subscriptions held: 100 ms and more per call). Neither waiting for a burst to settle nor
    the refreeze after it may pay that walk."""
    counted = 0
    real_count = gc.get_freeze_count

    def counting() -> int:
        nonlocal counted
        counted += 1
        return real_count()

    monkeypatch.setattr(gc, "get_freeze_count", counting)
    before = gc_tuning.refreezes
    settler = asyncio.create_task(gc_tuning.refreeze_when_settled(quiet=0.1, min_new=1))
    try:
        await asyncio.sleep(0.3)  # quiet ticks
        gc_tuning.note_subscribed()
        # ... and the refreeze once the burst of one has settled
        assert await eventually(lambda: gc_tuning.refreezes == before + 1)
    finally:
        settler.cancel()
        gc_tuning.note_unsubscribed()
    assert counted == 0


@pytest.fixture
def survivors_frozen(frozen_like_a_server: None) -> None:
    """`dealroom serve`'s default: survivors of young and middle collections frozen (undone
    by the freeze's own fixture)."""
    gc_tuning.freeze_survivors()
    gc_tuning.freeze_survivors()  # idempotent: one callback


def test_what_survives_a_young_collection_is_frozen_at_once(survivors_frozen: None) -> None:
    assert gc.callbacks.count(gc_tuning._freeze_after_collection) == 1
    held = [_Socket() for _ in range(50)]
    gc.collect(0)
    assert _unwalked(held)
    # ... and is still freed by reference counting
    ref = weakref.ref(held[0])
    del held[:]
    assert ref() is None


async def test_during_a_burst_of_subscribes_survivors_age_until_it_settles(
    survivors_frozen: None,
) -> None:
    """A start-up leaves cyclic garbage that outlives its first collection: frozen, it
    would stay for good. So during a burst only what survives a middle collection too is
    frozen, until the settle."""
    before = gc_tuning.refreezes
    settler = asyncio.create_task(gc_tuning.refreeze_when_settled(quiet=0.3, min_new=3))
    await asyncio.sleep(0)  # the settle loop starts counting from here
    try:
        for _ in range(3):
            gc_tuning.note_subscribed()
        await asyncio.sleep(0.2)  # one tick: a burst is under way
        during = [_Socket() for _ in range(50)]
        gc.collect(0)
        middle = {id(o) for o in gc.get_objects(generation=1)}
        assert all(id(socket) in middle for socket in during)
        older = [_Socket() for _ in range(50)]  # ... until they survive a middle one too
        gc.collect(0)
        gc.collect(1)
        assert _unwalked([*during, *older])
        during = [_Socket() for _ in range(50)]
        gc.collect(0)
        # quiet for 0.3 s: the settle freezes, and survivors again
        await eventually(lambda: gc_tuning.refreezes > before)
        assert gc_tuning.refreezes == before + 1
        after = [_Socket() for _ in range(50)]
        gc.collect(0)
        assert _unwalked([*during, *after])
    finally:
        settler.cancel()
        for _ in range(3):
            gc_tuning.note_unsubscribed()


@pytest.fixture
def no_automatic_collection() -> Iterator[None]:
    """Thresholds no test allocates past: only an explicit collection runs."""
    thresholds = gc.get_threshold()
    gc.set_threshold(10**9, thresholds[1], thresholds[2])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def _cycle() -> weakref.ref[_Loop]:
    """A reference cycle nobody holds, reclaimable only by a collection."""
    first, second = _Loop(), _Loop()
    first.other, second.other = second, first
    return weakref.ref(first)


class _Loop:
    __slots__ = ("__weakref__", "other")

    def __init__(self) -> None:
        self.other: _Loop | None = None


async def test_a_frozen_process_sweeps_its_young_generation_on_time(
    frozen_like_a_server: None, no_automatic_collection: None
) -> None:
    sweeper = asyncio.create_task(gc_tuning.sweep_young(every=0.05))
    try:
        garbage = _cycle()
        assert await eventually(lambda: garbage() is None)
    finally:
        sweeper.cancel()


async def test_the_sweep_runs_the_middle_collection_its_count_calls_for(
    frozen_like_a_server: None, no_automatic_collection: None
) -> None:
    """Asked for by name, a young collection never starts a middle one: the sweep does."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], 2, thresholds[2])
    gc.collect(1)  # the middle count starts from zero
    sweeper = asyncio.create_task(gc_tuning.sweep_young(every=0.05))
    try:
        held = {id(socket): socket for socket in (_Socket() for _ in range(50))}

        def all_oldest() -> bool:
            return held.keys() <= {id(o) for o in gc.get_objects(generation=2)}

        assert await eventually(all_oldest)
    finally:
        sweeper.cancel()


async def test_a_process_that_did_not_freeze_keeps_the_collector_as_it_was(
    no_automatic_collection: None,
) -> None:
    gc_tuning.thaw()
    sweeper = asyncio.create_task(gc_tuning.sweep_young(every=0.05))
    try:
        garbage = _cycle()
        await asyncio.sleep(0.3)
        assert garbage() is not None
    finally:
        sweeper.cancel()
    gc.collect()
    assert garbage() is None


def test_without_it_survivors_age_through_the_generations(frozen_like_a_server: None) -> None:
    held = [_Socket() for _ in range(50)]
    gc.collect(0)
    middle = {id(o) for o in gc.get_objects(generation=1)}
    assert all(id(socket) in middle for socket in held)


async def test_every_live_stream_counts_itself_open_and_closed(server: Server) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = server.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    before = gc_tuning.open_subscriptions()
    variables = {"roomId": room_id, "seat": "VISITOR"}
    async with subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(guest)):
        await until_listening(server.broker, room_id)
        assert gc_tuning.open_subscriptions() == before + 1
    assert await eventually(lambda: gc_tuning.open_subscriptions() == before)


@pytest.fixture
def pauses_watched() -> Iterator[None]:
    """Pauses timed (and logged at any length) as `dealroom serve` does; undone after."""
    gc_tuning.watch_pauses(log_over_ms=0.000_001)
    try:
        yield
    finally:
        gc_tuning.unwatch_pauses()


def test_every_collection_is_timed_and_a_long_one_logged(
    pauses_watched: None, capfd: pytest.CaptureFixture[str]
) -> None:
    before = gc_tuning.PAUSES.count[2], gc_tuning.PAUSES.seconds[2]
    gc.collect()
    assert gc_tuning.PAUSES.count[2] == before[0] + 1
    assert gc_tuning.PAUSES.seconds[2] > before[1]
    assert gc_tuning.PAUSES.longest[2] > 0
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("gc_pause")]
    assert len(lines) == 1
    fields = dict(part.split("=", 1) for part in lines[0].split()[1:])
    assert fields["generation"] == "2"
    assert float(fields["ms"]) >= 0


def test_unwatched_collections_are_not_counted() -> None:
    before = gc_tuning.PAUSES.count[2]
    gc.collect()
    assert gc_tuning.PAUSES.count[2] == before


def test_metrics_show_the_pauses(pauses_watched: None) -> None:
    from prometheus_client import generate_latest

    from dealroom.services.ops.metrics import REGISTRY

    gc.collect()
    text = generate_latest(REGISTRY).decode()
    counted = [line for line in text.splitlines() if line.startswith("dealroom_gc_pauses_total")]
    assert any('generation="2"' in line and float(line.split()[-1]) >= 1 for line in counted)
    assert 'dealroom_gc_pause_longest_seconds{generation="2"}' in text
    try:
        gc_tuning.refreeze()
    finally:
        gc_tuning.thaw()
    text = generate_latest(REGISTRY).decode()
    assert f"dealroom_gc_refreezes_total {float(gc_tuning.refreezes)}" in text.splitlines()
