"""The Guard audits a room that went quiet (G1-G5 in dealroom/jobs/guard.py; seed 000 "A guard
audits quiet rooms"). Each test is one of the seed's failure shapes, made by a scripted model at
the model edge, and the Guard's repair seen end to end."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import select, update

from dealroom.agents.guard import GuardOutput, GuardSend
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Ruling, Send
from dealroom.domain import pane_words
from dealroom.domain.offer_stage import GLOSSES, Stage
from dealroom.jobs.distil import MemoryLease, holds
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Flag, GoalEvent, GuardVerdict, Lease, Room
from dealroom.services.gate import held_sends
from dealroom.services.turns.queue import RunStatus
from tests.conftest import Server
from tests.support.graphql import post, sign_up
from tests.support.recording import (
    RecordingClient,
    canary,
    dispatches,
    everything_sent,
    pane_keys,
    pane_messages,
    room_memory,
    room_rows,
    write_room_memory,
)
from tests.support.turns import Deal, deal
from tests.support.watches import QUIET, quiet, runs_of, watch_of


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


def persona_in(pane: str, said: str, output: PersonaOutput) -> Any:
    """A persona that answers ``said`` in ``pane`` with ``output`` (a model misbehaving)."""

    def script(request: ModelRequest) -> BaseModel | None:
        trigger = request.context.get("trigger") or {}
        if (
            request.agent is AgentName.PERSONA
            and request.context.get("pane") == pane
            and trigger.get("kind") == "message"
            and trigger.get("body") == said
        ):
            return output
        return None

    return script


def deal_audits(model: RecordingClient) -> list[ModelRequest]:
    """The Guard's calls on a deal room (the host's home room went quiet too)."""
    return [r for r in model.where(AgentName.GUARD) if len(r.context["panes"]) == 2]


async def verdicts(db: Db, room_id: str) -> list[GuardVerdict]:
    rows: list[GuardVerdict] = await room_rows(db, GuardVerdict, room_id)
    return sorted(rows, key=lambda v: v.created_at)


async def bodies(db: Db, d: Deal, key: str) -> list[str]:
    return [m.body for m in await pane_messages(db, d.room_id, key)]


# --- a promise with no delivery --------------------------------------------------------------


async def test_a_promised_delivery_that_was_never_sent_is_delivered(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """seed 000: the brand-side agent said "I'll take this to the talent now" and sent
    nothing; the brand believed it was sent. The Guard delivers it."""
    d = await deal(agent_server)
    said = "Please tell Dev we can add a free story to the package."
    model.script = persona_in(
        "visitor", said, PersonaOutput(reply="Got it, I'll take this to Dev now.")
    )
    await post(d.visitor, d.room_id, said)
    await agent_server.settle()
    keys = await pane_keys(db, d.room_id)
    assert [
        x for x in await dispatches(db, d.room_id) if keys[x.from_participant_id] == "visitor"
    ] == []
    armed = (await watch_of(db, d.room_id)).generation

    await quiet(agent_server)

    [owed] = [x for x in await dispatches(db, d.room_id) if (x.payload or {}).get("origin")]
    assert keys[owed.from_participant_id] == "visitor"
    assert keys[owed.to_participant_id] == "host"
    assert owed.status == "delivered"
    assert "free story" in owed.substance
    assert any("free story" in body for body in await bodies(db, d, "host"))
    [verdict] = await verdicts(db, d.room_id)
    assert verdict.verdict == "repaired"
    assert [e["kind"] for e in verdict.edits] == ["send"]
    # The Guard's own push was delivered by the host's agent, and did not re-arm the watch.
    assert (await watch_of(db, d.room_id)).generation == armed
    await quiet(agent_server)
    assert len(await runs_of(db, d.room_id, AgentName.GUARD)) == 1


# --- a goal met that nothing supports ----------------------------------------------------------


async def met_without_agreement(agent_server: Server, db: Db) -> Deal:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we're looking at a sponsored post in May.")
    await agent_server.settle()
    document = await room_memory(db, d.room_id)
    document["goals"] = {"new-offer": {"status": "met", "reason": "Terms agreed.", "by": "visitor"}}
    await write_room_memory(db, d.room_id, document)
    return d


async def test_a_goal_met_with_no_agreement_in_any_transcript_is_reopened(
    agent_server: Server, db: Db
) -> None:
    d = await met_without_agreement(agent_server, db)
    await quiet(agent_server)
    goal = (await room_memory(db, d.room_id))["goals"]["new-offer"]
    assert goal["status"] == "open"
    assert goal["by"] == "guard"
    events: list[GoalEvent] = await room_rows(db, GoalEvent, d.room_id)
    assert [(e.from_status, e.to_status, e.agent) for e in events if e.by_pane == "guard"] == [
        ("met", "open", "guard")
    ]
    [verdict] = await verdicts(db, d.room_id)
    assert verdict.verdict == "repaired"
    assert verdict.edits == [{"kind": "goal", "target": "new-offer", "detail": "met → open"}]


async def test_the_guard_waits_for_distils_lease_and_loses_no_write(
    agent_server: Server, db: Db
) -> None:
    """Guard racing Distil: a memory writer holds the lease (read the document, thinking);
    the Guard waits for it, then repairs on top of what the writer wrote."""
    d = await met_without_agreement(agent_server, db)
    room_id = uuid.UUID(d.room_id)
    agent_server.clock.advance(QUIET)
    lease = MemoryLease(agent_server.runner.deps)
    token = await lease.acquire(room_id, "distil-in-flight")
    assert token is not None
    read = await room_memory(db, d.room_id)  # what the writer read under its lease

    await agent_server.runner.sweep()
    await asyncio.sleep(0.5)  # the Guard is claimed and polls for the lease meanwhile
    [guard] = await runs_of(db, d.room_id, AgentName.GUARD)
    assert guard.status != RunStatus.DONE
    assert await verdicts(db, d.room_id) == []

    # The writer finishes: its read-modify-write, fenced by its token, releases the lease.
    try:
        now = agent_server.clock.now()
        held: Lease | None = await holds(db, room_id, token, now)
        assert held is not None
        room = await db.scalar(select(Room).where(Room.id == room_id).with_for_update())
        assert room is not None
        room.memory = {**read, "deal": {"note": "Fjord Goods wants May."}}
        room.memory_version += 1
        held.holder, held.expires_at = None, None
        await db.commit()
    finally:
        await db.close()
    await agent_server.runner.announce()
    await agent_server.settle()

    document = await room_memory(db, d.room_id)
    assert document["deal"] == {"note": "Fjord Goods wants May."}  # the writer's
    assert document["goals"]["new-offer"]["status"] == "open"  # and the Guard's
    assert [v.verdict for v in await verdicts(db, d.room_id)] == ["repaired"]


# --- relays ------------------------------------------------------------------------------------


async def test_a_true_relay_of_the_talents_instruction_is_not_walked_back(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """seed 000: a persona walked back a true relay because a review treated the push as the
    agent's own claim. The relay is marked, and the Guard leaves it alone."""
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we'd like one sponsored post in May.")
    await agent_server.settle()
    said = "Tell them: go ahead, I consider it booked at $7,500."
    relay = "Dev says go ahead: he considers it booked on his side at $7,500."
    model.script = persona_in(
        "host",
        said,
        PersonaOutput(reply="I'll pass that on now.", sends=[Send(to="visitor", substance=relay)]),
    )
    base = model.script

    def deliver(request: ModelRequest) -> BaseModel | None:
        trigger = request.context.get("trigger") or {}
        if request.context.get("pane") == "visitor" and trigger.get("body") == relay:
            return PersonaOutput(reply=relay)
        return base(request)

    model.script = deliver
    await post(d.host, d.room_id, said)
    await agent_server.settle()
    await post(d.host, d.room_id, "yes")  # C6: the principal confirms the exact text
    await agent_server.settle()
    assert (await bodies(db, d, "visitor"))[-1] == relay

    await quiet(agent_server)

    [audit] = deal_audits(model)
    assert f"[relayed from Dev Raman] {relay}" in audit.prompt
    assert (await bodies(db, d, "visitor"))[-1] == relay  # not walked back
    origins = [x for x in await dispatches(db, d.room_id) if (x.payload or {}).get("origin")]
    assert [(x.substance, x.payload) for x in origins] == []
    [verdict] = await verdicts(db, d.room_id)
    assert verdict.verdict == "healthy"


async def test_an_agents_own_booking_claim_is_corrected_in_its_pane(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """The same words as the agent's own claim (no relay) are corrected in people's words from
    the DEAL STAGE, which shows no booking (its gloss, never its label: PW1)."""
    d = await deal(agent_server)
    said = "So are we all set?"
    model.script = persona_in(
        "visitor", said, PersonaOutput(reply="Yes, it is booked on Dev's side at $7,500.")
    )
    await post(d.visitor, d.room_id, said)
    await agent_server.settle()
    await quiet(agent_server)
    last = (await bodies(db, d, "visitor"))[-1]
    assert "not booked" in last
    assert GLOSSES[Stage.NO_WRITTEN_OFFER] in last
    assert pane_words.labels_in(last) == []
    [verdict] = await verdicts(db, d.room_id)
    assert verdict.verdict == "repaired"


# --- a healthy room, and stale audits --------------------------------------------------------


async def test_a_healthy_room_gets_a_healthy_verdict_and_no_write(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we'd like one sponsored post in May.")
    await agent_server.settle()
    before = await room_memory(db, d.room_id)
    lines = await bodies(db, d, "visitor")
    await quiet(agent_server)
    [verdict] = await verdicts(db, d.room_id)
    assert (verdict.verdict, verdict.edits) == ("healthy", [])
    [run] = await runs_of(db, d.room_id, AgentName.GUARD)
    assert run.no_op is True
    assert await room_memory(db, d.room_id) == before
    assert await bodies(db, d, "visitor") == lines


async def test_a_guard_run_whose_room_spoke_again_does_nothing(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """G1: queued for one generation, run after a reply re-armed the room."""
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we'd like one sponsored post in May.")
    await agent_server.settle()
    agent_server.clock.advance(QUIET)
    await agent_server.runner.close()  # the Guard is queued, not run yet
    await agent_server.runner.sweep()
    await post(d.visitor, d.room_id, "Also, do you do stories?")
    await agent_server.runner.start()
    await agent_server.settle()
    [run] = await runs_of(db, d.room_id, AgentName.GUARD)
    assert (run.status, run.no_op) == (RunStatus.DONE, True)
    assert deal_audits(model) == []
    assert await verdicts(db, d.room_id) == []


# --- confidentiality -----------------------------------------------------------------------------


async def private_room(agent_server: Server, db: Db) -> tuple[Deal, str]:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we'd like one sponsored post in May.")
    await agent_server.settle()
    secret = canary("guard-term")
    document = await room_memory(db, d.room_id)
    host = document.setdefault("host", {})
    host["limits"] = {"sponsored_post": {"floor": "6000", "currency": "USD"}}
    host["private_terms"] = [{"text": secret, "source": "m1"}]
    await write_room_memory(db, d.room_id, document)
    return d, secret


async def test_a_guard_send_carrying_a_private_term_never_reaches_the_visitor(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """G3: the Guard reads the host's private rules; a send of its to the visitor's pane
    that carries one never gets there: from the host's pane it is held for the principal
    (the host's pane asks), as a correction in the visitor's own pane it is refused, and the
    verdict says so."""
    d, secret = await private_room(agent_server, db)

    def guard(request: ModelRequest) -> BaseModel | None:
        if request.agent is AgentName.GUARD:
            return GuardOutput(
                sends=[
                    GuardSend(from_pane="host", to="visitor", substance=f"Dev says: {secret}"),
                    GuardSend(
                        from_pane="visitor", to="visitor", substance="Dev never goes below $6,000."
                    ),
                ]
            )
        return None

    model.script = guard
    await quiet(agent_server)

    [verdict] = await verdicts(db, d.room_id)
    assert verdict.verdict == "unrepaired"
    [refused] = [f for f in verdict.findings if "refused" in f]
    assert refused.startswith("send visitor → visitor: refused")
    assert [e["detail"] for e in verdict.edits] == ["held for the principal"]
    [held] = [x for x in await dispatches(db, d.room_id) if (x.payload or {}).get("origin")]
    assert (held.status, held.substance) == ("held", f"Dev says: {secret}")
    assert (await bodies(db, d, "host"))[-1].startswith("Before I pass this on")
    assert not any(secret in b or "6,000" in b for b in await bodies(db, d, "visitor"))
    for request in model.where(visitor_facing=True):
        assert secret not in everything_sent(request)


async def test_a_host_side_free_text_send_that_carried_a_floor_is_held_and_not_flagged_again(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """G4 with the firewall in place: a host-side send without a ruling (the principal asked for
    it) that carries the host's floor is held by the firewall in the choke point before it can
    cross, with a firewall flag. When the principal's yes releases it, it crosses on their word to
    a question that named the floor: the Guard does not flag it a second time."""
    d, _secret = await private_room(agent_server, db)
    said = "Tell them whatever you need to."
    model.script = persona_in(
        "host",
        said,
        PersonaOutput(
            reply="Passing it on.",
            sends=[Send(to="visitor", substance="Dev would go as low as $6,000 USD.")],
        ),
    )
    await post(d.host, d.room_id, said)
    await agent_server.settle()
    [sent] = [x for x in await dispatches(db, d.room_id) if "6,000" in x.substance]
    assert sent.status == "held"
    assert not any("6,000" in b for b in await bodies(db, d, "visitor"))

    await post(d.host, d.room_id, "Yes, send it.")
    await agent_server.settle()
    released = next(x for x in await dispatches(db, d.room_id) if x.id == sent.id)
    assert released.status == "delivered"
    assert released.payload["released"]["byMessageId"]
    await quiet(agent_server)

    flags: list[Flag] = await room_rows(db, Flag, d.room_id)
    assert "firewall" in [f.level for f in flags]
    assert [f for f in flags if f.evidence.startswith("guard:")] == []
    [verdict] = await verdicts(db, d.room_id)
    assert not any("crossed without a ruling" in f for f in verdict.findings)


async def test_host_free_text_waits_for_the_principal_before_memory_holds_its_figure(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """C6 closes what G4 flagged after the fact: the host's agent passed on a figure before
    Distil filed it as the host's floor. The firewall knew no such value then, but free text a
    model wrote does not cross without the principal's yes, so it waits in the host's pane and
    the Guard finds nothing that crossed."""
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we'd like one sponsored post in May.")
    await agent_server.settle()
    said = "Tell them whatever you need to."
    model.script = persona_in(
        "host",
        said,
        PersonaOutput(
            reply="Passing it on.",
            sends=[Send(to="visitor", substance="For a story Dev would go as low as $4,800.")],
        ),
    )
    await post(d.host, d.room_id, said)
    await agent_server.settle()
    [sent] = [x for x in await dispatches(db, d.room_id) if "4,800" in x.substance]
    assert sent.status == "held"  # no such figure in memory yet, and still it waits
    assert sent.payload["firewall"]["reveals"] == [held_sends.FREE_TEXT]
    assert not any("4,800" in body for body in await bodies(db, d, "visitor"))
    model.script = None
    document = await room_memory(db, d.room_id)  # then the floor is filed
    document["host"]["limits"]["story"] = {"floor": "4800", "currency": "USD"}
    await write_room_memory(db, d.room_id, document)

    await quiet(agent_server)

    [verdict] = await verdicts(db, d.room_id)
    assert not any("crossed without a ruling" in f for f in verdict.findings)


async def held_under_the_floor(agent_server: Server, model: RecordingClient, db: Db) -> Deal:
    """A room where the host's agent offered $5,000 (under the $6,000 floor): the firewall
    holds that send for the principal (C5), and its figure is withheld (F6)."""
    d, _secret = await private_room(agent_server, db)
    said = "What can we offer them?"
    model.script = persona_in(
        "host",
        said,
        PersonaOutput(
            reply="Let me put a number to them.",
            sends=[
                Send(
                    to="visitor",
                    substance="An offer for the sponsored post.",
                    ruling=Ruling(decision="counter", amount="5000", currency="USD"),
                )
            ],
        ),
    )
    await post(d.host, d.room_id, said)
    await agent_server.settle()
    [held] = await dispatches(db, d.room_id)
    assert (held.status, held.payload["ruling"]["amount"]) == ("held", "5000")
    return d


async def test_a_guard_send_carrying_a_held_figure_is_held_for_the_principal(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """The Guard sees the held send in its record and "delivers what is owed": its send goes
    through the same firewall screen as a persona's (F6: the held figure is private while it
    is held), so it is held too — the host's pane asks, and only the principal's yes
    releases it. A correction in the visitor's own pane carrying the figure is refused (no
    principal could release it)."""
    d = await held_under_the_floor(agent_server, model, db)
    owed = "Dev can do the sponsored post for $5,000."

    def guard(request: ModelRequest) -> BaseModel | None:
        if request.agent is AgentName.GUARD and len(request.context["panes"]) == 2:
            return GuardOutput(
                sends=[
                    GuardSend(from_pane="host", to="visitor", substance=owed),
                    GuardSend(from_pane="visitor", to="visitor", substance=owed),
                ]
            )
        return None

    model.script = guard
    await quiet(agent_server)

    assert not any("5,000" in b or "5000" in b for b in await bodies(db, d, "visitor"))
    [sent] = [x for x in await dispatches(db, d.room_id) if (x.payload or {}).get("origin")]
    assert (sent.status, sent.substance) == ("held", owed)
    asked = (await bodies(db, d, "host"))[-1]
    assert asked.startswith("Before I pass this on")
    assert owed in asked
    assert "Shall I send it as written?" in asked
    flags: list[Flag] = await room_rows(db, Flag, d.room_id)
    assert [f.level for f in flags].count("firewall") == 2  # the persona's send and the Guard's
    [verdict] = await verdicts(db, d.room_id)
    assert {"kind": "send", "target": "host → visitor", "detail": "held for the principal"} in (
        verdict.edits
    )
    assert any("send visitor → visitor: refused" in f for f in verdict.findings)

    # The principal's explicit yes releases it, once, through the ordinary delivery path.
    model.script = None
    before = len(model.requests)
    await post(d.host, d.room_id, "Yes, send it.")
    await agent_server.settle()
    released = next(x for x in await dispatches(db, d.room_id) if x.id == sent.id)
    assert released.status == "delivered"
    assert released.payload["released"]["byMessageId"]
    # What the yes approved crosses, and nothing of the question's reasons: the firewall's
    # note ("at or under your floor of 6000 USD") never reaches the visitor's agent.
    delivered = [r for r in model.requests[before:] if r.visitor_facing]
    assert delivered  # the released sends were delivered to the visitor's agent
    for request in delivered:
        sent_text = everything_sent(request)
        assert "6000" not in sent_text
        assert "6,000" not in sent_text


# --- operators -------------------------------------------------------------------------------

VERDICTS = """
query($r: ID!) { roomOps(roomId: $r) {
  guardVerdicts { verdict findings edits { kind target detail } createdAt }
} }
"""


async def test_operators_read_the_verdicts_and_the_host_cannot(
    agent_server: Server, db: Db
) -> None:
    d = await met_without_agreement(agent_server, db)
    await quiet(agent_server)
    assert await d.host.error_codes(VERDICTS, {"r": d.room_id}) == ["NOT_FOUND"]
    operator = agent_server.client()
    await sign_up(operator, "opsdesk", "Ops Desk")
    try:
        await db.execute(
            update(Account).where(Account.handle == "opsdesk").values(is_operator=True)
        )
        await db.commit()
    finally:
        await db.close()
    [verdict] = (await operator.query(VERDICTS, {"r": d.room_id}))["roomOps"]["guardVerdicts"]
    assert verdict["verdict"] == "repaired"
    assert verdict["edits"] == [{"kind": "goal", "target": "new-offer", "detail": "met → open"}]


async def test_the_guard_never_carries_one_brand_side_pane_into_another(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """A teammate's pane is another non-host participant's: a Guard send from the lead's pane
    into it is refused like any crossing an agent may not make; a correction stays in its pane."""
    from tests.support.team import seat_member

    d = await deal(agent_server)
    colleague = agent_server.client()
    lee = (await sign_up(colleague, "leelegal", "Lee Legal"))["account"]
    await seat_member(db, d.room_id, "visitor_2", lee["id"])
    await post(d.visitor, d.room_id, "Our absolute ceiling is $9,250, keep it to yourself.")
    await agent_server.settle()

    def guard(request: ModelRequest) -> BaseModel | None:
        if request.agent is AgentName.GUARD:
            return GuardOutput(
                sends=[
                    GuardSend(
                        from_pane="visitor", to="visitor_2", substance="Acme's ceiling: $9,250."
                    )
                ]
            )
        return None

    model.script = guard
    await quiet(agent_server)

    [verdict] = await verdicts(db, d.room_id)
    assert any("visitor → visitor_2" in f and "no such crossing" in f for f in verdict.findings)
    assert not any("9,250" in body for body in await bodies(db, d, "visitor_2"))
