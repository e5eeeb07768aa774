"""Every operator read and action is in the audit trail: ``opsActions`` pages it newest first
and ``GET /ops/actions.jsonl`` exports it; anyone else reads nothing and leaves no record."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import func, select

from dealroom.persistence.db import Db
from dealroom.persistence.models import OpsAction
from dealroom.services.accounts.service import set_operator
from dealroom.services.ops import audit
from tests.conftest import Server
from tests.support.graphql import Client, sign_up
from tests.support.offers import open_deal
from tests.support.partners import create_key, key_client, make_operator

ACTIONS = """
query($first: Int!, $after: String, $room: ID) {
  opsActions(first: $first, after: $after, roomId: $room) {
    nodes { id action operatorId roomId detail createdAt } hasNextPage endCursor
  }
}
"""
READS: list[tuple[str, str, dict[str, Any]]] = [
    ("opsRooms", "{ opsRooms(first: 5) { nodes { id } } }", {}),
    ("opsRoom", "query($id: ID!) { opsRoom(roomId: $id) { id } }", {"id": "ROOM"}),
    ("agentPrompts", "{ agentPrompts { name } }", {}),
    ("opsAccount", '{ opsAccount(handle: "devraman") { handle } }', {}),
    ("roomOps", "query($id: ID!) { roomOps(roomId: $id) { roomId } }", {"id": "ROOM"}),
    (
        "roomMemoryHistory",
        "query($id: ID!) { roomMemoryHistory(roomId: $id) { nodes { id } } }",
        {"id": "ROOM"},
    ),
    ("opsPayments", "{ opsPayments { held { offerId } } }", {}),
]


async def audit_count(db: Db) -> int:
    try:
        return int(await db.scalar(select(func.count(OpsAction.id))) or 0)
    finally:
        await db.close()


def _bound(variables: dict[str, Any], room_id: str) -> dict[str, Any]:
    return {k: room_id if v == "ROOM" else v for k, v in variables.items()}


async def _all_actions(client: Client, room_id: str | None = None) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        page = (await client.query(ACTIONS, {"first": 3, "after": after, "room": room_id}))[
            "opsActions"
        ]
        nodes.extend(page["nodes"])
        if not page["hasNextPage"]:
            return nodes
        after = page["endCursor"]


async def test_every_operator_read_and_action_is_recorded_newest_first(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    operator = await make_operator(db, server.client(), "opsjane")
    before = await audit_count(db)
    # Nobody else's reads are recorded (they are refused), operators' all are.
    for _, document, variables in READS:
        assert await d.visitor.error_codes(document, _bound(variables, d.room_id)) == ["NOT_FOUND"]
    assert await audit_count(db) == before
    for _, document, variables in READS:
        await operator.query(document, _bound(variables, d.room_id))
    await operator.query(
        "mutation($id: ID!) { takeOverPane(roomId: $id, seat: VISITOR) { seat } }",
        {"id": d.room_id},
    )
    records = await _all_actions(operator)
    actions = [r["action"] for r in records]
    # Newest first: the paging reads themselves, the takeover, then each read in turn.
    assert actions[:2] == ["read:opsActions", "take_over_pane"], actions
    expected = [f"read:{field}" for field, _, _ in READS]
    assert [a for a in actions if a in expected][::-1] == expected
    stamps = [r["createdAt"] for r in records]
    assert stamps == sorted(stamps, reverse=True)
    by_action = {r["action"]: r for r in records}
    assert by_action["read:opsRoom"]["roomId"] == d.room_id
    assert by_action["read:opsAccount"]["detail"] == {
        "field": "opsAccount",
        "args": {"handle": "devraman"},
    }
    assert {r["operatorId"] for r in records} == {records[0]["operatorId"]}
    # One room's trail.
    mine = await _all_actions(operator, d.room_id)
    assert {r["roomId"] for r in mine} == {d.room_id}
    assert "take_over_pane" in {r["action"] for r in mine}
    # Room.ops is the same read reached from the room: refused to its host, recorded once the
    # flag makes that host an operator.
    room_ops = "query($id: ID!) { room(id: $id) { ops { id } } }"
    assert await d.host.error_codes(room_ops, {"id": d.room_id}) == ["NOT_FOUND"]
    assert (await _all_actions(operator))[0]["action"] == "read:opsActions"
    await set_operator(db, handle="devraman", operator=True)
    await db.commit()
    await db.close()
    await d.host.query(room_ops, {"id": d.room_id})
    latest = (await operator.query(ACTIONS, {"first": 2}))["opsActions"]["nodes"][1]
    assert (latest["action"], latest["roomId"]) == ("read:Room.ops", d.room_id)


async def test_keys_reads_are_recorded_only_when_the_scope_opens_them(
    server: Server, db: Db
) -> None:
    operator = await make_operator(db, server.client(), "opsjane")
    offers_only = key_client(server, (await create_key(operator, ["offers:read"]))["key"])
    reader = key_client(server, (await create_key(operator, ["ops:read"]))["key"])
    before = await audit_count(db)
    assert await offers_only.error_codes("{ agentPrompts { name } }") == ["NOT_FOUND"]
    assert await offers_only.error_codes(ACTIONS, {"first": 5}) == ["NOT_FOUND"]
    assert await audit_count(db) == before
    await reader.query("{ agentPrompts { name } }")
    records = (await operator.query(ACTIONS, {"first": 5}))["opsActions"]["nodes"]
    assert records[1]["action"] == "read:agentPrompts"
    assert records[1]["detail"] == {"field": "agentPrompts", "args": {}, "apiKey": True}


async def _export(client: Client, path: str = "/ops/actions.jsonl") -> tuple[int, str]:
    response = await client.http.get(path, headers=client.headers)
    return response.status_code, response.text


async def test_the_trail_exports_as_json_lines_to_operators_only(server: Server, db: Db) -> None:
    d = await open_deal(server)
    operator = await make_operator(db, server.client(), "opsjane")
    await operator.query("query($id: ID!) { opsRoom(roomId: $id) { id } }", {"id": d.room_id})
    await operator.query("{ agentPrompts { name } }")
    status, body = await _export(operator)
    assert status == 200
    lines = [json.loads(line) for line in body.splitlines()]
    # The export is a read of its own, recorded before the first line.
    assert [x["action"] for x in lines] == [
        "read:opsActionsExport",
        "read:agentPrompts",
        "read:opsRoom",
    ]
    assert {x["operatorHandle"] for x in lines} == {"opsjane"}
    assert lines[2]["roomId"] == d.room_id
    assert set(lines[0]) == {
        "id",
        "createdAt",
        "operatorId",
        "operatorHandle",
        "action",
        "roomId",
        "detail",
    }
    status, body = await _export(operator, f"/ops/actions.jsonl?roomId={d.room_id}")
    assert status == 200
    assert {json.loads(x)["roomId"] for x in body.splitlines()} == {d.room_id}
    assert (await _export(operator, "/ops/actions.jsonl?roomId=nope"))[0] == 400
    # Everyone else: a page that is not there, and nothing recorded.
    before = await audit_count(db)
    stranger = server.client()
    await sign_up(stranger, "stranger")
    offers_only = key_client(server, (await create_key(operator, ["offers:read"]))["key"])
    for client in (server.client(), stranger, d.host, offers_only):
        status, body = await _export(client)
        assert (status, body) == (404, "Not Found")
    assert await audit_count(db) == before
    reader = key_client(server, (await create_key(operator, ["ops:read"]))["key"])
    status, body = await _export(reader)
    assert status == 200
    assert json.loads(body.splitlines()[0])["detail"]["apiKey"] is True


async def test_an_export_pages_through_the_whole_trail(
    server: Server, db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    operator = await make_operator(db, server.client(), "opsjane")
    # The batches are what is tested, not their size.
    monkeypatch.setattr(audit, "EXPORT_BATCH", 2)
    for _ in range(4):
        await operator.query("{ agentPrompts { name } }")
    status, body = await _export(operator)
    ids = [json.loads(x)["id"] for x in body.splitlines()]
    assert status == 200
    assert len(ids) == 5
    assert len(set(ids)) == 5
