"""Freezing again once a burst of subscriptions has settled (issue 17, "Memory and pauses")."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

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


class _Socket:
    """Stands for what a held subscription keeps (an instance the collector tracks)."""


@pytest.fixture
def frozen_like_a_server() -> Iterator[None]:
    """What `dealroom serve` does after start-up; undone for the rest of the suite."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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
        for _ in range(50):
            if gc.get_freeze_count() >= frozen + 1000:
                break
            await asyncio.sleep(0.05)
        assert gc.get_freeze_count() >= frozen + 1000
        walked = {id(o) for o in gc.get_objects()}
        assert not any(id(socket) in walked for socket in held[0])
    finally:
        settler.cancel()
        for _ in held:
            gc_tuning.note_unsubscribed()


async def test_nothing_is_frozen_in_a_process_that_did_not_freeze() -> None:
    gc.unfreeze()
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
    for _ in range(100):
        if gc_tuning.open_subscriptions() == before:
            break
        await asyncio.sleep(0.02)
    assert gc_tuning.open_subscriptions() == before


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

    from dealroom.services.metrics import REGISTRY

    gc.collect()
    text = generate_latest(REGISTRY).decode()
    counted = [line for line in text.splitlines() if line.startswith("dealroom_gc_pauses_total")]
    assert any('generation="2"' in line and float(line.split()[-1]) >= 1 for line in counted)
    assert 'dealroom_gc_pause_longest_seconds{generation="2"}' in text
