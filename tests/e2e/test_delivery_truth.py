"""Memory may never claim a delivery the dispatch record does not show (ARCHITECTURE "The
turn", step 5; seed 000 "Guidance cannot deliver").

After every turn of a negotiation, each ruling memory records as crossed into a pane points
at a delivered dispatch whose delivered message is an agent line of that pane relaying that
very dispatch, and every delivered ruling is recorded once; memory holds no ``sent`` or
``deliveries`` part. A memory writer on the visitor pane that tries to write the parts only
code writes (or the host's branch) is refused, and the refusal is kept on its run. Sends
between panes are bounded: a chain ends after ``max_chain_depth`` dispatches, and a pair of
panes is capped at ``sends_per_pair_per_10_minutes`` (a capped send is recorded, never
delivered).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from pydantic import BaseModel

from dealroom.agents.distil import Change, DistilOutput
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Ruling, Send
from dealroom.config import Settings
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.recording import (
    RecordingClient,
    agent_runs,
    dispatches,
    pane_keys,
    room_memory,
    room_rows,
)
from tests.support.turns import deal

NEGOTIATION = (
    "Hi, I'm Lena Park from Acme.",
    "Could you do a sponsored post for $4,000?",
    "How about $5,000?",
    "What date would work? We're thinking March 3.",
    "Could we do $6,500 for the sponsored post?",
    "Yes, that works.",
    "And a reel for $2,000?",
)
"""Lena's side of a negotiation with Dev (ask $8,000, floor $6,000): counter, counter,
settle, and a second deliverable."""

FORGED = (
    "sent.contract",
    "deliveries.counter",
    "rulings.visitor",
    "plans.visitor",
    "goals.new-offer",
    "host.rates",
    "host.public.rate_card",
)
"""Paths a visitor pane's memory writer may not write: code-only parts and the host's branch."""


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


def keys_anywhere(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, child in node.items():
            yield key
            yield from keys_anywhere(child)
    elif isinstance(node, list):
        for item in node:
            yield from keys_anywhere(item)


async def assert_memory_matches_the_record(db: Db, room_id: str) -> int:
    """The delivery-truth invariant, read straight from the rows. Returns the rulings seen."""
    memory = await room_memory(db, room_id)
    assert not {"sent", "deliveries"} & set(keys_anywhere(memory))
    keys = await pane_keys(db, room_id)
    record = {str(d.id): d for d in await dispatches(db, room_id)}
    messages: dict[uuid.UUID, Message] = {m.id: m for m in await room_rows(db, Message, room_id)}
    recorded = 0
    for pane, entries in (memory.get("rulings") or {}).items():
        assert isinstance(entries, list)
        for entry in entries:
            dispatch = record.get(entry["dispatchId"])
            assert dispatch is not None, f"memory claims a dispatch with no record: {entry}"
            assert dispatch.status == "delivered"
            assert keys[dispatch.to_participant_id] == pane
            assert dispatch.delivered_message_id is not None
            line = messages[dispatch.delivered_message_id]
            assert line.author_kind == AuthorKind.AGENT
            assert keys[line.participant_id] == pane
            assert line.relayed_dispatch_id == dispatch.id
            ruling = dispatch.payload["ruling"]
            assert {k: entry[k] for k in ruling} == ruling  # the ruling that crossed, only
            recorded += 1
    for dispatch in record.values():
        # After a settle nothing is in flight: delivered, or capped and never delivered.
        assert dispatch.status in ("delivered", "capped"), dispatch.status
        relays = [m for m in messages.values() if m.relayed_dispatch_id == dispatch.id]
        if dispatch.status == "capped":
            assert dispatch.delivered_message_id is None
            assert relays == []
        else:
            assert [m.id for m in relays] == [dispatch.delivered_message_id]
    crossed = [d for d in record.values() if d.status == "delivered" and "ruling" in d.payload]
    assert recorded == len(crossed)  # every ruling that crossed is recorded, once
    return recorded


async def test_every_recorded_ruling_is_a_delivered_dispatch_after_every_turn(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    seen = []
    for body in NEGOTIATION:
        await post(d.visitor, d.room_id, body)
        await agent_server.settle()
        seen.append(await assert_memory_matches_the_record(db, d.room_id))
        agent_server.clock.advance(timedelta(seconds=20))
    assert seen == sorted(seen)
    assert seen[-1] >= 3
    runs = await agent_runs(db, d.room_id)
    assert {r.status for r in runs} == {"done"}


def forging_distil(request: ModelRequest) -> BaseModel | None:
    """The visitor pane's memory writer, gone wrong: it writes what only code may write."""
    if request.agent is not AgentName.DISTIL or not request.visitor_facing:
        return None
    changes = [Change(op="set", path=path, value="forged") for path in FORGED]
    changes += [
        Change(op="remove", path="rulings"),
        Change(op="set", path="deal.budget", value="5000 USD"),
        Change(op="set", path="visitor.company", value="Acme"),
    ]
    return DistilOutput(changes=changes)


async def test_a_visitor_pane_distil_cannot_write_code_only_parts_or_the_host_branch(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Could you do a sponsored post for $4,000?")
    await agent_server.settle()
    before = await room_memory(db, d.room_id)
    assert before["rulings"]["visitor"]  # a ruling crossed: there is something to forge over

    model.script = forging_distil
    await post(d.visitor, d.room_id, "Let me think about it.")
    await agent_server.settle()

    after = await room_memory(db, d.room_id)
    assert "sent" not in after
    assert "deliveries" not in after
    assert after["rulings"] == before["rulings"]
    assert after["host"] == before["host"]
    assert after["goals"] == before["goals"]
    assert "forged" not in repr(after)
    # The legitimate changes beside them were applied (one refusal never stops the rest).
    assert after["deal"]["budget"] == "5000 USD"
    assert after["visitor"]["company"] == "Acme"
    await assert_memory_matches_the_record(db, d.room_id)
    runs = [r for r in await agent_runs(db, d.room_id) if r.agent == "distil"]
    forged = runs[-1]
    assert forged.status == "done"
    assert forged.error is not None
    assert forged.error.startswith("rejected: ")
    for path in (*FORGED, "rulings"):
        assert f"{path} (" in forged.error, path
    assert "deal.budget" not in forged.error
    assert "visitor.company" not in forged.error


def ping_pong(request: ModelRequest) -> BaseModel | None:
    """Every persona sends to the other pane, every time, whatever it is told it may do."""
    if request.agent is not AgentName.PERSONA:
        return None
    pane = request.context["pane"]
    other = "host" if pane == "visitor" else "visitor"
    ruling = Ruling(decision="counter", amount="8000", currency="USD") if pane == "host" else None
    return PersonaOutput(
        reply=f"A word from the {pane} side.",
        sends=[Send(to=other, substance=f"News for the {other} side.", ruling=ruling)],
        plan="Keep them talking.",
    )


async def test_a_chain_of_sends_ends_after_max_chain_depth_dispatches(
    agent_server: Server, db: Db, model: RecordingClient, agent_settings: Settings
) -> None:
    d = await deal(agent_server)
    model.script = ping_pong
    first = len(model.requests)

    await post(d.visitor, d.room_id, "Hello there.")
    await agent_server.settle()  # returns: the chain ended

    depth = agent_settings.max_chain_depth
    assert depth == 2
    record = await dispatches(db, d.room_id)
    assert len(record) == depth  # visitor → host → visitor, then no further
    assert [x.chain_depth for x in record] == list(range(1, depth + 1))
    assert {x.status for x in record} == {"delivered"}
    personas = [r for r in model.requests[first:] if r.agent is AgentName.PERSONA]
    assert len(personas) == depth + 1
    assert personas[-1].context["send_to"] == []  # told it may not send; its send was dropped
    runs = await agent_runs(db, d.room_id)
    assert {r.status for r in runs} == {"done"}
    assert sorted(r.chain_depth for r in runs if r.agent == "persona") == [0, 1, 2]
    await assert_memory_matches_the_record(db, d.room_id)


def one_way(request: ModelRequest) -> BaseModel | None:
    """The visitor side sends to the host on every turn; the host side only answers."""
    if request.agent is not AgentName.PERSONA:
        return None
    if request.context["pane"] == "visitor" and request.context["trigger"]["kind"] == "message":
        return PersonaOutput(
            reply="I'll pass that on.", sends=[Send(to="host", substance="They wrote again.")]
        )
    return PersonaOutput(reply="Noted.")


async def test_sends_between_two_panes_are_capped_and_a_capped_send_is_never_delivered(
    agent_server: Server, db: Db, model: RecordingClient, agent_settings: Settings
) -> None:
    d = await deal(agent_server)
    model.script = one_way
    cap = agent_settings.sends_per_pair_per_10_minutes
    for index in range(cap + 2):
        await post(d.visitor, d.room_id, f"Message number {index + 1}.")
        await agent_server.settle()
        agent_server.clock.advance(timedelta(seconds=10))

    record = await dispatches(db, d.room_id)
    assert [x.status for x in record] == ["delivered"] * cap + ["capped"] * 2
    keys = await pane_keys(db, d.room_id)
    host_lines = [
        m
        for m in await room_rows(db, Message, d.room_id)
        if keys[m.participant_id] == "host" and m.author_kind == AuthorKind.AGENT
    ]
    assert len(host_lines) == cap  # the capped ones woke no one
    await assert_memory_matches_the_record(db, d.room_id)

    # The cap is a window: ten minutes on, the pair may send again.
    agent_server.clock.advance(timedelta(minutes=10))
    await post(d.visitor, d.room_id, "One more, much later.")
    await agent_server.settle()
    latest = (await dispatches(db, d.room_id))[-1]
    assert latest.status == "delivered"
    runs = await agent_runs(db, d.room_id)
    assert {r.status for r in runs} == {"done"}
