"""The login gate's rules: replay speaks against the present, the guest message cap and the
guest-key allowance per address, who is never gated, and no host canary in the gate's copy or
in what a replay delivers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName, ModelClient, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Ruling, Send
from dealroom.config import Settings
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.guest_posts import IP_WINDOW
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.gate import (
    GATE_EVENTS,
    GATE_ROOM,
    arrange_offer,
    held,
    room_dispatches,
    sign_up_here,
)
from tests.support.graphql import open_room, post, sign_up, subscribe
from tests.support.recording import (
    RecordingClient,
    canary,
    everything_sent,
    found_in,
    room_memory,
    write_room_memory,
)
from tests.support.rooms import grant, only_error
from tests.support.turns import host_with_rules, messages_in

BID = "Hi, we'd like a sponsored post on 15 March 2027 and can pay $7,000"
POST_ID = "mutation($i: PostMessageInput!) { postMessage(input: $i) { id } }"


def _delivered(rows: list) -> list:  # type: ignore[type-arg]
    return [m for m in rows if m.relayed_dispatch_id is not None]


# --- replay composes against the present ------------------------------------------------


async def test_a_held_note_superseded_by_later_chat_is_delivered_with_the_current_terms(
    agent_server: Server, db: Db
) -> None:
    await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await post(guest, room_id, BID)
    await agent_server.settle()
    await post(guest, room_id, "Actually, we can pay $7,600 for it")
    await agent_server.settle()
    rows = await held(db, room_id)
    assert [r.kind for r in rows] == ["pane_send", "pane_send"]
    assert "7,000" in rows[0].payload["substance"]

    await sign_up_here(guest, "mara", "Mara Ellison")
    await agent_server.settle()

    # One note for both held bids: ruled on as the terms stand now ($7,600), and the host's
    # pane reports what the visitor actually said, in order.
    [first] = _delivered(await messages_in(db, room_id, "host"))
    assert "7,600" in first.body
    assert first.body.index("7,000") < first.body.index("7,600")


async def test_a_stage_change_between_hold_and_replay_is_reflected(
    agent_server: Server, db: Db
) -> None:
    await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await post(guest, room_id, BID)
    await agent_server.settle()
    assert (await held(db, room_id))[0].payload["stage"] == "NO_WRITTEN_OFFER"
    await arrange_offer(db, room_id, agent_server.clock.now())  # the stage moves meanwhile

    await sign_up_here(guest, "mara", "Mara Ellison")
    await agent_server.settle()

    first = _delivered(await messages_in(db, room_id, "host"))[0]
    assert "The written offer is drawn; the brand has not approved it yet." in first.body


# --- the cap and the allowance ----------------------------------------------------------


@pytest.fixture
async def capped_server(
    agent_settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    settings = agent_settings.model_copy(
        update={"guest_message_cap": 3, "guest_keys_per_ip_per_hour": 3}
    )
    async with serving(settings, engine, broker, clock, OfflineClient()) as running:
        yield running


async def test_the_guest_cap_gates_gently_then_refuses_across_rooms_until_sign_in(
    capped_server: Server, db: Db
) -> None:
    server = capped_server
    await host_with_rules(server)
    await sign_up(server.client(), "lena", "Lena Park")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    watch = {"roomId": room_id, "seat": "VISITOR"}
    async with subscribe(server.ws_url, GATE_EVENTS, watch, headers=dict(guest.headers)) as sub:
        for line in ("Hi there", "What do you do?", "Tell me more"):
            await post(guest, room_id, line)
        while (event := await sub.event(timeout=20))["__typename"] != "LoginRequiredChanged":
            pass
        assert event["loginRequired"] is True
    await server.settle()

    pane = await messages_in(db, room_id, "visitor")
    gate_line = pane[-1]
    assert gate_line.author_kind == AuthorKind.AGENT.value
    assert "sign in" in gate_line.body.lower()
    assert "Dev Raman" in gate_line.body  # composed for this room, not a frozen line
    # The cap's gentler copy, not the held-effect one ("about to share an update").
    assert "keep going" in gate_line.body
    assert "about to share" not in gate_line.body
    assert (await guest.query(GATE_ROOM, {"id": room_id}))["room"]["loginRequired"] is True
    refused = await only_error(
        guest,
        POST_ID,
        {"i": {"roomId": room_id, "body": "One more?", "clientMessageId": "over-1"}},
    )
    assert refused["extensions"] == {
        "code": "FORBIDDEN",
        "reason": "LOGIN_REQUIRED",
    } | {k: v for k, v in refused["extensions"].items() if k not in ("code", "reason")}
    other = (await open_room(guest, "lena"))["room"]["id"]  # the cap is per key, across rooms
    refused = await only_error(
        guest,
        POST_ID,
        {"i": {"roomId": other, "body": "Hello?", "clientMessageId": "over-2"}},
    )
    assert refused["extensions"]["reason"] == "LOGIN_REQUIRED"
    assert len(await messages_in(db, room_id, "visitor")) == len(pane)  # nothing dropped in

    await sign_up_here(guest, "mara", "Mara Ellison")
    await post(guest, room_id, "Back, signed in")
    assert (await guest.query(GATE_ROOM, {"id": room_id}))["room"]["loginRequired"] is False


async def test_a_fresh_guest_key_from_the_same_address_does_not_start_the_cap_over(
    capped_server: Server,
) -> None:
    server = capped_server
    await host_with_rules(server)
    first = server.client()
    room_id = (await open_room(first, "devraman"))["room"]["id"]
    for line in ("Hi there", "What do you do?", "Tell me more"):
        await post(first, room_id, line)
    await server.settle()

    fresh = server.client()  # no key: a new one, minted to the same address
    opened = await open_room(fresh, "devraman", new=True)
    assert opened["guestKey"] not in (None, first.headers["X-Guest-Key"])
    other = opened["room"]["id"]
    assert other != room_id
    assert (await fresh.query(GATE_ROOM, {"id": other}))["room"]["loginRequired"] is True
    refused = await only_error(
        fresh, POST_ID, {"i": {"roomId": other, "body": "Hello?", "clientMessageId": "ip-1"}}
    )
    assert refused["extensions"]["reason"] == "LOGIN_REQUIRED"

    # A day on, the address's other keys no longer count; each key's own posts still do.
    server.clock.advance(IP_WINDOW + timedelta(minutes=1))
    assert (await fresh.query(GATE_ROOM, {"id": other}))["room"]["loginRequired"] is False
    await post(fresh, other, "Hello again")
    refused = await only_error(
        first, POST_ID, {"i": {"roomId": room_id, "body": "Me?", "clientMessageId": "ip-2"}}
    )
    assert refused["extensions"]["reason"] == "LOGIN_REQUIRED"


async def test_guest_keys_are_handed_out_a_limited_number_of_times_per_address(
    capped_server: Server,
) -> None:
    await sign_up(capped_server.client(), "devraman", "Dev Raman")
    for _ in range(3):
        await open_room(capped_server.client(), "devraman")
    error = await only_error(
        capped_server.client(),
        'mutation { openVisitorRoom(handle: "devraman") { guestKey } }',
    )
    assert error["extensions"]["code"] == "RATE_LIMITED"


# --- never gated ----------------------------------------------------------------------------


async def _bid_is_sent(server: Server, db: Db, room_id: str, client: object) -> None:
    await post(client, room_id, BID)  # type: ignore[arg-type]
    await server.settle()
    assert await held(db, room_id) == []
    assert [d.chain_depth for d in await room_dispatches(db, room_id)][:1] == [1]
    assert (await client.query(GATE_ROOM, {"id": room_id}))["room"]["loginRequired"] is False  # type: ignore[attr-defined]


async def test_a_signed_in_visitor_is_never_gated(agent_server: Server, db: Db) -> None:
    await host_with_rules(agent_server)
    brand = agent_server.client()
    await sign_up(brand, "mara", "Mara Ellison")
    room_id = (await open_room(brand, "devraman"))["room"]["id"]
    await _bid_is_sent(agent_server, db, room_id, brand)


async def test_an_act_as_visitor_is_never_gated(agent_server: Server, db: Db) -> None:
    await host_with_rules(agent_server)
    await sign_up(agent_server.client(), "mara", "Mara Ellison")
    ops = agent_server.client()
    await sign_up(ops, "opsadmin", "Ops Admin")
    await grant(db, "opsadmin", "mara")
    mara_id = (await ops.query('{ account(handle: "mara") { id } }'))["account"]["id"]
    ops.headers["X-Act-As"] = mara_id
    room_id = (await open_room(ops, "devraman"))["room"]["id"]
    await _bid_is_sent(agent_server, db, room_id, ops)


async def test_a_demo_room_is_never_gated(agent_server: Server, db: Db) -> None:
    host, _home = await host_with_rules(agent_server)
    opened = await open_room(host, "devraman")
    assert opened["room"]["mode"] == "DEMO"
    room_id = opened["room"]["id"]
    await post(host, room_id, BID)
    await agent_server.settle()
    assert await held(db, room_id) == []
    assert (await host.query(GATE_ROOM, {"id": room_id}))["room"]["loginRequired"] is False


# --- confidentiality ------------------------------------------------------------------------


@pytest.fixture
def model() -> ModelClient:
    return RecordingClient(OfflineClient())


async def test_no_host_canary_in_the_gate_copy_or_the_replayed_deliveries(
    agent_server: Server, db: Db, model: ModelClient
) -> None:
    assert isinstance(model, RecordingClient)
    await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    planted = {
        "floor": canary("floor"),
        "term": canary("term"),
        "plan": canary("plan"),
    }
    memory = await room_memory(db, room_id)
    host = dict(memory.get("host") or {})
    host["limits"] = {
        "sponsored_post": {"floor": "6000", "currency": "USD", "source": planted["floor"]}
    }
    host["private_terms"] = [{"text": planted["term"], "source": "m1"}]
    host["plan"] = planted["plan"]
    memory["host"] = host
    await write_room_memory(db, room_id, memory)
    await post(guest, room_id, BID)
    await agent_server.settle()
    await post(guest, room_id, "Actually, we can pay $7,600 for it")
    await agent_server.settle()
    await sign_up_here(guest, "mara", "Mara Ellison")
    await agent_server.settle()

    visitor_pane = " ".join(m.body for m in await messages_in(db, room_id, "visitor"))
    assert found_in(visitor_pane, planted.values()) == set()
    # The gate's copy is the guest's own turn when that turn sends (the reply names what waits
    # and asks for the sign-in), or a gate run's line: either way the visitor's persona.
    gate_requests = [
        r
        for r in model.where(AgentName.PERSONA, visitor_facing=True)
        if (r.context.get("trigger") or {}).get("kind") == "gate" or r.context.get("guest")
    ]
    assert gate_requests, "the gate's line was composed by the visitor's persona"
    replayed = [
        r
        for r in model.where(AgentName.PERSONA, visitor_facing=True)
        if (r.context.get("trigger") or {}).get("kind") == "delivery"
    ]
    assert replayed, "the host side's answer to a replayed note reached the visitor's pane"
    for request in gate_requests + replayed:
        assert found_in(everything_sent(request), planted.values()) == set()
    # The host-facing side did see them: the planting worked.
    host_side = " ".join(everything_sent(r) for r in model.where(visitor_facing=False))
    assert found_in(host_side, planted.values()) == set(planted.values())


STORY_OFFER = "Dev Raman can do the story at $2,400."
STORY_RULING = Ruling(decision="counter", amount="2400", currency="USD", deliverable="story")


async def test_a_held_send_stating_a_limit_added_before_the_claim_is_held_for_the_principal(
    agent_server: Server, db: Db, model: ModelClient
) -> None:
    """Held replays: the host's ruling to a guest passed the firewall when it was composed and
    waited behind the gate (free text would have been held for the principal at once, C6); the
    host then set that figure as a floor. At the claim the replay is screened against the room as
    it is now: the send is held for the principal (the question in the host's pane), never
    delivered to the visitor."""
    assert isinstance(model, RecordingClient)
    host, _home = await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    sent: list[str] = []

    def host_offers_a_story(request: ModelRequest) -> BaseModel | None:
        trigger = request.context.get("trigger") or {}
        if (
            request.agent is AgentName.PERSONA
            and request.context.get("pane") == "host"
            and trigger.get("kind") != "delivery"
            and not sent
        ):
            sent.append(STORY_OFFER)
            return PersonaOutput(
                reply="I'll tell them.",
                sends=[Send(to="visitor", substance="A story is $2,400.", ruling=STORY_RULING)],
            )
        return None

    await post(guest, room_id, "Could you do a story for us?")  # C4: the visitor named it
    await agent_server.settle()
    model.script = host_offers_a_story
    await post(host, room_id, "Tell them a story is $2,400.")
    await agent_server.settle()
    model.script = None
    [pending] = [r for r in await held(db, room_id) if r.kind == "pane_send"]
    assert STORY_OFFER in pending.payload["substance"]  # clean when composed: behind the gate

    memory = await room_memory(db, room_id)  # the host makes that figure a floor
    memory["host"]["limits"]["story"] = {"floor": "2400", "currency": "USD", "source": "m9"}
    await write_room_memory(db, room_id, memory)
    await sign_up_here(guest, "mara", "Mara Ellison")
    await agent_server.settle()

    [dispatch] = [d for d in await room_dispatches(db, room_id) if d.substance == STORY_OFFER]
    assert dispatch.status == "held"
    asked = dispatch.payload["firewall"]["askedMessageId"]
    [question] = [m for m in await messages_in(db, room_id, "host") if str(m.id) == asked]
    assert "Shall I send it as written?" in question.body
    assert "2400 USD" in question.body  # the host is told which limit it would reveal
    for message in await messages_in(db, room_id, "visitor"):
        assert "2,400" not in message.body
        assert message.relayed_dispatch_id != dispatch.id
    visitor_facing = model.where(visitor_facing=True)
    assert visitor_facing  # the gate's line, at least
    for request in visitor_facing:
        assert "2,400" not in everything_sent(request)
        assert "2400" not in everything_sent(request)
