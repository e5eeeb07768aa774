"""Operators act on what they read, over HTTP: a room read whole (both transcripts, memory,
dispatch record, offers) and every read recorded; room memory corrected through the writer's
rules (memory_edits ME1-ME5) with a history that reverts; non-operators refused."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from dealroom.persistence.db import Db
from dealroom.persistence.leases import LeaseRepository
from dealroom.persistence.models import OperatorRead, Room
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.offers import open_deal, settle
from tests.support.partners import make_operator
from tests.support.rooms import room_memory

READ_WHOLE = """
query($id: ID!) {
  opsRoom(roomId: $id) {
    id memory memoryVersion
    host: transcript(seat: HOST, first: 50) { seat nodes { body authorKind } hasNextPage before }
    visitor: transcript(seat: VISITOR, first: 1) { nodes { body } hasNextPage before }
    dispatches { nodes { fromPane toPane substance status } }
    offers { id stage payments { status } }
    goalEvents { nodes { goalKey } }
    runs(first: 5) { nodes { agent verdict usage { priceUsd } } }
  }
}
"""
READS = "query($id: ID!) { opsRoom(roomId: $id) { reads { nodes { what operatorId } } } }"
EDIT = """
mutation($id: ID!, $op: MemoryOp!, $path: String!, $value: String) {
  editRoomMemory(roomId: $id, op: $op, path: $path, value: $value, reason: "correcting") {
    version changes { id path oldValue newValue agent reason }
  }
}
"""
HISTORY = """
query($id: ID!) {
  roomMemoryHistory(roomId: $id, first: 50) { nodes { id path agent runId operatorId } }
}
"""
REVERT = """
mutation($change: ID!) {
  revertRoomMemoryChange(changeId: $change, reason: "undo") {
    changes { path oldValue newValue revertsId }
  }
}
"""


async def _set_memory(db: Db, room_id: str, document: dict[str, Any]) -> None:
    """A row factory: the room's memory as a test needs it (not what the test is about)."""
    await db.execute(update(Room).where(Room.id == uuid.UUID(room_id)).values(memory=document))
    await db.commit()
    await db.close()


async def test_an_operator_reads_a_room_whole_and_every_read_is_recorded(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "Hello, we want two reels in March")
    await settle(server)
    await post(d.visitor, d.room_id, "And a story")
    await settle(server)
    assert await d.host.error_codes(READ_WHOLE, {"id": d.room_id}) == ["NOT_FOUND"]
    operator = await make_operator(db, server.client(), "opsjane")

    room = (await operator.query(READ_WHOLE, {"id": d.room_id}))["opsRoom"]
    assert room["memoryVersion"] >= 0
    assert isinstance(room["memory"], dict)
    assert room["host"]["seat"] == "host"
    visitor = room["visitor"]
    assert visitor["nodes"][0]["body"] == "And a story" or visitor["hasNextPage"]
    older = await operator.query(
        "query($id: ID!, $b: Int) { opsRoom(roomId: $id) "
        "{ transcript(seat: VISITOR, first: 50, before: $b) { nodes { body } } } }",
        {"id": d.room_id, "b": visitor["before"]},
    )
    bodies = [m["body"] for m in older["opsRoom"]["transcript"]["nodes"]]
    assert "Hello, we want two reels in March" in bodies
    assert visitor["nodes"][0]["body"] not in bodies  # paged: the next page is older lines

    reads = (await operator.query(READS, {"id": d.room_id}))["opsRoom"]["reads"]["nodes"]
    whole = next(r for r in reads if "transcript:host" in r["what"])
    assert {"memory", "transcript:visitor", "dispatches", "offers", "runs"} <= set(whole["what"])
    assert whole["operatorId"]
    stored = list(await db.scalars(select(OperatorRead)))
    await db.close()
    assert len(stored) == 3  # the whole read, the older page, the read of the reads


async def test_an_operator_edit_is_a_history_row_and_reverts(server: Server, db: Db) -> None:
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "Our launch date is March 3")
    await settle(server)
    operator = await make_operator(db, server.client(), "opsjane")
    variables = {"id": d.room_id, "op": "SET", "path": "deal.launch", "value": "March 3"}
    assert await d.host.error_codes(EDIT, variables) == ["NOT_FOUND"]

    edit = (await operator.query(EDIT, variables))["editRoomMemory"]
    [change] = edit["changes"]
    assert change["path"] == "deal.launch"
    assert change["newValue"] == "March 3"
    assert change["agent"] == "operator"
    assert change["reason"] == "correcting"
    assert (await room_memory(db, d.room_id))["deal"]["launch"] == "March 3"
    history = (await operator.query(HISTORY, {"id": d.room_id}))["roomMemoryHistory"]["nodes"]
    assert history[0]["id"] == change["id"]
    assert history[0]["operatorId"]
    # Distil's own writes are history rows too, each naming its run.
    assert any(h["agent"] == "distil" and h["runId"] for h in history)

    reverted = (await operator.query(REVERT, {"change": change["id"]}))["revertRoomMemoryChange"]
    assert reverted["changes"] == [
        {"path": "deal.launch", "oldValue": "March 3", "newValue": None, "revertsId": change["id"]}
    ]
    assert "launch" not in (await room_memory(db, d.room_id)).get("deal", {})
    assert await operator.error_codes(REVERT, {"change": change["id"]}) == ["CONFLICT"]  # ME4


async def test_reserved_parts_and_bad_paths_are_refused_and_nothing_is_written(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    operator = await make_operator(db, server.client(), "opsjane")
    before = await room_memory(db, d.room_id)
    for path, value in (
        ("goals.new-offer.status", "met"),  # M2: code only
        ("plans.visitor", "x"),
        ("deal", "x"),  # M4: never a whole branch
        ("deal..x", "x"),  # M1
        ("deal.notes", "x" * 5000),  # M5
    ):
        variables = {"id": d.room_id, "op": "SET", "path": path, "value": value}
        assert await operator.error_codes(EDIT, variables) == ["BAD_USER_INPUT"], path
    assert await room_memory(db, d.room_id) == before


async def test_an_edit_putting_a_host_private_value_where_a_visitor_reads_is_refused(
    server: Server, db: Db
) -> None:
    """Canary (ME2, memory M14): even a figure the visitor's side has said is refused where a
    visitor-side pane reads when it is a host's private limit."""
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "Could you do 4200 USD for the reel?")
    await settle(server)
    memory = await room_memory(db, d.room_id)
    memory.setdefault("host", {})["limits"] = {
        "reel": {"floor": "4200", "currency": "USD", "source": "m1"}
    }
    await _set_memory(db, d.room_id, memory)
    operator = await make_operator(db, server.client(), "opsjane")
    variables = {"id": d.room_id, "op": "SET", "path": "deal.price", "value": "4200 USD"}
    body = await operator.raw(EDIT, variables)
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
    assert "private values" in body["errors"][0]["message"]
    assert "price" not in (await room_memory(db, d.room_id)).get("deal", {})


async def test_an_edit_waits_for_no_writer_it_answers_conflict_while_distil_holds_the_lease(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "Our launch date is March 3")
    await settle(server)
    operator = await make_operator(db, server.client(), "opsjane")
    now = server.clock.now()
    token = await LeaseRepository(db).grant(
        uuid.UUID(d.room_id), "distil-run", now, now + timedelta(minutes=5)
    )
    await db.commit()
    await db.close()
    assert token is not None
    variables = {"id": d.room_id, "op": "SET", "path": "deal.launch", "value": "March 3"}
    assert await operator.error_codes(EDIT, variables) == ["CONFLICT"]
    assert "launch" not in (await room_memory(db, d.room_id)).get("deal", {})
    await LeaseRepository(db).release(uuid.UUID(d.room_id), token)
    await db.commit()
    await db.close()
    assert (await operator.query(EDIT, variables))["editRoomMemory"]["changes"]


async def test_the_host_reads_its_own_branchs_history_only(server: Server, db: Db) -> None:
    d = await open_deal(server)
    await post(d.host, d.room_id, "Note for me: I prefer morning shoots")
    await post(d.visitor, d.room_id, "Our launch date is March 3")
    await settle(server)
    operator = await make_operator(db, server.client(), "opsjane")
    await operator.query(
        EDIT, {"id": d.room_id, "op": "SET", "path": "deal.launch", "value": "March 3"}
    )
    host_view = (await d.host.query(HISTORY, {"id": d.room_id}))["roomMemoryHistory"]["nodes"]
    assert all(h["path"].startswith("host.") for h in host_view)
    assert await d.visitor.error_codes(HISTORY, {"id": d.room_id}) == ["NOT_FOUND"]
