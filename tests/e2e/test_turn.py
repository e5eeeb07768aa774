"""The agent turn end to end, as a client app sees it: the issue's user story on the offline
engine, streamed over the subscription, with the host's floor never reaching the visitor."""

from __future__ import annotations

import uuid

from sqlalchemy import update

from dealroom.domain.cursors import event_cursor
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, AgentRun, Dispatch, ModelCall
from tests.conftest import Server
from tests.support.graphql import post, sign_up, subscribe
from tests.support.turns import PANE_EVENTS_FULL, deal, memory, messages_in, rows


async def test_home_room_rules_are_recorded_privately_in_the_host_branch(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    home = await memory(db, d.home_id)
    rates = home["host"]["rates"]["sponsored_post"]
    assert "8000" in rates["ask"]
    assert "floor" not in rates  # a floor is a limit, code-owned data
    limit = home["host"]["limits"]["sponsored_post"]
    assert (limit["floor"], limit["currency"]) == ("6000", "USD")
    assert limit["source"] == str((await messages_in(db, d.home_id, "host"))[0].id)
    assert home["host"]["private_terms"] == [
        {"text": "never work with alcohol brands", "source": limit["source"]}
    ]
    assert "public" not in home["host"]  # private by default
    # The new deal room seeded the host from the home branch (newer than durable memory).
    seeded = await memory(db, d.room_id)
    assert seeded["host"]["rates"] == home["host"]["rates"]
    seeded_limit = seeded["host"]["limits"]["sponsored_post"]
    # the limit itself; its source names a message of the room it was said in (durable memory,
    # which may seed the room, keeps that out)
    assert (seeded_limit["floor"], seeded_limit["currency"]) == ("6000", "USD")
    assert "visitor" not in seeded


async def test_the_visitor_is_answered_at_once_streamed_and_later_gets_the_counter(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    # From the pane's start: a message posted while the subscription starts is replayed, not
    # taken for "before the subscription" (a race on a busy machine).
    variables = {"roomId": d.room_id, "seat": "VISITOR", "after": event_cursor(0)}
    async with subscribe(
        agent_server.ws_url, PANE_EVENTS_FULL, variables, headers=dict(d.visitor.headers)
    ) as sub:
        posted = await post(d.visitor, d.room_id, "Could you do a sponsored post for $4,000?")
        events = []
        while True:
            event = await sub.event(timeout=10)
            events.append(event)
            message = event.get("message") or {}
            if message.get("authorKind") == "AGENT" and "8,000" in message["body"]:
                break
        kinds = [e["__typename"] for e in events]
        assert kinds[0] == "MessageAdded"
        assert events[0]["message"]["id"] == posted["id"]
        # An agent announces it is composing, streams deltas, then the stored reply.
        first_reply = next(e for e in events[1:] if e["__typename"] == "MessageAdded")["message"]
        typing = [e for e in events if e["__typename"] == "AgentTyping"]
        deltas = [
            e
            for e in events
            if e["__typename"] == "MessageDelta" and e["messageId"] == first_reply["id"]
        ]
        assert typing
        assert typing[0]["messageId"] == first_reply["id"]
        assert deltas
        assert "".join(x["delta"] for x in deltas) == first_reply["body"]
        assert kinds.index("AgentTyping") < kinds.index("MessageDelta")
        for event in events:
            text = str(event)
            assert "6,000" not in text
            assert "6000" not in text
            assert "alcohol" not in text
    await agent_server.settle()
    host_pane = await messages_in(db, d.room_id, "host")
    notes = [m for m in host_pane if m.author_kind == AuthorKind.AGENT]
    assert len(notes) == 1
    assert "4,000" in notes[0].body
    assert notes[0].relayed_dispatch_id is not None
    dispatches = await rows(db, Dispatch, d.room_id)
    assert {x.status for x in dispatches} == {"delivered"}
    assert len(dispatches) == 2  # the visitor's ask to the host, the host's ruling back
    ruling = next(x for x in dispatches if "ruling" in x.payload).payload["ruling"]
    assert ruling["decision"] == "counter"
    assert ruling["amount"] == "8000"


async def test_every_model_call_is_in_the_ledger(agent_server: Server, db: Db) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Could you do a sponsored post for $4,000?")
    await agent_server.settle()
    calls = await rows(db, ModelCall, d.room_id)
    runs = await rows(db, AgentRun, d.room_id)
    assert {r.status for r in runs} == {"done"}
    agents = sorted(c.agent for c in calls)
    # visitor: persona + distil; host: persona (delivery + ruling); visitor: persona (counter)
    assert agents.count("persona") == 3
    assert agents.count("distil") == 1
    for call in calls:
        assert call.engine == "offline"
        assert call.price_usd == 0
        assert call.input_tokens > 0
        assert call.output_tokens > 0
        assert call.ok
        assert call.run_id in {r.id for r in runs}
    assert uuid.UUID(d.room_id)


ROOM_OPS = """
query($r: ID!) { roomOps(roomId: $r) { flags { level evidence } usage { calls priceUsd }
  failedRuns } }
"""


async def test_frustration_is_flagged_to_operators_and_to_no_one_else(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Is this a bot? I want to talk to a human!")
    await agent_server.settle()
    # The host of the room is not an operator: the flags are not theirs to read.
    assert await d.host.error_codes(ROOM_OPS, {"r": d.room_id}) == ["NOT_FOUND"]
    operator = agent_server.client()
    await sign_up(operator, "opsdesk", "Ops Desk")
    try:
        await db.execute(
            update(Account).where(Account.handle == "opsdesk").values(is_operator=True)
        )
        await db.commit()
    finally:
        await db.close()
    ops = (await operator.query(ROOM_OPS, {"r": d.room_id}))["roomOps"]
    assert len(ops["flags"]) == 1
    assert "bot" in ops["flags"][0]["evidence"]
    assert ops["usage"]["calls"] == len(await rows(db, ModelCall, d.room_id))
    assert ops["failedRuns"] == 0
    # No agent was shown the flag: it lives in its own table, not in memory.
    assert "bot" not in str((await memory(db, d.room_id)).get("visitor", {}))
