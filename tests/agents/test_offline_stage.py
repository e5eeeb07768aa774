"""The offline persona and the written offer: status answers read from the DEAL STAGE alone
(seed 000, the Sophie Bell reversal), payment never taken or declared in chat, and the
Counter / Reject / Add shortcut lines ruling the new-offer goal.

Requests are built by ``dealroom.agents.persona.build`` from visibility-filtered memory, as
the turn pipeline builds them.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dealroom.agents import persona
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.offline.offer_talk import (
    ADD_PREFIX,
    COUNTER_PREFIX,
    REJECT_PREFIX,
)
from dealroom.agents.persona import PersonaInput, PersonaOutput, Send, Trigger
from dealroom.agents.render import Party
from dealroom.domain import memory_records, pane_words, stage_notices
from dealroom.domain.offer_stage import BOOKED, Stage
from dealroom.domain.seats import RoomKind, Seat
from dealroom.domain.visibility import visible_memory

HOST = Party("host", "Maya Lin")
VISITOR = Party("visitor", "Dana Ortiz")

ROOM: dict[str, Any] = {
    "host": {
        "rates": {"sponsored_post": {"ask": "8000 USD", "floor": "6000 USD"}},
        "rules": ["never work with alcohol brands"],
        "exclusions": ["alcohol"],
        "public": {"rate_card": ["sponsored post from 5000 USD"]},
    },
    "visitor": {"name": "Dana Ortiz", "company": "Acme"},
    "deal": {
        "proposals": {"sponsored_post": {"amount": "7000 USD"}},
        "dates": {"sponsored_post": "December 5"},
    },
}

MET: dict[str, Any] = ROOM | {
    "goals": {"new-offer": {"status": "met", "reason": "settled", "by": "visitor"}},
    "rulings": {
        "visitor": [
            {
                "decision": "settle",
                "amount": "7000",
                "currency": "USD",
                "deliverable": "sponsored_post",
                "dispatchId": "v0",
            }
        ]
    },
}
"""Terms settled at $7,000 and the written offer drawn."""

client = OfflineClient()


def request(
    pane: str,
    trigger: Trigger,
    *,
    stage: Stage = Stage.NO_WRITTEN_OFFER,
    room: Mapping[str, Any] = ROOM,
    plan: str = "",
    send_to: Sequence[str] | None = None,
) -> PersonaInput:
    other = "visitor" if pane == "host" else "host"
    return PersonaInput(
        room_kind=RoomKind.DEAL.value,
        pane=pane,
        represents=HOST,
        speaking_with=HOST if pane == "host" else VISITOR,
        memory=visible_memory(room, pane=pane, room_kind=RoomKind.DEAL),
        plan=plan,
        account_facts=None,
        session=[],
        trigger=trigger,
        send_to=[other] if send_to is None else list(send_to),
        deliveries=[],
        stage=stage,
    )


async def run(inputs: PersonaInput) -> PersonaOutput:
    output = (await client.generate(persona.build(inputs, model="test-model"))).output
    assert isinstance(output, PersonaOutput)
    return output


async def say(pane: str, body: str, **kwargs: Any) -> PersonaOutput:
    return await run(request(pane, Trigger("message", body), **kwargs))


def goals_of(output: PersonaOutput) -> list[tuple[str, str]]:
    return [(g.key, g.status) for g in output.goals]


# --- the checker: nothing is called booked, accepted or confirmed unless the stage is ---------

_BOOKING_CLAIMS = [
    re.compile(p, re.I)
    for p in (
        r"\b(?:is|are|now|officially|been|it's|it’s) (?:booked|accepted|confirmed)\b",
        r"\baccepts? (?:these|the) terms\b",
        r"\b(?:booking|offer|deal) is (?:confirmed|final|done)\b",
        r"\bI (?:can |hereby |do )?confirm\b",
        r"\b(?:maya lin|maya|sophie|the talent|she) (?:has )?(?:accepted|approved|signed)\b",
        r"\bconfirmed\b",
    )
]
_HOST_PANE_CLAIMS = [re.compile(r"\byou (?:have )?(?:accepted|approved|signed)\b", re.I)]
_PAYMENT_CLAIMS = [
    re.compile(p, re.I)
    for p in (
        r"\b(?:has|have|'ve|’ve) (?:been )?paid\b",
        # "Payment is made with Pay now on the offer" says where, not that it happened.
        r"\bpayment (?:was|has been) (?:made|received|completed?|done)\b",
        r"\bpayment is (?:received|complete|done)\b",
        r"\bpaid in full\b",
    )
]
PAID: frozenset[Stage] = frozenset(
    {Stage.PENDING_PAY_CAPTURE, Stage.BOOKED_PAYMENT_HELD, Stage.COMPLETED, Stage.DISPUTED}
)


def claims_booking(text: str, *, host_pane: bool) -> list[str]:
    checks = _BOOKING_CLAIMS + (_HOST_PANE_CLAIMS if host_pane else [])
    return [m.group(0) for check in checks if (m := check.search(text))]


def claims_payment(text: str) -> list[str]:
    return [m.group(0) for check in _PAYMENT_CLAIMS if (m := check.search(text))]


@pytest.mark.parametrize(
    "text",
    [
        "Maya Lin accepts these terms, and the performance is officially booked.",
        "Confirmed — Sophie has accepted.",
        "I confirm the talent's acceptance.",
        "It's booked!",
    ],
)
def test_the_checker_catches_the_sophie_bell_replies(text: str) -> None:
    assert claims_booking(text, host_pane=False)


STATUS_QUESTIONS = [
    "Please confirm the talent's acceptance",
    "Is this booked?",
    "Can you confirm Maya Lin accepted?",
    "Did the talent sign?",
    "Where are we?",
    "Is the contract signed?",
    "Has the payment gone through?",
    "Do we have a deal?",
]


@pytest.mark.parametrize("stage", list(Stage))
@pytest.mark.parametrize("pane", ["visitor", "host"])
@pytest.mark.parametrize("question", STATUS_QUESTIONS)
async def test_status_questions_are_answered_from_the_stage_alone(
    stage: Stage, pane: str, question: str
) -> None:
    # Memory says met and settled: only the stage may say where the deal stands.
    output = await say(pane, question, stage=stage, room=MET)
    reply = output.reply
    assert output.sends == []
    assert output.goals == []
    host_pane = pane == "host"
    if stage in BOOKED:
        assert re.search(r"\b(?:is|was) booked\b", reply), reply
    else:
        assert claims_booking(reply, host_pane=host_pane) == [], reply
        assert "booked" not in reply.lower() or "not booked" in reply.lower(), reply
    if stage not in PAID:
        assert claims_payment(reply) == [], reply
    for label in ("APPROVED", "ACCEPTED", stage.value):
        assert label not in reply  # glosses, never the labels
    assert "6,000" not in reply


@pytest.mark.parametrize(
    ("stage", "pane", "reply"),
    [
        (
            Stage.WRITTEN_AWAITING_BRAND,
            "visitor",
            "The written offer is waiting for your approval. Once you approve it, Maya Lin "
            "reviews it; it is not booked until Maya Lin approves the written offer.",
        ),
        (
            Stage.BRAND_ACKED_AWAITING_TALENT,
            "visitor",
            "You approved the written offer; Maya Lin has not approved it yet, so it is not "
            "booked.",
        ),
        (
            Stage.BRAND_ACKED_AWAITING_TALENT,
            "host",
            "The brand has approved; your approval of the written offer is the booking. It is "
            "not booked yet.",
        ),
        (
            Stage.BOOKED_AWAITING_PAYMENT,
            "visitor",
            "Maya Lin approved the written offer, so it is booked. Payment is made with Pay now "
            "on the offer; I never take card details in chat.",
        ),
        (Stage.DECLINED, "visitor", "The written offer is closed, so there is no booking."),
        (Stage.WITHDRAWN, "host", "The written offer is closed, so there is no booking."),
    ],
)
async def test_confirm_acceptance_is_answered_never_granted(
    stage: Stage, pane: str, reply: str
) -> None:
    output = await say(pane, "Please confirm the talent's acceptance", stage=stage, room=MET)
    assert output.reply == reply


async def test_with_no_written_offer_nothing_is_written_yet() -> None:
    output = await say("visitor", "Is this booked?")
    assert output.reply.startswith("Nothing is written yet: terms may be agreed here in chat")
    assert "not booked until Maya Lin approves the written offer" in output.reply


async def test_a_rule_naming_a_status_word_is_still_a_rule() -> None:
    output = await say("host", "Always confirm the date before you agree anything.")
    assert output.reply == "Noted — I'll hold to that with visitors."


# --- payment is made in the offer, never in chat ----------------------------------------------

PAYMENT_LINES = [
    "I've paid",
    "We paid the $7,000 already",
    "My card is 4111 1111 1111 1111 exp 12/27",
    "Here's my card number so you can charge it",
]


@pytest.mark.parametrize("stage", list(Stage))
@pytest.mark.parametrize("pane", ["visitor", "host"])
@pytest.mark.parametrize("line", PAYMENT_LINES)
async def test_payment_claims_and_cards_are_sent_to_the_offer(
    stage: Stage, pane: str, line: str
) -> None:
    output = await say(pane, line, stage=stage, room=MET)
    reply = output.reply
    assert reply.startswith("Payment is made with Pay now on the offer, not in chat; "), reply
    assert output.sends == []
    assert output.goals == []
    assert "4111" not in reply
    assert "card number" not in reply.lower()
    if stage not in PAID:
        assert claims_payment(reply) == [], reply
        assert "captured" not in reply
    if stage not in BOOKED:
        assert claims_booking(reply, host_pane=pane == "host") == [], reply
        assert "booked" not in reply.lower()


async def test_a_claimed_payment_is_not_taken_for_a_proposal() -> None:
    output = await say("visitor", "We paid the $7,000 already", stage=Stage.BOOKED_AWAITING_PAYMENT)
    assert output.reply == (
        "Payment is made with Pay now on the offer, not in chat; it is booked, and the offer "
        "shows no payment yet."
    )


# --- the shortcut lines: the visitor's pane ---------------------------------------------------


def test_the_shortcut_prefixes_are_the_ones_the_server_posts() -> None:
    assert COUNTER_PREFIX == "Counter to the written offer:"
    assert REJECT_PREFIX == "I reject the written offer."
    assert ADD_PREFIX == "Please add to the written offer:"


async def test_a_visitor_counter_with_an_amount_is_a_new_proposal() -> None:
    output = await say(
        "visitor",
        f"{COUNTER_PREFIX} $6,500 for the sponsored post",
        stage=Stage.WRITTEN_AWAITING_BRAND,
        room=MET,
    )
    assert goals_of(output) == [("new-offer", "open")]
    [send] = output.sends
    assert send.to == "host"
    assert send.substance == "Dana Ortiz proposes a sponsored post for $6,500 on December 5."
    assert send.ruling is None
    assert output.reply == (
        "Thanks — I'm checking that with Maya Lin now and will come back to you here."
    )


@pytest.mark.parametrize(
    ("line", "substance"),
    [
        (
            f"{ADD_PREFIX} usage rights for 6 months",
            "Dana Ortiz asks to add to the written offer: usage rights for 6 months.",
        ),
        (f"{ADD_PREFIX} 50% upfront", "Dana Ortiz asks to add to the written offer: 50% upfront."),
        (
            f"{COUNTER_PREFIX} a shorter usage window",
            "Dana Ortiz asks to change the written offer: a shorter usage window.",
        ),
    ],
)
async def test_a_visitor_add_or_counter_without_amount_reopens_and_goes_to_the_host(
    line: str, substance: str
) -> None:
    output = await say("visitor", line, stage=Stage.BRAND_ACKED_AWAITING_TALENT, room=MET)
    [goal] = output.goals
    assert (goal.key, goal.status) == ("new-offer", "open")
    assert goal.reason
    [send] = output.sends
    assert (send.to, send.substance, send.ruling) == ("host", substance, None)
    assert "checking that with Maya Lin" in output.reply


async def test_a_visitor_reject_abandons_the_goal_and_tells_the_host() -> None:
    output = await say(
        "visitor",
        f"{REJECT_PREFIX} The dates don't work for us.",
        stage=Stage.WRITTEN_AWAITING_BRAND,
        room=MET,
    )
    [goal] = output.goals
    assert (goal.key, goal.status) == ("new-offer", "abandoned")
    assert goal.reason == "Dana Ortiz rejected the written offer."
    [send] = output.sends
    assert send.to == "host"
    assert send.substance == "Dana Ortiz rejected the written offer: The dates don't work for us."
    assert send.ruling is None
    assert output.reply == (
        "Understood — the written offer will be closed, and I'll let Maya Lin know."
    )


async def test_shortcuts_without_a_send_still_rule_the_goal() -> None:
    rejected = await say("visitor", REJECT_PREFIX, room=MET, send_to=[])
    assert goals_of(rejected) == [("new-offer", "abandoned")]
    assert rejected.sends == []
    assert rejected.reply == "Understood — the written offer will be closed."
    added = await say("visitor", f"{ADD_PREFIX} a second story", room=MET, send_to=[])
    assert goals_of(added) == [("new-offer", "open")]
    assert added.sends == []


# --- the shortcut lines: the host's pane ------------------------------------------------------


async def test_a_host_reject_abandons_and_declines_to_the_visitor() -> None:
    output = await say(
        "host", REJECT_PREFIX, stage=Stage.BRAND_ACKED_AWAITING_TALENT, room=MET, plan=""
    )
    [goal] = output.goals
    assert (goal.key, goal.status, goal.reason) == (
        "new-offer",
        "abandoned",
        "Maya Lin rejected the written offer.",
    )
    [send] = output.sends
    assert send.to == "visitor"
    assert send.ruling is not None
    assert send.ruling.decision == "decline"
    assert send.substance == "Maya Lin won't be able to take this one on."


async def test_a_host_counter_with_an_amount_is_the_principals_instruction() -> None:
    output = await say(
        "host",
        f"{COUNTER_PREFIX} $7,500 for the sponsored post",
        stage=Stage.BRAND_ACKED_AWAITING_TALENT,
        room=MET,
    )
    assert goals_of(output) == [("new-offer", "open")]
    [send] = output.sends
    assert send.to == "visitor"
    assert send.ruling is not None
    assert (send.ruling.decision, send.ruling.amount, send.ruling.deliverable) == (
        "counter",
        "7500",
        "sponsored_post",
    )
    assert send.substance == "Maya Lin can do the sponsored post at $7,500."
    assert output.reply == "Understood — I'll offer them $7,500."


@pytest.mark.parametrize(
    ("line", "substance"),
    [
        (
            f"{ADD_PREFIX} usage rights for 6 months",
            "Maya Lin asks to add to the written offer: usage rights for 6 months.",
        ),
        (
            f"{COUNTER_PREFIX} delivery a week later",
            "Maya Lin asks to change the written offer: delivery a week later.",
        ),
    ],
)
async def test_a_host_change_without_amount_is_put_to_the_brand(line: str, substance: str) -> None:
    output = await say("host", line, stage=Stage.WRITTEN_AWAITING_BRAND, room=MET)
    assert goals_of(output) == [("new-offer", "open")]
    [send] = output.sends
    assert (send.to, send.substance, send.ruling) == ("visitor", substance, None)
    assert output.reply == "Understood — I'll put that change to Dana Ortiz."


async def test_an_open_goal_is_not_reopened_by_a_shortcut() -> None:
    room = ROOM | {"goals": {"new-offer": {"status": "open", "reason": "", "by": "visitor"}}}
    output = await say("visitor", f"{ADD_PREFIX} a second story", room=room)
    assert output.goals == []
    assert len(output.sends) == 1


async def test_a_visitor_notice_reaching_the_host_is_not_ruled_as_a_proposal() -> None:
    # deal.proposals holds $7,000: the notice must not be re-ruled at that amount.
    trigger = Trigger("delivery", "Dana Ortiz rejected the written offer.", sender="visitor")
    output = await run(request("host", trigger, room=MET))
    assert output.sends == []
    assert output.reply == "Dana Ortiz rejected the written offer. It will be closed."


# --- whole flows through the room document ----------------------------------------------------


class Room:
    """Turns applied as code applies them: plans, goal rulings, rulings recorded on delivery.
    ``flips`` lists each change of the new-offer goal's status (code acts on flips)."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document: dict[str, Any] = copy.deepcopy(dict(document))
        self.flips: list[str] = []
        self.dispatches = 0

    def status(self) -> str:
        return str(self.document.get("goals", {}).get("new-offer", {}).get("status", ""))

    async def turn(self, pane: str, trigger: Trigger) -> PersonaOutput:
        output = await run(
            request(
                pane,
                trigger,
                room=self.document,
                plan=memory_records.own_plan(self.document, pane),
                stage=Stage.WRITTEN_AWAITING_BRAND,
            )
        )
        self.document = memory_records.set_plan(self.document, pane, output.plan)
        before = self.status()
        self.document, skipped = memory_records.rule_goals(
            self.document, [(g.key, g.status, g.reason) for g in output.goals], by=pane
        )
        assert skipped == ()
        if self.status() != before:
            self.flips.append(self.status())
        return output

    async def deliver(self, send: Send) -> PersonaOutput:
        self.dispatches += 1
        sender = "host" if send.to == "visitor" else "visitor"
        ruling = send.ruling.model_dump() if send.ruling else None
        output = await self.turn(
            send.to, Trigger("delivery", send.substance, sender, ruling, tuple(send.open_questions))
        )
        if ruling is not None:
            self.document = memory_records.record_ruling(
                self.document, send.to, ruling, f"d{self.dispatches}"
            )
        return output

    async def say(self, pane: str, body: str) -> PersonaOutput:
        return await self.turn(pane, Trigger("message", body))

    async def relay(self, output: PersonaOutput) -> PersonaOutput:
        """Deliver the one send ``output`` made and return the recipient's turn."""
        [send] = output.sends
        return await self.deliver(send)


async def test_met_then_a_counter_with_an_amount_then_a_settle_flips_open_then_met() -> None:
    room = Room(MET)
    countered = await room.say("visitor", f"{COUNTER_PREFIX} $9,000 for the sponsored post")
    ruled = await room.relay(countered)
    assert ruled.sends[0].ruling is not None
    assert ruled.sends[0].ruling.decision == "settle"
    final = await room.relay(ruled)
    assert final.reply == (
        "Good news: $9,000 for the sponsored post works for Maya Lin. On the written offer "
        "you'll pay the $9,000 fee plus the platform fee of $1,800 (20%): $10,800 in all."
    )
    assert room.flips == ["open", "met"]


async def test_met_then_a_counter_then_a_host_counter_then_yes_flips_open_then_met() -> None:
    room = Room(MET)
    countered = await room.say("visitor", f"{COUNTER_PREFIX} $4,000 for the sponsored post")
    ruled = await room.relay(countered)
    assert ruled.sends[0].ruling is not None
    assert ruled.sends[0].ruling.decision == "counter"
    offered = await room.relay(ruled)
    assert offered.reply.endswith("Does that work for you?")
    assert room.flips == ["open"]
    agreed = await room.say("visitor", "Sounds good.")
    assert goals_of(agreed) == [("new-offer", "met")]
    settled = await room.relay(agreed)
    await room.relay(settled)
    assert room.flips == ["open", "met"]
    assert room.status() == "met"


async def test_a_yes_after_a_new_proposal_does_not_take_the_older_counter() -> None:
    room = Room(ROOM)
    first = await room.say("visitor", "We'd pay $4,000 for a sponsored post.")
    await room.relay(await room.relay(first))  # the host counters at $8,000
    await room.say("visitor", f"{COUNTER_PREFIX} $5,000 for the sponsored post")
    # The $5,000 has not been ruled on yet: a yes now is not a yes to the $8,000.
    early = await room.say("visitor", "ok")
    assert early.goals == []
    assert early.sends == []


async def test_a_visitor_add_is_put_to_the_principal_and_their_yes_settles_again() -> None:
    room = Room(MET)
    added = await room.say("visitor", f"{ADD_PREFIX} usage rights for 6 months")
    told = await room.relay(added)
    assert told.sends == []  # never settled without the principal
    assert told.reply == (
        "Dana Ortiz asks to add to the written offer: usage rights for 6 months. The written "
        "offer stands at $7,000 for the sponsored post. Should I take it?"
    )
    yes = await room.say("host", "yes, that's fine")
    [send] = yes.sends
    assert send.ruling is not None
    assert (send.ruling.decision, send.ruling.amount) == ("settle", "7000")
    final = await room.deliver(send)
    assert final.reply == (
        "Good news: Maya Lin agrees to the change to the written offer: $7,000 for the "
        "sponsored post. On the written offer you'll pay the $7,000 fee plus the platform fee "
        "of $1,400 (20%): $8,400 in all."
    )
    assert room.flips == ["open", "met"]


async def test_the_principal_refusing_a_change_keeps_the_written_offer() -> None:
    room = Room(MET)
    await room.relay(await room.say("visitor", f"{ADD_PREFIX} a second story"))
    no = await room.say("host", "no")
    [send] = no.sends
    assert send.ruling is None  # a decline would close the written offer
    assert (
        send.substance == "Maya Lin can't make that change to the written offer; it stays as it is."
    )
    told = await room.deliver(send)
    assert told.goals == []
    assert room.flips == ["open"]


async def test_a_host_change_answered_yes_by_the_visitor_settles_again() -> None:
    room = Room(MET)
    asked = await room.say("host", f"{ADD_PREFIX} usage rights for 6 months")
    shown = await room.relay(asked)
    assert shown.reply == (
        "Maya Lin asks to add to the written offer: usage rights for 6 months. "
        "Does that work for you?"
    )
    yes = await room.say("visitor", "Yes, that works")
    assert goals_of(yes) == [("new-offer", "met")]
    told = await room.relay(yes)
    assert told.sends == []
    assert told.reply == "Dana Ortiz agrees to the change to the written offer."
    assert room.flips == ["open", "met"]


async def test_a_rejection_flows_to_both_sides_without_a_ruling() -> None:
    room = Room(MET)
    rejected = await room.say("visitor", REJECT_PREFIX)
    told = await room.relay(rejected)
    assert told.sends == []
    assert room.flips == ["abandoned"]


async def test_after_a_reject_an_ok_does_not_take_the_standing_counter() -> None:
    room = Room(ROOM)
    first = await room.say("visitor", "We'd pay $4,000 for a sponsored post.")
    await room.relay(await room.relay(first))  # the host counters at $8,000
    await room.relay(await room.say("visitor", REJECT_PREFIX))
    later = await room.say("visitor", "ok")
    assert later.goals == []
    assert room.flips == ["open", "abandoned"]


async def test_visitor_replies_in_these_flows_never_state_private_terms() -> None:
    room = Room(MET)
    replies: list[str] = []
    for line in [
        f"{COUNTER_PREFIX} $1,000 for the sponsored post",
        "Is this booked?",
        f"{ADD_PREFIX} usage rights",
        "I've paid",
    ]:
        said = await room.say("visitor", line)
        replies.append(said.reply)
        for send in said.sends:
            ruled = await room.deliver(send)
            replies += [(await room.deliver(s)).reply for s in ruled.sends]
    for reply in replies:
        assert "6,000" not in reply
        assert "alcohol" not in reply.lower()
    visible = visible_memory(room.document, pane="visitor", room_kind=RoomKind.DEAL)
    assert "6000" not in json.dumps(visible)


# --- PW1: people's words, never a label -------------------------------------------------------


@pytest.mark.parametrize("stage", list(Stage))
@pytest.mark.parametrize("pane", ["visitor", "host"])
async def test_pw1_no_offline_line_about_the_stage_names_a_label(stage: Stage, pane: str) -> None:
    """Every line the offline persona says about where the deal stands — a stage event told,
    a status question, a payment question, a claimed payment — is in people's words."""
    room = MET if stage is not Stage.NO_WRITTEN_OFFER else ROOM
    lines = []
    for actor in ("host", "visitor", "payment", "offer_gen"):
        for seat, told in stage_notices.notices(stage, 2, actor).items():
            if seat.value == pane:
                lines.append((await run(request(pane, Trigger("stage", told), stage=stage))).reply)
    for body in ("Where do we stand?", "How do I pay?", "We paid already.", "Is it booked?"):
        lines.append((await say(pane, body, stage=stage, room=room)).reply)
    for line in lines:
        assert pane_words.labels_in(line) == [], line


async def test_pw1_the_check_sees_a_label_in_an_agent_line() -> None:
    """The check above is live: a stage event told with its label in it is caught."""
    told = f"{stage_notices.notices(Stage.WRITTEN_AWAITING_BRAND, 1, 'offer_gen')[Seat.VISITOR]}"
    line = (await run(request("visitor", Trigger("stage", f"{told} WRITTEN_AWAITING_BRAND")))).reply
    assert pane_words.labels_in(line) == ["WRITTEN_AWAITING_BRAND"]
    assert pane_words.labels_in(pane_words.in_people_words(line)) == []  # PW2 before storing
