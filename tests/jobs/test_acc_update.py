"""AccUpdate writes under the room's memory lease: while another writer (Distil) holds it, the
merge waits and writes nothing; once it is free, the merge lands, fenced like Distil. The merge
is one unit of work: its line is published only after it commits."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from dealroom.domain import durable, pane_words
from dealroom.domain.seats import Seat
from dealroom.jobs import acc_update as acc_update_turn
from dealroom.jobs.acc_update import AccUpdate
from dealroom.jobs.distil import MemoryLease
from dealroom.persistence.db import Db
from dealroom.persistence.models import Flag, Message, Participant
from dealroom.services.live.events import pane_channel
from dealroom.services.memory import durable as durable_memory
from dealroom.services.turns.runs import system_line
from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up
from tests.support.offers import settle
from tests.support.turns import HOME, memory


async def _stale_host_seat(server: Server, db: Db) -> tuple[str, uuid.UUID]:
    """A deal room whose host seat is due a merge: the account's floor moved to 6000 after
    the room was seeded with 4000. Returns the room's id and the host's seat."""
    host = server.client()
    host_id = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, "My fee for a sponsored post is $8,000, never below $4,000.")
    await settle(server)
    room_id = (await open_room(server.client(), "devraman"))["room"]["id"]

    def new_floor(document: dict[str, Any]) -> dict[str, Any]:
        document["limits"]["sponsored_post"]["floor"] = "6000"
        return document

    try:
        await durable_memory.write(
            db, uuid.UUID(host_id), new_floor, now=server.clock.now(), agent="arvist"
        )
        seat = await db.scalar(
            select(Participant.id).where(
                Participant.room_id == uuid.UUID(room_id), Participant.key == "host"
            )
        )
        await db.commit()
    finally:
        await db.close()
    assert seat is not None
    return room_id, seat


async def test_a_merge_waits_for_the_memory_lease_and_then_lands(server: Server, db: Db) -> None:
    room_id, seat = await _stale_host_seat(server, db)
    lease = MemoryLease(server.runner.deps)
    token = await lease.acquire(uuid.UUID(room_id), "distil-elsewhere")
    assert token is not None
    merging = asyncio.create_task(AccUpdate(server.runner.deps).merge(seat, uuid.uuid4()))
    await asyncio.sleep(0.5)
    assert not merging.done()
    floor = (await memory(db, room_id))["host"]["limits"]["sponsored_post"]["floor"]
    assert floor == "4000"  # nothing written while Distil holds the memory
    await lease.release(uuid.UUID(room_id), token)
    assert await asyncio.wait_for(merging, 10) is True
    merged = await memory(db, room_id)
    assert merged["host"]["limits"]["sponsored_post"]["floor"] == "6000"


async def test_a_merge_that_fails_after_its_writes_publishes_nothing_and_stores_nothing(
    server: Server, db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unit of work's contract on AccUpdate's merge: its MemoryMerged line goes out only once
    the merge commits, so a merge that fails after writing the line, the branch and the merged
    version leaves none of them and tells no subscriber."""
    room_id, seat = await _stale_host_seat(server, db)
    published: list[str] = []
    real_publish = server.broker.publish

    async def watched(channel: str, payload: str) -> None:
        published.append(channel)
        await real_publish(channel, payload)

    async def line_then_a_refused_row(db: Db, *args: Any, **kwargs: Any) -> tuple[str, str] | None:
        line = await system_line(db, *args, **kwargs)
        assert line is not None  # the line is stored and its publish handed to the merge
        # A flag with no room: NOT NULL makes the merge's last flush fail, after its writes.
        db.session.add(Flag(participant_id=seat, level="firewall", evidence="refused"))
        return line

    monkeypatch.setattr(server.broker, "publish", watched)
    monkeypatch.setattr(acc_update_turn, "system_line", line_then_a_refused_row)
    with pytest.raises(IntegrityError):
        await AccUpdate(server.runner.deps).merge(seat, uuid.uuid4())
    assert pane_channel(uuid.UUID(room_id), Seat.HOST) not in published
    try:
        lines = await db.scalars(
            select(Message.body).where(
                Message.participant_id == seat,
                Message.client_message_id.startswith(durable.MERGE_KEY_PREFIX),
            )
        )
        merged = await db.scalar(
            select(Participant.last_merged_memory_version).where(Participant.id == seat)
        )
    finally:
        await db.close()
    assert list(lines) == []
    floor = (await memory(db, room_id))["host"]["limits"]["sponsored_post"]["floor"]
    assert floor == "4000"
    assert merged == 1  # the seed's version: the merge's own is rolled back with it


async def test_a_merge_of_private_terms_lands_with_a_line_in_peoples_words(
    server: Server, db: Db
) -> None:
    """PW1 refuses a pane line naming a field (``private_terms``): the merge line says what
    changed in words, so a merge touching the private terms lands and its line is stored."""
    room_id, seat = await _stale_host_seat(server, db)
    host_id = await db.scalar(select(Participant.account_id).where(Participant.id == seat))
    await db.close()
    assert host_id is not None

    def new_terms(document: dict[str, Any]) -> dict[str, Any]:
        document["private_terms"] = ["no alcohol brands"]
        return document

    try:
        await durable_memory.write(db, host_id, new_terms, now=server.clock.now(), agent="arvist")
        await db.commit()
    finally:
        await db.close()
    assert await AccUpdate(server.runner.deps).merge(seat, uuid.uuid4()) is True
    try:
        lines = list(
            await db.scalars(
                select(Message.body).where(
                    Message.participant_id == seat,
                    Message.client_message_id.startswith(durable.MERGE_KEY_PREFIX),
                )
            )
        )
    finally:
        await db.close()
    assert len(lines) == 1
    assert "your private terms: no alcohol brands" in lines[0]
    assert pane_words.labels_in(lines[0]) == []
    assert (await memory(db, room_id))["host"]["private_terms"] == ["no alcohol brands"]
