"""The operators' surface: every ops field refused to non-operators and to keys without the scope;
rooms, runs, goal events, verdicts, spend (with unpriced calls) and prompts read; models picked;
goals overridden (the effect fires once); panes taken over (no agent reply); every action
audited."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

import dealroom.agents
from dealroom.agents import link_reader
from dealroom.agents.models.base import AgentName
from dealroom.config import Settings
from dealroom.jobs.takeover import SILENCED
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, GuardVerdict, ModelCall, OpsAction
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.service import set_operator
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.gate import GATE_ROOM
from tests.support.graphql import post, sign_up
from tests.support.offers import ROOM_STAGE, negotiate_to_offer, open_deal, settle
from tests.support.partners import create_key, key_client, make_operator
from tests.support.turns import messages_in, rows
from tests.support.watches import QUIET

ROOM = "00000000-0000-0000-0000-000000000000"

OPS_READS: list[tuple[str, dict[str, Any]]] = [
    ("{ opsRooms(first: 5) { nodes { id } } }", {}),
    ("query($id: ID!) { opsRoom(roomId: $id) { id } }", {"id": ROOM}),
    ("{ agentPrompts { name } }", {}),
    ('{ opsAccount(handle: "devraman") { handle } }', {}),
    ("{ opsActions { nodes { id } } }", {}),
    ("query($id: ID!) { roomOps(roomId: $id) { roomId } }", {"id": ROOM}),
]
OPS_WRITES: list[tuple[str, dict[str, Any]]] = [
    (
        "mutation($id: ID!) { setRoomModels(roomId: $id, picks: []) { id } }",
        {"id": ROOM},
    ),
    (
        'mutation($id: ID!) { overrideGoal(roomId: $id, key: "new-offer", status: "met",'
        ' reason: "x") { closedOffer } }',
        {"id": ROOM},
    ),
    ("mutation($id: ID!) { takeOverPane(roomId: $id, seat: VISITOR) { seat } }", {"id": ROOM}),
    ("mutation($id: ID!) { releasePane(roomId: $id, seat: VISITOR) }", {"id": ROOM}),
    (
        'mutation($id: ID!) { operatorPost(roomId: $id, seat: VISITOR, body: "hi",'
        ' clientMessageId: "c1") { id } }',
        {"id": ROOM},
    ),
]

OPS_ROOM = """
query($id: ID!) {
  opsRoom(roomId: $id) {
    id hostHandle stage flagCount modelPicks
    totalSpend { calls priceUsd unpricedCalls }
    runs(first: 50) {
      nodes { agent pane status verdict noOp error usage { calls inputTokens priceUsd } }
      hasNextPage endCursor
    }
    goalEvents { nodes { goalKey fromStatus toStatus agent byPane } }
    verdicts(agent: "persona") { nodes { agent verdict } }
    takeovers { seat }
    byAgent: spend(by: AGENT) { key calls priceUsd unpricedCalls }
    byModel: spend(by: MODEL) { key calls priceUsd unpricedCalls }
    byDay: spend(by: DAY) { key calls }
  }
}
"""
OVERRIDE = """
mutation($id: ID!, $status: String!) {
  overrideGoal(roomId: $id, key: "new-offer", status: $status, reason: "ops call") {
    goalEvent { fromStatus toStatus agent byPane } queuedRuns closedOffer
  }
}
"""
TAKE = "mutation($id: ID!) { takeOverPane(roomId: $id, seat: VISITOR) { seat operatorId } }"
RELEASE = "mutation($id: ID!) { releasePane(roomId: $id, seat: VISITOR) }"
SAY = """
mutation($id: ID!, $body: String!, $cid: String!) {
  operatorPost(roomId: $id, seat: VISITOR, body: $body, clientMessageId: $cid) {
    id authorKind body seat
  }
}
"""


async def audit_actions(db: Db) -> list[str]:
    try:
        found = await db.scalars(select(OpsAction).order_by(OpsAction.created_at))
        return [a.action for a in found]
    finally:
        await db.close()


async def test_every_ops_field_is_not_found_to_non_operators_and_keys_without_the_scope(
    server: Server, db: Db
) -> None:
    someone = server.client()
    await sign_up(someone, "someone")
    for document, variables in OPS_READS + OPS_WRITES:
        assert await someone.error_codes(document, variables) == ["NOT_FOUND"], document
    operator = await make_operator(db, server.client(), "opsjane")
    offers_only = key_client(server, (await create_key(operator, ["offers:read"]))["key"])
    reader = key_client(server, (await create_key(operator, ["ops:read"]))["key"])
    for document, variables in OPS_READS + OPS_WRITES:
        assert await offers_only.error_codes(document, variables) == ["NOT_FOUND"], document
    for document, variables in OPS_WRITES:
        assert await reader.error_codes(document, variables) == ["NOT_FOUND"], document
    assert (await reader.query("{ agentPrompts { name } }"))["agentPrompts"]
    # The flag, not the scope, makes an operator (K4): a key keeps working only while its
    # account is one.
    await set_operator(db, handle="opsjane", operator=False)
    await db.commit()
    await db.close()
    assert await reader.error_codes("{ agentPrompts { name } }") == ["NOT_FOUND"]


ROOM_OPS = "query($id: ID!) { room(id: $id) { id ops { id runs { nodes { agent } } } } }"
ROOM_OPS_ONLY = "query($id: ID!) { room(id: $id) { ops { id hostHandle } } }"
"""Room.ops's own check (the nested connections check again)."""


async def test_room_ops_is_refused_to_the_rooms_own_host_and_read_by_an_operator(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "Hello there")
    await settle(server)
    assert (await d.host.query("query($id: ID!) { room(id: $id) { id } }", {"id": d.room_id}))[
        "room"
    ]  # the host reads the room itself, not its ops
    for document in (ROOM_OPS, ROOM_OPS_ONLY):
        assert await d.host.error_codes(document, {"id": d.room_id}) == ["NOT_FOUND"], document
    # The same reader, once the flag makes them an operator: Room.ops reads as opsRoom.
    await set_operator(db, handle="devraman", operator=True)
    await db.commit()
    await db.close()
    room = (await d.host.query(ROOM_OPS, {"id": d.room_id}))["room"]
    assert room["ops"]["id"] == d.room_id
    assert "persona" in {r["agent"] for r in room["ops"]["runs"]["nodes"]}


async def test_rooms_runs_spend_and_prompts_read_with_unpriced_calls_counted(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    await negotiate_to_offer(server, d)
    operator = await make_operator(db, server.client(), "opsjane")
    # A call to a model the price table does not know: counted, never summed as 0.
    await db.add(
        ModelCall(
            room_id=uuid.UUID(d.room_id),
            agent="persona",
            engine="gemini",
            model="mystery-model",
            input_tokens=10,
            output_tokens=5,
            price_usd=None,
        )
    )
    await db.commit()
    await db.close()

    found = await operator.query(
        'query { opsRooms(filter: {hostHandle: "devraman", stage: WRITTEN_AWAITING_BRAND}) '
        "{ nodes { id stage } } }"
    )
    assert [r["id"] for r in found["opsRooms"]["nodes"]] == [d.room_id]
    none = await operator.query(
        '{ opsRooms(filter: {hostHandle: "devraman", stage: BOOKED_PAYMENT_HELD}) '
        "{ nodes { id } } }"
    )
    assert none["opsRooms"]["nodes"] == []
    paged = await operator.query("{ opsRooms(first: 1) { nodes { id } hasNextPage endCursor } }")
    assert paged["opsRooms"]["hasNextPage"]  # the home room and the deal room
    after = paged["opsRooms"]["endCursor"]
    rest = await operator.query(
        "query($after: String) { opsRooms(first: 5, after: $after) { nodes { id } } }",
        {"after": after},
    )
    assert paged["opsRooms"]["nodes"][0]["id"] not in {r["id"] for r in rest["opsRooms"]["nodes"]}

    room = (await operator.query(OPS_ROOM, {"id": d.room_id}))["opsRoom"]
    agents = {r["agent"] for r in room["runs"]["nodes"]}
    assert {"persona", "distil", "offer_gen"} <= agents
    assert all(r["status"] == "done" for r in room["runs"]["nodes"])
    assert {v["verdict"] for v in room["verdicts"]["nodes"]} <= {"applied", "no-op"}
    assert room["goalEvents"]["nodes"][0]["toStatus"] == "met"
    assert room["totalSpend"]["unpricedCalls"] == 1
    by_model = {s["key"]: s for s in room["byModel"]}
    assert by_model["mystery-model"]["unpricedCalls"] == 1
    assert Decimal(by_model["mystery-model"]["priceUsd"]) == 0
    assert sum(s["calls"] for s in room["byAgent"]) == room["totalSpend"]["calls"]
    assert sum(s["calls"] for s in room["byDay"]) == room["totalSpend"]["calls"]
    account = await operator.query(
        '{ opsAccount(handle: "devraman") { handle spend(by: AGENT) { key unpricedCalls } '
        "rooms { nodes { id } } } }"
    )
    assert d.room_id in {r["id"] for r in account["opsAccount"]["rooms"]["nodes"]}
    assert sum(s["unpricedCalls"] for s in account["opsAccount"]["spend"]) == 1


# Run kinds with no prompt of their own: the gate speaks with the persona's, a replay calls
# no model. Any other agent must have its prompt listed.
NO_PROMPT_OF_THEIR_OWN = {AgentName.GATE, AgentName.REPLAY}
NO_RUN_OF_THEIR_OWN = {link_reader.AGENT}
"""Agents whose prompt runs as a call inside another job, never as a run kind."""


def prompts_in_code() -> dict[str, str]:
    """Every agent module's text that runs: its ``SYSTEM`` (prompt plus vocabularies) or,
    where the prompt is sent as is, its ``PROMPT``."""
    found: dict[str, str] = {}
    for module_info in pkgutil.iter_modules(dealroom.agents.__path__):
        module = importlib.import_module(f"dealroom.agents.{module_info.name}")
        text = getattr(module, "SYSTEM", getattr(module, "PROMPT", None))
        if isinstance(text, str):
            found[module_info.name] = text
    return found


async def test_every_agents_prompt_is_listed_as_the_text_that_runs(server: Server, db: Db) -> None:
    operator = await make_operator(db, server.client(), "opsjane")
    prompts = (await operator.query("{ agentPrompts { name text sha256 } }"))["agentPrompts"]
    listed = {p["name"]: p for p in prompts}
    in_code = prompts_in_code()
    assert set(listed) == set(in_code)
    assert (
        set(listed) == {a.value for a in AgentName} - NO_PROMPT_OF_THEIR_OWN | NO_RUN_OF_THEIR_OWN
    )
    for name, text in in_code.items():
        assert listed[name]["text"] == text, name
        assert listed[name]["sha256"] == hashlib.sha256(text.encode()).hexdigest(), name


async def test_room_models_are_validated_used_and_audited(server: Server, db: Db) -> None:
    d = await open_deal(server)
    operator = await make_operator(db, server.client(), "opsjane")
    pick = (
        "mutation($id: ID!, $model: String!, $guard: String!) { setRoomModels(roomId: $id, "
        'picks: [{agent: "persona", model: $model}, {agent: "guard", model: $guard}]) '
        "{ modelPicks } }"
    )
    chosen = {"id": d.room_id, "model": "gemini-2.5-pro", "guard": "gemini-2.0-flash"}
    bad = await operator.error_codes(pick, chosen | {"model": "gpt-nonexistent"})
    assert bad == ["BAD_USER_INPUT"]
    done = await operator.query(pick, chosen)
    assert done["setRoomModels"]["modelPicks"] == {
        "persona": "gemini-2.5-pro",
        "guard": "gemini-2.0-flash",  # the configured Guard model is gemini-2.5-pro
    }
    await post(d.visitor, d.room_id, "Hello there")
    await settle(server)
    server.clock.advance(QUIET)  # the room goes quiet: its watch queues the Guard
    await server.runner.sweep()
    await settle(server)
    calls = await rows(db, ModelCall, d.room_id)
    assert {c.model for c in calls if c.agent == "persona"} == {"gemini-2.5-pro"}
    assert {c.model for c in calls if c.agent == "guard"} == {"gemini-2.0-flash"}
    assert await audit_actions(db) == ["set_room_models"]


GUARD_VERDICTS = """
query($id: ID!, $after: String) {
  opsRoom(roomId: $id) {
    verdicts(agent: "guard", first: 1, after: $after) {
      nodes { runId agent verdict detail } hasNextPage endCursor
    }
    runs(agent: "guard") { nodes { id verdict } }
  }
}
"""


async def test_the_guards_own_verdicts_are_read_in_the_rooms_verdicts(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    operator = await make_operator(db, server.client(), "opsjane")
    for said in ("Hello there", "We'd like one sponsored post in May."):
        await post(d.visitor, d.room_id, said)
        await settle(server)
        server.clock.advance(QUIET)  # the room goes quiet: its watch queues the Guard
        await server.runner.sweep()
        await settle(server)
    audits = sorted(await rows(db, GuardVerdict, d.room_id), key=lambda v: v.created_at)
    assert [v.verdict for v in audits] == ["healthy", "healthy"]
    first = (await operator.query(GUARD_VERDICTS, {"id": d.room_id}))["opsRoom"]
    page = first["verdicts"]
    assert page["nodes"] == [
        {"runId": str(audits[1].run_id), "agent": "guard", "verdict": "healthy", "detail": None}
    ]  # newest first, the audit's verdict (not the run row's "no-op")
    assert page["hasNextPage"]
    rest = (await operator.query(GUARD_VERDICTS, {"id": d.room_id, "after": page["endCursor"]}))[
        "opsRoom"
    ]["verdicts"]
    assert [v["runId"] for v in rest["nodes"]] == [str(audits[0].run_id)]
    assert not rest["hasNextPage"]
    assert {r["verdict"] for r in first["runs"]["nodes"]} == {"healthy"}


async def test_override_goal_fires_the_same_effect_once(server: Server, db: Db) -> None:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    operator = await make_operator(db, server.client(), "opsjane")
    closed = (await operator.query(OVERRIDE, {"id": d.room_id, "status": "abandoned"}))[
        "overrideGoal"
    ]
    assert closed["goalEvent"] == {
        "fromStatus": "met",
        "toStatus": "abandoned",
        "agent": "operator",
        "byPane": "operator",
    }
    assert closed["closedOffer"]
    stage = (await d.visitor.query(ROOM_STAGE, {"id": d.room_id}))["room"]
    assert stage["offer"]["id"] == offer_id
    assert stage["stage"] == "DECLINED"
    again = (await operator.query(OVERRIDE, {"id": d.room_id, "status": "abandoned"}))[
        "overrideGoal"
    ]
    assert again == {"goalEvent": None, "queuedRuns": [], "closedOffer": False}

    before = len([r for r in await rows(db, AgentRun, d.room_id) if r.agent == "offer_gen"])
    met = (await operator.query(OVERRIDE, {"id": d.room_id, "status": "met"}))["overrideGoal"]
    assert met["queuedRuns"] == ["offer_gen"]
    met_again = (await operator.query(OVERRIDE, {"id": d.room_id, "status": "met"}))["overrideGoal"]
    assert met_again["queuedRuns"] == []
    after = [r for r in await rows(db, AgentRun, d.room_id) if r.agent == "offer_gen"]
    assert len(after) == before + 1
    assert await audit_actions(db) == ["override_goal"] * 4


async def test_a_taken_over_pane_gets_no_agent_reply(server: Server, db: Db) -> None:
    d = await open_deal(server)
    operator = await make_operator(db, server.client(), "opsjane")
    taken = (await operator.query(TAKE, {"id": d.room_id}))["takeOverPane"]
    assert taken["seat"] == "visitor"
    codes = await operator.error_codes(
        SAY.replace("VISITOR", "HOST"), {"id": d.room_id, "body": "x", "cid": "c0"}
    )
    assert codes == ["CONFLICT"]  # the host's pane is not taken over

    await post(d.visitor, d.room_id, "Is anyone there? I want a sponsored post")
    await settle(server)
    lines = await messages_in(db, d.room_id, "visitor")
    assert [m.author_kind for m in lines] == ["participant"]  # no agent reply
    silenced = [r for r in await rows(db, AgentRun, d.room_id) if r.agent == "persona"]
    assert [(r.status, r.no_op, r.error) for r in silenced] == [("done", True, SILENCED)]

    said = (await operator.query(SAY, {"id": d.room_id, "body": "Yes, I'm here.", "cid": "c1"}))[
        "operatorPost"
    ]
    assert said["authorKind"] == "OPERATOR"
    again = await operator.query(SAY, {"id": d.room_id, "body": "Yes, I'm here.", "cid": "c1"})
    assert again["operatorPost"]["id"] == said["id"]
    lines = await messages_in(db, d.room_id, "visitor")
    assert [m.author_kind for m in lines] == ["participant", "operator"]
    ledger = [r for r in await rows(db, AgentRun, d.room_id) if r.agent == "operator"]
    assert [str(r.reply_message_id) for r in ledger] == [said["id"]]

    assert (await operator.query(RELEASE, {"id": d.room_id}))["releasePane"] is True
    await post(d.visitor, d.room_id, "Thanks. What is the fee?")
    await settle(server)
    lines = await messages_in(db, d.room_id, "visitor")
    assert [m.author_kind for m in lines][-1] == "agent"  # the agent speaks again
    assert await audit_actions(db) == ["take_over_pane", "operator_post", "release_pane"]


@pytest.fixture
async def capped_server(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    """``server`` with a guest cap of two messages: the second raises the login gate."""
    async with serving(
        settings.model_copy(update={"guest_message_cap": 2}), engine, broker, clock
    ) as running:
        yield running


async def test_a_taken_over_guest_pane_gets_no_login_gate_line(
    capped_server: Server, db: Db
) -> None:
    server = capped_server
    d = await open_deal(server, guest=True)
    operator = await make_operator(db, server.client(), "opsjane")
    await operator.query(TAKE, {"id": d.room_id})
    for said in ("Hi there", "What do you do?"):
        await post(d.visitor, d.room_id, said)
    await settle(server)
    server.clock.advance(timedelta(seconds=1))  # a gate that waited on the persona runs now
    await settle(server)
    assert (await d.visitor.query(GATE_ROOM, {"id": d.room_id}))["room"]["loginRequired"]
    lines = await messages_in(db, d.room_id, "visitor")
    assert [m.author_kind for m in lines] == ["participant", "participant"]  # no gate line
    gates = [r for r in await rows(db, AgentRun, d.room_id) if r.agent == "gate"]
    assert [(r.status, r.no_op, r.error) for r in gates] == [("done", True, SILENCED)]


async def test_an_operator_reads_every_pane_of_a_room_of_teammates(server: Server, db: Db) -> None:
    """Operators see what they take over: a teammate's pane is listed and read by its key."""
    from tests.support.graphql import open_room, post, sign_up
    from tests.support.team import seat_member

    operator = await make_operator(db, server.client(), "opsjane")
    await sign_up(server.client(), "devraman", "Dev Raman")
    brand = server.client()
    await sign_up(brand, "acmebrand", "Acme Brand")
    room_id = (await open_room(brand, "devraman"))["room"]["id"]
    colleague = server.client()
    lee = (await sign_up(colleague, "leelegal", "Lee Legal"))["account"]
    await seat_member(db, room_id, "visitor_2", lee["id"])
    await post(colleague, room_id, "Legal here: usage rights for 6 months only.")

    found = await operator.query(
        """query($id: ID!) { opsRoom(roomId: $id) {
             paneKeys
             transcript(key: "visitor_2") { seat nodes { body } }
           } }""",
        {"id": room_id},
    )
    ops = found["opsRoom"]
    assert ops["paneKeys"] == ["host", "visitor", "visitor_2"]
    assert ops["transcript"]["seat"] == "visitor_2"
    assert [n["body"] for n in ops["transcript"]["nodes"]] == [
        "Legal here: usage rights for 6 months only."
    ]

    # ... and takes over that pane by its key, speaking in its agent's seat.
    taken = await operator.query(
        'mutation($id: ID!) { takeOverPane(roomId: $id, key: "visitor_2") { seat } }',
        {"id": room_id},
    )
    assert taken["takeOverPane"]["seat"] == "visitor_2"
    said = await operator.query(
        """mutation($id: ID!) { operatorPost(roomId: $id, key: "visitor_2",
             body: "An operator here: noted.", clientMessageId: "op-1") { body authorKind } }""",
        {"id": room_id},
    )
    assert said["operatorPost"] == {"body": "An operator here: noted.", "authorKind": "OPERATOR"}
    seen = await colleague.query(
        "query($id: ID!) { room(id: $id) { pane(seat: VISITOR) { key messages(last: 5) "
        "{ edges { node { body } } } } } }",
        {"id": room_id},
    )
    pane = seen["room"]["pane"]
    assert pane["key"] == "visitor_2"
    assert pane["messages"]["edges"][-1]["node"]["body"] == "An operator here: noted."
    # The takeover reads as the teammate's pane: its transcript and its agent's plan.
    held = await operator.query(
        """query($id: ID!) { opsRoom(roomId: $id) {
             takeovers { seat lastPlan transcript(first: 5) { seat nodes { body authorKind } } }
           } }""",
        {"id": room_id},
    )
    (takeover,) = held["opsRoom"]["takeovers"]
    assert takeover["seat"] == "visitor_2"
    assert takeover["transcript"]["seat"] == "visitor_2"
    assert takeover["transcript"]["nodes"][0] == {
        "body": "An operator here: noted.",
        "authorKind": "OPERATOR",
    }
