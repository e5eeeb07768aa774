"""The operators' queue over HTTP (``domain/ops_queue.py`` Q1-Q6): every source appears with
its level, room, age and link, most urgent then oldest first, paged at a constant statement
count; acknowledge, assign and resolve follow their rules; resolved items leave the queue for
the room's history; new high items alert the operators who opted in; nobody else sees any."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Notification, OpsAction
from tests.conftest import Server
from tests.support.graphql import sign_up
from tests.support.ops_queue import (
    ACK,
    ASSIGN,
    HISTORY,
    QUEUE,
    RESOLVE,
    add_escalation,
    add_failing_webhook,
    add_flag,
    add_payment,
    add_run,
    add_verdict,
    queue_room,
)
from tests.support.partners import create_key, key_client, make_operator


async def _queue(client: Any, **variables: Any) -> dict[str, Any]:
    found: dict[str, Any] = (await client.query(QUEUE, variables))["opsQueue"]
    return found


async def test_every_source_appears_most_urgent_then_oldest_first(server: Server, db: Db) -> None:
    room = await queue_room(server, db)
    operator = await make_operator(db, server.client(), "opsjane")
    now = server.clock.now()
    day = timedelta(days=1)
    # Q1: a fact that needs a person is an item; one that does not is none.
    high_flag = await add_flag(db, room, "high", now - timedelta(hours=3))
    low_flag = await add_flag(db, room, "low", now - timedelta(hours=9))
    code_flag = await add_flag(db, room, "firewall", now - timedelta(hours=1))
    escalation = await add_escalation(db, room, now - 2 * day)
    unrepaired = await add_verdict(db, room, "unrepaired", now - timedelta(hours=5))
    repaired = await add_verdict(db, room, "repaired", now - timedelta(hours=4))
    await add_verdict(db, room, "healthy", now - timedelta(hours=4))
    failed = await add_run(db, room, "failed", now - timedelta(hours=2))
    await add_run(db, room, "done", now - timedelta(hours=2))
    disputed = await add_payment(db, room, "disputed", now - timedelta(hours=6))
    stuck = await add_payment(db, room, "pending", now - 2 * day)
    await add_payment(db, room, "pending", now - timedelta(hours=1))  # not stuck yet
    webhook = await add_failing_webhook(db, room, now - 2 * day)
    await add_failing_webhook(db, room, now - timedelta(hours=2))  # failing, not for a day

    queue = await _queue(operator, first=50)
    ids = [n["id"] for n in queue["nodes"]]
    # Q2: high first (oldest first within a level), then medium, then low.
    assert ids == [
        escalation,
        disputed,
        unrepaired,
        high_flag,
        stuck,
        webhook,
        f"failed_run:{failed.id}",
        code_flag,
        low_flag,
        repaired,
    ]
    by_id = {n["id"]: n for n in queue["nodes"]}
    assert [by_id[i]["level"] for i in (high_flag, code_flag, low_flag)] == [
        "HIGH",
        "MEDIUM",
        "LOW",
    ]
    flag = by_id[high_flag]
    assert flag["kind"] == "FLAG"
    assert flag["roomId"] == str(room.room_id)
    assert flag["link"] == f"/ops/rooms/{room.room_id}"
    assert flag["roomTitle"]
    assert 3 * 3600 <= flag["ageSeconds"] < 3 * 3600 + 60
    assert by_id[webhook]["roomId"] is None
    assert by_id[webhook]["link"] is None
    assert by_id[f"failed_run:{failed.id}"]["summary"] == "persona failed: model unavailable"
    assert queue["edges"][0]["node"]["id"] == ids[0]
    assert queue["pageInfo"]["hasNextPage"] is False

    high = await _queue(operator, level="HIGH")
    assert [n["id"] for n in high["nodes"]] == ids[:4]
    flags = await _queue(operator, kind="FLAG")
    assert [n["id"] for n in flags["nodes"]] == [high_flag, code_flag, low_flag]


async def test_pages_follow_on_at_a_constant_statement_count(
    server: Server, db: Db, count_statements: Any
) -> None:
    room = await queue_room(server, db)
    operator = await make_operator(db, server.client(), "opsjane")
    now = server.clock.now()
    made = [await add_flag(db, room, "medium", now - timedelta(minutes=m)) for m in range(12)]
    await _queue(operator, first=1)  # the session is read and cached before counting

    with count_statements() as small:
        first = await _queue(operator, first=2)
    with count_statements() as large:
        await _queue(operator, first=10)
    assert small
    assert len(small) == len(large), (small, large)

    seen = [n["id"] for n in first["nodes"]]
    after = first["pageInfo"]["endCursor"]
    while after is not None:
        page = await _queue(operator, first=5, after=after)
        assert page["pageInfo"]["hasPreviousPage"] is True
        seen += [n["id"] for n in page["nodes"]]
        after = page["pageInfo"]["endCursor"] if page["pageInfo"]["hasNextPage"] else None
    assert seen == list(reversed(made))  # oldest first, each once
    assert await operator.error_codes(QUEUE, {"after": "bm90LWEtY3Vyc29y"}) == ["BAD_USER_INPUT"]


async def test_acknowledge_assign_and_resolve_follow_their_rules(server: Server, db: Db) -> None:
    room = await queue_room(server, db)
    jane = await make_operator(db, server.client(), "opsjane")
    await make_operator(db, server.client(), "opsraj")
    now = server.clock.now()
    item = await add_flag(db, room, "high", now - timedelta(hours=1))
    other = await add_flag(db, room, "low", now - timedelta(hours=1))

    first = (await jane.query(ACK, {"id": item}))["acknowledgeQueueItem"]
    again = (await jane.query(ACK, {"id": item}))["acknowledgeQueueItem"]
    assert first["acknowledgedAt"]
    assert again["acknowledgedAt"] == first["acknowledgedAt"]  # Q3

    assert await jane.error_codes(ASSIGN, {"id": item, "op": "devraman"}) == ["BAD_USER_INPUT"]
    assert await jane.error_codes(ASSIGN, {"id": item, "op": "nobody"}) == ["NOT_FOUND"]
    assigned = (await jane.query(ASSIGN, {"id": item, "op": "@opsraj"}))["assignQueueItem"]
    assert assigned["assignee"] == "opsraj"  # Q4
    listed = {n["id"]: n for n in (await _queue(jane))["nodes"]}
    assert listed[item]["assignee"] == "opsraj"
    assert listed[item]["acknowledgedAt"] == first["acknowledgedAt"]

    assert await jane.error_codes(RESOLVE, {"id": item, "note": "  "}) == ["BAD_USER_INPUT"]
    done = (await jane.query(RESOLVE, {"id": item, "note": "Called the brand."}))[
        "resolveQueueItem"
    ]
    assert done["resolvedAt"]
    assert done["resolvedBy"] == "opsjane"
    # Q5: it leaves the queue and stays in the room's history; it cannot be acted on again.
    assert [n["id"] for n in (await _queue(jane))["nodes"]] == [other]
    history = (await jane.query(HISTORY, {"room": str(room.room_id)}))["opsRoom"]
    [entry] = history["queueHistory"]["nodes"]
    assert (entry["id"], entry["note"]) == (item, "Called the brand.")
    assert (entry["resolvedBy"], entry["assignee"]) == ("opsjane", "opsraj")
    assert await jane.error_codes(RESOLVE, {"id": item, "note": "again"}) == ["CONFLICT"]
    assert await jane.error_codes(ACK, {"id": item}) == ["CONFLICT"]
    assert await jane.error_codes(ASSIGN, {"id": item, "op": "opsraj"}) == ["CONFLICT"]

    # Resolving an item nobody acknowledged acknowledges it too.
    direct = (await jane.query(RESOLVE, {"id": other, "note": "Noise."}))["resolveQueueItem"]
    assert direct["resolvedAt"]
    assert (await _queue(jane))["nodes"] == []

    missing = "flag:00000000-0000-0000-0000-000000000000"
    assert await jane.error_codes(ACK, {"id": missing}) == ["NOT_FOUND"]
    assert await jane.error_codes(ACK, {"id": "nonsense"}) == ["BAD_USER_INPUT"]
    try:
        actions = [a.action for a in await db.scalars(select(OpsAction))]
    finally:
        await db.close()
    for action in ("acknowledge_queue_item", "assign_queue_item", "resolve_queue_item"):
        assert action in actions
    assert actions.count("acknowledge_queue_item") == 1  # the idempotent repeat wrote nothing


async def test_non_operators_see_nothing(server: Server, db: Db) -> None:
    room = await queue_room(server, db)
    item = await add_flag(db, room, "high", server.clock.now())
    operator = await make_operator(db, server.client(), "opsjane")
    stranger = server.client()
    await sign_up(stranger, "stranger")
    offers_key = (await create_key(room.host, ["offers:read"]))["key"]
    for client in (room.host, stranger, server.client()):
        assert await client.error_codes(QUEUE) == ["NOT_FOUND"]
        for document, variables in (
            (ACK, {"id": item}),
            (ASSIGN, {"id": item, "op": "opsjane"}),
            (RESOLVE, {"id": item, "note": "mine"}),
        ):
            assert await client.error_codes(document, variables) == ["NOT_FOUND"]
    # A key reaches the queue only through an ops scope (K1); refused before it is read.
    keyed = key_client(server, offers_key)
    assert await keyed.error_codes(QUEUE) in (["FORBIDDEN"], ["NOT_FOUND"])
    assert await keyed.error_codes(ACK, {"id": item}) in (["FORBIDDEN"], ["NOT_FOUND"])
    ops_key = (await create_key(operator, ["ops:read"]))["key"]
    assert [n["id"] for n in (await _queue(key_client(server, ops_key)))["nodes"]] == [item]
    # Nothing was acted on.
    assert (await _queue(operator))["nodes"][0]["acknowledgedAt"] is None


SET_ALERTS = """
mutation { setNotificationPreferences(preferences: [{kind: OPERATOR_ALERT, mode: IMMEDIATE}])
  { kind mode } }
"""


async def test_new_high_items_alert_the_operators_who_opted_in(server: Server, db: Db) -> None:
    room = await queue_room(server, db)
    jane = await make_operator(db, server.client(), "opsjane")
    await make_operator(db, server.client(), "opsraj")  # keeps alerts off (the default)
    await jane.query(SET_ALERTS)
    now = server.clock.now()
    await add_flag(db, room, "high", now, evidence="the brand asked for a human, twice")
    await add_flag(db, room, "medium", now)
    await add_escalation(db, room, now)  # alerted when it escalated, not again here

    await server.runner.sweep()
    await server.runner.sweep()  # Q6: once per item and operator

    try:
        rows = list(
            await db.scalars(select(Notification).where(Notification.kind == "operator_alert"))
        )
    finally:
        await db.close()
    [alert] = rows
    assert alert.title.startswith("Needs a person: a frustration flag")
    assert "asked for a human" not in alert.title + alert.body  # the evidence stays in /ops
    assert alert.link == f"/ops/rooms/{room.room_id}"
    assert alert.status == "pending"  # an email, through the outbox like every one
    bell = await jane.query("{ notifications { nodes { kind title } } }")
    assert [n["kind"] for n in bell["notifications"]["nodes"]] == ["OPERATOR_ALERT"]
