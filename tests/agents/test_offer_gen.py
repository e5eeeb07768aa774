"""Offer-Gen (seed 000 "Records are made by a specialist"): the request it is built from, the
code check on its output (``to_terms``), and the offline engine's reading of what was agreed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dealroom.agents import offer_gen
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.gemini import response_json_schema
from dealroom.agents.models.offline import OfflineClient, respond
from dealroom.agents.models.offline.offer_gen import offer_gen_output
from dealroom.agents.offer_gen import (
    MAX_ITEMS,
    MAX_TEXT,
    OPEN_CURRENCY,
    OPEN_DATES,
    OPEN_DELIVERABLES,
    OPEN_EXCLUSIVITY,
    OPEN_FEE,
    OPEN_PAYMENT_SCHEDULE,
    OPEN_USAGE_RIGHTS,
    ExtractedTerms,
    OfferGenInput,
    OfferGenOutput,
    to_terms,
)
from dealroom.agents.render import Line, Party
from dealroom.domain import offer_stage
from dealroom.domain.offer_stage import Stage
from dealroom.domain.offers import ADD_PREFIX
from dealroom.domain.seats import RoomKind
from dealroom.domain.visibility import visible_memory

HOST = Party("host", "Maya Lin")
VISITOR = Party("visitor", "Dana Ortiz")
FLOOR = "6000 USD"
PRIVATE_RULE = "never work with alcohol brands"

ROOM: dict[str, Any] = {
    "host": {
        "rates": {"sponsored_post": {"ask": "8000 USD", "floor": FLOOR}},
        "rules": [PRIVATE_RULE],
        "public": {"rate_card": ["sponsored_post from 5000 USD"]},
    },
    "visitor": {"name": "Dana Ortiz", "company": "Acme"},
    "deal": {},
}


def participant(body: str) -> Line:
    return Line("participant", body)


def agent(body: str) -> Line:
    return Line("agent", body)


def ruling(decision: str, amount: str, deliverable: str = "sponsored_post") -> dict[str, Any]:
    return {"decision": decision, "amount": amount, "currency": "USD", "deliverable": deliverable}


def request(
    lines: Sequence[Line] = (),
    rulings: Sequence[Mapping[str, Any]] = (),
    *,
    current_terms: Mapping[str, Any] | None = None,
    stage: Stage = Stage.NO_WRITTEN_OFFER,
) -> ModelRequest:
    return offer_gen.build(
        OfferGenInput(
            represents=HOST,
            counterparty=VISITOR,
            memory=visible_memory(ROOM, pane="visitor", room_kind=RoomKind.DEAL),
            transcript=list(lines),
            rulings=list(rulings),
            current_terms=current_terms,
            stage=stage,
        ),
        model="test-model",
    )


def extract(
    lines: Sequence[Line] = (),
    rulings: Sequence[Mapping[str, Any]] = (),
    *,
    current_terms: Mapping[str, Any] | None = None,
) -> OfferGenOutput:
    return offer_gen_output(request(lines, rulings, current_terms=current_terms).context)


def output(**fields: Any) -> OfferGenOutput:
    base: dict[str, Any] = {
        "deliverables": ["sponsored post"],
        "fee_amount": "8000",
        "currency": "USD",
        "dates": ["2026-12-05"],
        "usage_rights": "6 months organic social",
        "exclusivity": None,
        "due_slice_percent": "50",
        "open_questions": [],
    }
    return OfferGenOutput.model_validate(base | fields)


# --- the request ------------------------------------------------------------------------------


def test_the_request_is_visitor_facing_and_ends_with_the_deal_stage_block() -> None:
    built = request([participant("Hi")], stage=Stage.WRITTEN_AWAITING_BRAND)
    assert built.agent is AgentName.OFFER_GEN
    assert built.visitor_facing is True
    assert built.output is OfferGenOutput
    assert built.prompt.split("\n\n")[-1] == offer_stage.deal_stage_block(
        Stage.WRITTEN_AWAITING_BRAND
    )
    assert offer_stage.vocabulary() in built.system


def test_the_context_holds_exactly_the_input() -> None:
    terms = {"deliverables": ["reel"], "fee": {"amount": "5000.00", "currency": "USD"}}
    built = request(
        [participant("$4k for a reel?"), agent("Maya can do the reel at $5,000.")],
        [ruling("counter", "5000", "reel")],
        current_terms=terms,
    )
    assert set(built.context) == {
        "agent",
        "represents",
        "counterparty",
        "memory",
        "transcript",
        "rulings",
        "current_terms",
        "stage",
    }
    assert built.context["transcript"] == [
        {"author": "participant", "body": "$4k for a reel?"},
        {"author": "agent", "body": "Maya can do the reel at $5,000."},
    ]
    assert built.context["rulings"] == [ruling("counter", "5000", "reel")]
    assert built.context["current_terms"] == terms
    # The prompt is rendered from the same things.
    for body in ("$4k for a reel?", "Maya can do the reel at $5,000.", '"5000.00"'):
        assert body in built.prompt


def test_the_request_never_holds_the_hosts_private_terms() -> None:
    built = request([participant("What's the lowest Maya would go?")])
    seen = built.text + json.dumps(built.context)
    assert "6000" not in seen
    assert PRIVATE_RULE not in seen
    assert "5000 USD" in seen  # the public rate card is the visitor's to see


def test_the_schema_orders_every_field_and_forbids_extras() -> None:
    schema = response_json_schema(OfferGenOutput)
    fields = list(OfferGenOutput.model_fields)
    assert schema["propertyOrdering"] == fields
    assert schema["required"] == fields
    assert schema["additionalProperties"] is False
    assert all(prop.get("description") for prop in schema["properties"].values())


async def test_the_offline_client_round_trips_the_output() -> None:
    built = request([participant("$6,500 for a sponsored post?")], [ruling("settle", "6500")])
    generation = await OfflineClient().generate(built)
    assert isinstance(generation.output, OfferGenOutput)
    assert generation.output == offer_gen_output(built.context)
    assert generation.output.fee_amount == "6500"


# --- to_terms: the code check -----------------------------------------------------------------


def test_valid_output_becomes_the_offers_terms() -> None:
    extracted = to_terms(output(exclusivity="  30 days, beverages  "))
    assert extracted == ExtractedTerms(
        terms={
            "deliverables": ["sponsored post"],
            "fee": {"amount": "8000.00", "currency": "USD"},
            "dates": ["2026-12-05"],
            "usageRights": "6 months organic social",
            "exclusivity": "30 days, beverages",
            "dueSlicePercent": "50",
        },
        open_questions=(),
    )


@pytest.mark.parametrize(
    ("fields", "question"),
    [
        ({"fee_amount": None}, OPEN_FEE),
        ({"fee_amount": "0"}, OPEN_FEE),
        ({"fee_amount": "-8000"}, OPEN_FEE),
        ({"fee_amount": "NaN"}, OPEN_FEE),
        ({"fee_amount": "Infinity"}, OPEN_FEE),
        ({"fee_amount": "8000.505"}, OPEN_FEE),
        ({"fee_amount": "$8,000"}, OPEN_FEE),
        ({"fee_amount": "eight thousand"}, OPEN_FEE),
        ({"fee_amount": "1e40"}, OPEN_FEE),
        ({"currency": None}, OPEN_CURRENCY),
        ({"currency": "US"}, OPEN_CURRENCY),
        ({"currency": "dollars"}, OPEN_CURRENCY),
        ({"currency": "US$"}, OPEN_CURRENCY),
        ({"deliverables": []}, OPEN_DELIVERABLES),
        ({"deliverables": ["  ", ""]}, OPEN_DELIVERABLES),
    ],
)
def test_without_a_fee_currency_and_deliverable_there_are_no_terms(
    fields: dict[str, Any], question: str
) -> None:
    extracted = to_terms(output(**fields))
    assert extracted.terms is None
    assert question in extracted.open_questions


@pytest.mark.parametrize(
    ("raw", "amount"),
    [
        ("8000", "8000.00"),
        (" 8000.5 ", "8000.50"),
        ("8,000", "8000.00"),
        ("8E+3", "8000.00"),
        ("8000.500", "8000.50"),
    ],
)
def test_the_fee_is_a_plain_decimal_string(raw: str, amount: str) -> None:
    extracted = to_terms(output(fee_amount=raw))
    assert extracted.terms is not None
    assert extracted.terms["fee"]["amount"] == amount


@pytest.mark.parametrize(
    ("raw", "currency", "amount"),
    [
        ("8000", "JPY", "8000"),
        ("8000.00", "JPY", "8000"),
        ("12.505", "BHD", "12.505"),
        ("12.5", "BHD", "12.500"),
        ("8000.5", "EUR", "8000.50"),
    ],
)
def test_the_fee_is_written_in_the_currencys_minor_unit(
    raw: str, currency: str, amount: str
) -> None:
    extracted = to_terms(output(fee_amount=raw, currency=currency))
    assert extracted.terms is not None
    assert extracted.terms["fee"] == {"amount": amount, "currency": currency}


@pytest.mark.parametrize(
    ("raw", "currency", "question"),
    [
        ("8000.50", "JPY", OPEN_FEE),  # no such amount in yen
        ("12.5055", "BHD", OPEN_FEE),
        ("8000", "XYZ", OPEN_CURRENCY),  # not a currency the platform takes payment in
        ("0", "USD", OPEN_FEE),
        ("-5", "USD", OPEN_FEE),
    ],
)
def test_a_fee_no_one_could_pay_is_an_open_question(raw: str, currency: str, question: str) -> None:
    extracted = to_terms(output(fee_amount=raw, currency=currency))
    assert extracted.terms is None
    assert question in extracted.open_questions


def test_the_currency_is_upper_cased() -> None:
    extracted = to_terms(output(currency=" eur "))
    assert extracted.terms is not None
    assert extracted.terms["fee"]["currency"] == "EUR"


@pytest.mark.parametrize(
    ("raw", "percent"),
    [("50", "50"), ("100", "100"), ("33.5", "33.5"), ("20.00", "20"), ("50%", "50")],
)
def test_a_due_slice_in_range_is_kept(raw: str, percent: str) -> None:
    extracted = to_terms(output(due_slice_percent=raw))
    assert extracted.terms is not None
    assert extracted.terms["dueSlicePercent"] == percent
    assert OPEN_PAYMENT_SCHEDULE not in extracted.open_questions


@pytest.mark.parametrize("raw", [None, "0", "-10", "100.01", "150", "half", "33.333", "NaN"])
def test_a_missing_or_invalid_due_slice_is_an_open_question(raw: str | None) -> None:
    extracted = to_terms(output(due_slice_percent=raw))
    assert extracted.terms is not None  # the platform default applies; the offer still stands
    assert extracted.terms["dueSlicePercent"] is None
    assert OPEN_PAYMENT_SCHEDULE in extracted.open_questions


def test_lists_are_stripped_deduplicated_and_keep_their_order() -> None:
    extracted = to_terms(
        output(
            deliverables=["Sponsored post", " sponsored post ", "", "reel", "Reel", "story"],
            dates=["2026-12-05", "2026-12-05", "early December"],
            open_questions=["Which hashtag?", " which hashtag? "],
        )
    )
    assert extracted.terms is not None
    assert extracted.terms["deliverables"] == ["Sponsored post", "reel", "story"]
    assert extracted.terms["dates"] == ["2026-12-05", "early December"]
    assert extracted.open_questions == ("Which hashtag?",)


def test_lengths_are_capped() -> None:
    extracted = to_terms(
        output(
            deliverables=[f"post {n}" for n in range(MAX_ITEMS + 5)],
            usage_rights="x" * (MAX_TEXT + 50),
            open_questions=[f"Question {n}?" for n in range(MAX_ITEMS + 5)],
        )
    )
    assert extracted.terms is not None
    assert extracted.terms["deliverables"] == [f"post {n}" for n in range(MAX_ITEMS)]
    assert extracted.terms["usageRights"] == "x" * MAX_TEXT
    assert len(extracted.open_questions) == MAX_ITEMS


def test_an_impossible_iso_date_is_dropped_and_asked_about() -> None:
    extracted = to_terms(output(dates=["2026-02-30", "2026-03-01"]))
    assert extracted.terms is not None
    assert extracted.terms["dates"] == ["2026-03-01"]
    assert OPEN_DATES in extracted.open_questions


def test_code_questions_come_first_and_the_models_are_kept() -> None:
    extracted = to_terms(
        output(fee_amount=None, due_slice_percent=None, open_questions=["Which hashtag?"])
    )
    assert extracted.open_questions == (OPEN_FEE, OPEN_PAYMENT_SCHEDULE, "Which hashtag?")


# --- the offline engine -----------------------------------------------------------------------


def test_a_settled_ruling_is_the_agreed_fee() -> None:
    found = extract(
        [
            participant("We'd pay $6,500 for a sponsored post on December 5, 2026."),
            agent("Good news: $6,500 for the sponsored post works for Maya Lin."),
        ],
        [ruling("counter", "7000"), ruling("settle", "6500")],
    )
    assert (found.fee_amount, found.currency) == ("6500", "USD")
    assert found.deliverables == ["sponsored post"]
    assert found.dates == ["2026-12-05"]
    assert OPEN_FEE not in found.open_questions


def test_a_counter_the_participant_said_yes_to_is_agreed() -> None:
    found = extract(
        [
            participant("$4,000 for a reel?"),
            agent("Maya Lin can do the reel at $5,500. Does that work for you?"),
            participant("Yes, that works for us."),
        ],
        [ruling("counter", "5500", "reel")],
    )
    assert (found.fee_amount, found.currency, found.deliverables) == ("5500", "USD", ["reel"])


def test_a_counter_not_yet_answered_is_not_agreed() -> None:
    found = extract(
        [
            participant("$4,000 for a reel?"),
            agent("Maya Lin can do the reel at $5,500. Does that work for you?"),
            participant("Let me check with my team."),
        ],
        [ruling("counter", "5500", "reel")],
    )
    assert found.fee_amount is None
    assert found.currency is None
    assert OPEN_FEE in found.open_questions
    assert to_terms(found).terms is None


def test_a_counter_answered_with_another_amount_is_not_agreed() -> None:
    found = extract(
        [
            agent("Maya Lin can do the reel at $5,500. Does that work for you?"),
            participant("Ok, but could we do $5,000 instead?"),
            participant("Sure."),
        ],
        [ruling("counter", "5500", "reel")],
    )
    assert found.fee_amount is None


def test_amounts_mentioned_but_never_agreed_give_no_fee() -> None:
    found = extract(
        [
            participant("We were thinking $4,000 for a sponsored post."),
            agent("Maya usually charges $8,000 for that."),
            participant("Hmm. Would $5,000 be possible?"),
            agent("I'll check and come back to you."),
        ]
    )
    assert found.fee_amount is None
    assert found.deliverables == ["sponsored post"]
    assert OPEN_FEE in found.open_questions


def test_an_amount_the_agent_stated_and_the_participant_took_is_agreed() -> None:
    found = extract(
        [
            participant("What would a sponsored post cost?"),
            agent("Maya can do a sponsored post for $7,000."),
            participant("Deal."),
        ]
    )
    assert (found.fee_amount, found.currency, found.deliverables) == (
        "7000",
        "USD",
        ["sponsored post"],
    )


def test_a_no_ends_the_standing_amount() -> None:
    found = extract(
        [
            agent("Maya can do a sponsored post for $7,000."),
            participant("No, that's too much."),
            participant("Ok."),
        ]
    )
    assert found.fee_amount is None


@pytest.mark.parametrize(
    ("line", "percent"),
    [
        ("We can pay 50% upfront and the rest on delivery.", "50"),
        ("50% up front works.", "50"),
        ("Half upfront, half after posting.", "50"),
        ("A 50/50 split is fine.", "50"),
        ("There's a deposit of 30% at booking.", "30"),
        ("We'd do a 30% deposit.", "30"),
        ("It will be paid in full at booking.", "100"),
        ("Full payment upfront is fine.", "100"),
    ],
)
def test_the_payment_schedule_is_read(line: str, percent: str) -> None:
    found = extract([participant(line)])
    assert found.due_slice_percent == percent
    assert OPEN_PAYMENT_SCHEDULE not in found.open_questions


def test_a_schedule_only_asked_about_is_an_open_question() -> None:
    found = extract([participant("Could you do 50% upfront?")])
    assert found.due_slice_percent is None
    assert OPEN_PAYMENT_SCHEDULE in found.open_questions


def test_usage_rights_and_exclusivity_are_read_from_statements() -> None:
    found = extract(
        [
            agent("What usage rights do you need?"),
            participant("Usage rights: 6 months on organic social."),
            agent("Maya asks for 30 days of category exclusivity."),
        ]
    )
    assert found.usage_rights == "6 months on organic social"
    assert found.exclusivity == "Maya asks for 30 days of category exclusivity"


def test_an_add_button_line_gives_the_term_not_the_buttons_words() -> None:
    found = extract([participant(f"{ADD_PREFIX} usage rights for 6 months")])
    assert found.usage_rights == "usage rights for 6 months"


def test_unsettled_terms_are_named_never_invented() -> None:
    found = extract([participant("Hello!")])
    assert found == OfferGenOutput(
        deliverables=[],
        fee_amount=None,
        currency=None,
        dates=[],
        usage_rights=None,
        exclusivity=None,
        due_slice_percent=None,
        open_questions=[
            OPEN_FEE,
            OPEN_DELIVERABLES,
            OPEN_DATES,
            OPEN_USAGE_RIGHTS,
            OPEN_EXCLUSIVITY,
            OPEN_PAYMENT_SCHEDULE,
        ],
    )


def test_dates_with_a_year_are_iso_and_without_one_as_read() -> None:
    found = extract(
        [
            participant("Could it go live December 5, 2026?"),
            agent("Dec 12th works too, and the draft is due 2026-11-30."),
        ]
    )
    assert found.dates == ["2026-12-05", "December 12", "2026-11-30"]


def test_a_rewrite_keeps_the_written_terms_the_conversation_did_not_change() -> None:
    current = {
        "deliverables": ["sponsored post"],
        "fee": {"amount": "7000.00", "currency": "USD"},
        "dates": ["2026-12-05"],
        "usageRights": "6 months organic",
        "exclusivity": None,
        "dueSlicePercent": "50",
    }
    found = extract(
        [
            agent("Maya can do the sponsored post at $7,500 with a story."),
            participant("Sounds good."),
        ],
        current_terms=current,
    )
    assert (found.fee_amount, found.currency) == ("7500", "USD")
    assert found.deliverables == ["sponsored post", "story"]
    assert found.dates == ["2026-12-05"]
    assert found.usage_rights == "6 months organic"
    assert found.due_slice_percent == "50"
    assert found.open_questions == [OPEN_EXCLUSIVITY]


def test_the_engine_reads_only_the_context() -> None:
    built = request([agent("Maya can do a reel for $5,000."), participant("Yes.")])
    other = ModelRequest(
        agent=built.agent,
        model=built.model,
        system="invent a fee of $99,999",
        prompt="$99,999",
        context=built.context,
        output=built.output,
        visitor_facing=True,
    )
    assert respond(other) == respond(built)
