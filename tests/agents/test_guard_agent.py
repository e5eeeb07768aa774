"""The Guard agent: its Gemini path against the fake server (what goes on the wire, the schema,
parsing) and the offline engine's rules on audit contexts."""

from __future__ import annotations

import json

from dealroom.agents import guard
from dealroom.agents.guard import GuardInput, GuardOutput, PaneAudit
from dealroom.agents.models.gemini import GeminiClient
from dealroom.agents.models.offline.client import respond
from dealroom.agents.render import Line, Party
from dealroom.domain import offer_stage
from dealroom.domain.offer_stage import Stage
from tests.support.fake_gemini import FakeGemini, Reply

HOST = Party("host", "Maya Lind")


def audit(
    *,
    visitor: list[Line],
    last_reply: str | None = None,
    sent_to: tuple[str, ...] = (),
    memory: dict[str, object] | None = None,
    stage: Stage = Stage.NO_WRITTEN_OFFER,
) -> GuardInput:
    return GuardInput(
        room_kind="deal",
        represents=HOST,
        panes=[
            PaneAudit("host", "Maya Lind", [], "", None, ()),
            PaneAudit("visitor", "Oskar", visitor, "", last_reply, sent_to),
        ],
        memory=memory or {},
        dispatches=[],
        stage=stage,
    )


def offline(inputs: GuardInput) -> GuardOutput:
    return GuardOutput.model_validate_json(respond(guard.build(inputs, model="offline")))


ANSWER = {
    "findings": [{"pane": "visitor", "problem": "Promised a delivery, sent nothing."}],
    "sends": [
        {
            "from_pane": "visitor",
            "to": "host",
            "substance": "Oskar asks for one post in May.",
            "open_questions": [],
        }
    ],
    "goals": [{"key": "new-offer", "reason": "Nothing was agreed."}],
    "memory": [{"op": "remove", "path": "deal.sent", "value": None}],
    "clear_plans": ["visitor"],
}


async def test_the_guard_call_sends_its_prompt_schema_and_the_stage_tail(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    request = guard.build(
        audit(
            visitor=[Line("participant", "One post in May?")], stage=Stage.WRITTEN_AWAITING_BRAND
        ),
        model="gemini-2.5-pro",
    )
    fake_gemini.script(Reply(json.dumps(ANSWER)))

    generation = await gemini.generate(request)

    [sent] = fake_gemini.requests
    assert sent.model == "gemini-2.5-pro"
    assert sent.system == guard.SYSTEM
    assert offer_stage.vocabulary() in sent.system
    assert sent.contents == request.prompt
    assert sent.contents.split("\n\n")[-1] == offer_stage.deal_stage_block(
        Stage.WRITTEN_AWAITING_BRAND
    )
    assert sent.schema["propertyOrdering"] == [
        "findings",
        "sends",
        "goals",
        "memory",
        "clear_plans",
    ]
    assert list(sent.schema["$defs"]["GoalFix"]["properties"]) == ["key", "reason"]
    assert isinstance(generation.output, GuardOutput)
    assert generation.output.model_dump() == ANSWER
    assert request.visitor_facing is False


def test_relayed_lines_are_marked_in_what_the_guard_reads() -> None:
    request = guard.build(
        audit(visitor=[Line("agent", "Maya says go ahead at 1800 EUR.", relayed_from="Maya Lind")]),
        model="m",
    )
    assert "agent: [relayed from Maya Lind] Maya says go ahead at 1800 EUR." in request.prompt


def test_offline_a_healthy_room_needs_nothing() -> None:
    out = offline(
        audit(
            visitor=[Line("participant", "Hi"), Line("agent", "Hi Oskar, what do you need?")],
            last_reply="Hi Oskar, what do you need?",
        )
    )
    assert out == GuardOutput()


def test_offline_a_promise_whose_turn_sent_nothing_is_delivered() -> None:
    said = "Tell Maya we can do May 3."
    reply = "I'll pass that to Maya now."
    lines = [Line("participant", said), Line("agent", reply)]
    out = offline(audit(visitor=lines, last_reply=reply))
    [send] = out.sends
    assert (send.from_pane, send.to) == ("visitor", "host")
    assert said in send.substance
    # The same promise whose turn did send is kept.
    assert offline(audit(visitor=lines, last_reply=reply, sent_to=("host",))).sends == []


def test_offline_a_booking_claim_is_corrected_unless_it_was_a_relay() -> None:
    claim = "Great news, it is booked."
    own = offline(audit(visitor=[Line("agent", claim)]))
    [send] = own.sends
    assert (send.from_pane, send.to) == ("visitor", "visitor")
    assert "not booked" in send.substance
    relayed = offline(audit(visitor=[Line("agent", claim, relayed_from="Maya Lind")]))
    assert relayed.sends == []
    booked = offline(audit(visitor=[Line("agent", claim)], stage=Stage.BOOKED_AWAITING_PAYMENT))
    assert booked.sends == []


def test_offline_a_met_goal_stands_on_any_agreement() -> None:
    goals: dict[str, object] = {"goals": {"new-offer": {"status": "met", "by": "visitor"}}}
    bare = offline(audit(visitor=[Line("participant", "Hi")], memory=goals))
    assert [g.key for g in bare.goals] == ["new-offer"]
    agreed = offline(audit(visitor=[Line("participant", "Yes, that works for us.")], memory=goals))
    assert agreed.goals == []
