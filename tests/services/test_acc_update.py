"""AccUpdate writes under the room's memory lease: while another writer (Distil) holds it, the
merge waits and writes nothing; once it is free, the merge lands, fenced like Distil."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant
from dealroom.services import durable_memory
from dealroom.services.acc_update_turn import AccUpdate
from dealroom.services.distil_turn import MemoryLease
from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up
from tests.support.offers import settle
from tests.support.turns import HOME, memory


async def test_a_merge_waits_for_the_memory_lease_and_then_lands(server: Server, db: Db) -> None:
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
