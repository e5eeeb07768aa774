"""Chat first, then the gate (seed 000: sign in when the agent truly needs to move the deal).

On the seeded demo, a guest asks about rates, deliverables and dates and the visitor's agent
answers from what the host made public (its rate card, what it does) without a send to the
host's side; the guest's first proposal meets the gate in one message naming what waits
("I'd take your $5,000 for a sponsored post to Maya Lin — sign in …"), and no second gate
line follows it. The host's private floor and exclusion never reach the guest."""

from __future__ import annotations

from dealroom.domain import pane_words
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.gate import GATE_ROOM, held, room_dispatches, sign_up_here
from tests.support.graphql import open_room, post
from tests.support.turns import messages_in

QUESTIONS = (
    "Hi! What are your rates?",
    "What do you deliver — posts, reels?",
    "How far ahead do you book?",
)


async def test_a_guest_is_answered_from_public_facts_then_gated_once_at_the_proposal(
    agent_server: Server, db: Db
) -> None:
    seeded = await agent_server.seed_demo(db)
    guest = agent_server.client()
    room_id = (await open_room(guest, seeded.handle))["room"]["id"]

    for question in QUESTIONS:
        await post(guest, room_id, question)
        await agent_server.settle()
    pane = [m for m in await messages_in(db, room_id, "visitor")]
    answers = [m.body for m in pane if m.author_kind == AuthorKind.AGENT.value]
    # Answered from the public card, nothing sent, nothing held, no gate.
    assert any("$8,000" in line for line in answers), answers
    assert any("reels" in line for line in answers), answers
    assert any("two weeks" in line for line in answers), answers
    assert await held(db, room_id) == []
    assert await room_dispatches(db, room_id) == []
    view = (await guest.query(GATE_ROOM, {"id": room_id}))["room"]
    assert view["loginRequired"] is False

    await post(guest, room_id, "We could pay $5,000 for one sponsored post.")
    await agent_server.settle()
    after = (await messages_in(db, room_id, "visitor"))[len(pane) :]
    said = [m.body for m in after if m.author_kind == AuthorKind.AGENT.value]
    # One message, naming what waits, asking for the sign-in; no "checking now", no second.
    assert len(said) == 1, said
    [gate] = said
    for named in ("$5,000", "sponsored post", "Maya Lin"):
        assert named in gate, gate
    assert pane_words.asks_sign_in(gate)
    assert "checking" not in gate
    view = (await guest.query(GATE_ROOM, {"id": room_id}))["room"]
    assert view["loginRequired"] is True
    assert [r.kind for r in await held(db, room_id)] == ["pane_send"]

    shown = " ".join(m.body for m in await messages_in(db, room_id, "visitor"))
    for secret in ("6,000", "6000", "alcohol"):  # the floor and the exclusion stay private
        assert secret not in shown


async def test_after_sign_up_the_replay_is_one_message_at_the_current_position(
    agent_server: Server, db: Db
) -> None:
    """Two held bids ($5,000, then $6,500) go to the host's side as one note of what the
    visitor said, in order: one counter comes back, and the host's pane names both figures."""
    seeded = await agent_server.seed_demo(db)
    guest = agent_server.client()
    room_id = (await open_room(guest, seeded.handle))["room"]["id"]
    await post(guest, room_id, "We could pay $5,000 for one sponsored post.")
    await agent_server.settle()
    await post(guest, room_id, "Actually we can stretch to $6,500 for it.")
    await agent_server.settle()
    assert [r.kind for r in await held(db, room_id)] == ["pane_send", "pane_send"]
    before = len(await messages_in(db, room_id, "visitor"))

    await sign_up_here(guest, "glowco", "Glow Co")
    await agent_server.settle()

    after = (await messages_in(db, room_id, "visitor"))[before:]
    said = [m.body for m in after if m.author_kind == AuthorKind.AGENT.value]
    assert len(said) == 1, said  # one coherent message, not a counter per held bid
    assert "$8,000" in said[0] or "$7," in said[0], said
    sent = await room_dispatches(db, room_id)
    assert len([d for d in sent if d.chain_depth == 1]) == 1  # one note to the host's side
    host_pane = " ".join(m.body for m in await messages_in(db, room_id, "host"))
    assert "$5,000" in host_pane, host_pane  # what the visitor actually said
    assert "$6,500" in host_pane, host_pane
    for key in ("visitor", "host"):
        assert all(pane_words.labels_in(m.body) == [] for m in await messages_in(db, room_id, key))
