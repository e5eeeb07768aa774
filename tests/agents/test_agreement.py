"""The agreement writer (seed 000 "Records are made by a specialist"): built from the offer's
commercial fields alone, and checked in code to invent no amount, percentage or date."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealroom.agents import agreement
from dealroom.agents.agreement import (
    NOT_SPECIFIED,
    AgreementInput,
    AgreementOutput,
    AgreementSection,
    invented_terms,
    render,
)
from dealroom.agents.models.base import AgentName
from dealroom.agents.models.gemini import response_json_schema
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.offline.agreement import agreement_output
from dealroom.agents.offer_gen import OfferGenOutput, to_terms
from dealroom.domain import money
from dealroom.domain.terms import CODES, DateMention

TERMS: dict[str, Any] = {
    "deliverables": ["sponsored post", "story"],
    "fee": {"amount": "8000.00", "currency": "USD"},
    "dates": ["2026-12-05", "December 12"],
    "usageRights": "6 months organic social",
    "exclusivity": "30 days in the beverage category",
    "dueSlicePercent": "50",
}


def draft_input(terms: dict[str, Any] = TERMS) -> AgreementInput:
    return AgreementInput(
        offer_id="offer-1", version=2, seller="Maya Lin", buyer="Acme", terms=terms
    )


def draft(terms: dict[str, Any] = TERMS) -> str:
    built = agreement.build(draft_input(terms), model="test-model")
    return render(agreement_output(built.context))


def section(text: str, heading: str) -> str:
    """The body of the numbered section ``heading``."""
    for block in text.split("\n\n")[1:]:
        title, _, body = block.partition("\n")
        if title.split(". ", 1)[1] == heading:
            return body
    raise AssertionError(f"no section {heading!r} in:\n{text}")


# --- the request ------------------------------------------------------------------------------


def test_the_context_is_exactly_the_input() -> None:
    built = agreement.build(draft_input(), model="test-model")
    assert built.agent is AgentName.AGREEMENT
    assert built.context == {
        "agent": "agreement",
        "offer_id": "offer-1",
        "version": 2,
        "seller": "Maya Lin",
        "buyer": "Acme",
        "terms": TERMS,
    }
    assert built.visitor_facing is False
    assert json.dumps(TERMS, sort_keys=True) in built.prompt
    assert "Not specified in the offer" in built.system


def test_the_schema_orders_every_field_and_forbids_extras() -> None:
    schema = response_json_schema(AgreementOutput)
    assert schema["propertyOrdering"] == ["title", "sections"]
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["AgreementSection"]["propertyOrdering"] == ["heading", "body"]
    assert schema["$defs"]["AgreementSection"]["additionalProperties"] is False


async def test_the_offline_client_round_trips_the_output() -> None:
    built = agreement.build(draft_input(), model="test-model")
    generation = await OfflineClient().generate(built)
    assert isinstance(generation.output, AgreementOutput)
    assert generation.output == agreement_output(built.context)


def test_render_is_the_title_then_numbered_sections() -> None:
    output = AgreementOutput(
        title="Draft",
        sections=[
            AgreementSection(heading="Parties", body="A and B."),
            AgreementSection(heading="Fee", body=" $8,000. "),
        ],
    )
    assert render(output) == "Draft\n\n1. Parties\nA and B.\n\n2. Fee\n$8,000."


# --- the offline draft ------------------------------------------------------------------------


def test_the_offline_draft_states_every_field() -> None:
    text = draft()
    assert text.startswith("Draft services agreement between Maya Lin and Acme\n\n1. Parties\n")
    assert "Maya Lin" in section(text, "Parties")
    assert "Acme" in section(text, "Parties")
    assert section(text, "Services") == "- sponsored post\n- story"
    assert "$8,000" in section(text, "Fee")
    assert "50% of the fee ($4,000) is due at booking" in section(text, "Payment schedule")
    assert section(text, "Dates") == "- 2026-12-05\n- December 12"
    assert section(text, "Usage rights") == "6 months organic social"
    assert section(text, "Exclusivity") == "30 days in the beverage category"
    assert "not legal advice" in section(text, "Draft notice")
    assert NOT_SPECIFIED not in text
    assert "20%" not in text  # the platform fee is not part of the agreement


def test_missing_fields_are_not_specified() -> None:
    terms = {
        "deliverables": ["reel"],
        "fee": {"amount": "5000.00", "currency": "EUR"},
        "dates": [],
        "usageRights": None,
        "exclusivity": None,
        "dueSlicePercent": None,
    }
    text = draft(terms)
    assert "€5,000" in section(text, "Fee")
    for heading in ("Payment schedule", "Dates", "Usage rights", "Exclusivity"):
        assert section(text, heading) == f"{NOT_SPECIFIED}."
    assert invented_terms(text, terms) == []


def test_an_empty_offer_is_not_specified_throughout() -> None:
    text = draft({})
    for heading in ("Services", "Fee", "Payment schedule", "Dates", "Usage rights"):
        assert section(text, heading) == f"{NOT_SPECIFIED}."


def test_the_whole_fee_due_at_booking() -> None:
    text = draft(TERMS | {"dueSlicePercent": "100"})
    assert section(text, "Payment schedule") == "The whole fee ($8,000) is due at booking."


# --- invented_terms ---------------------------------------------------------------------------


def test_the_offline_draft_invents_nothing() -> None:
    assert invented_terms(draft(), TERMS) == []


@pytest.mark.parametrize(
    ("added", "found"),
    [
        ("A bonus of $99,999 is payable.", "amount $99,999"),
        ("The fee is €8,000.", "amount €8,000"),  # the right number in another currency
        ("30% is due at booking.", "percentage 30%"),
        ("A platform fee of 20% applies.", "percentage 20%"),
        ("The post goes live on March 3.", "date March 3"),
        ("The story runs December 12, 2027.", "date 2027-12-12"),
        ("The post goes live on 2026-12-06.", "date 2026-12-06"),
    ],
)
def test_an_invented_term_is_caught(added: str, found: str) -> None:
    invented = invented_terms(f"{draft()}\n{added}", TERMS)
    assert len(invented) == 1
    assert invented[0].startswith(found)


def test_what_the_offer_holds_is_not_an_invention() -> None:
    text = (
        "The fee is 8,000 USD, of which $4,000 (50 percent) is due at booking and the "
        "remaining 50% later; 100% of the fee is owed. The post runs December 5, the story "
        "on December 12."
    )
    assert invented_terms(text, TERMS) == []


def test_the_offers_id_quoted_in_the_draft_is_not_an_amount() -> None:
    """The writer's prompt opens with the offer's id, and a draft may quote it: an id that
    starts with digits ("955574bc-…") is not a price. An amount beside it still is."""
    quoted = f"{draft()}\nOFFER 955574bc-f0fe-4f0c-8cd2-c25691a95638, VERSION 2."
    assert invented_terms(quoted, TERMS) == []
    priced = f"{quoted} A bonus of $2,039 is payable."
    assert [found[:13] for found in invented_terms(priced, TERMS)] == ["amount $2,039"]


def test_a_twenty_eighty_schedule_allows_its_own_percentages() -> None:
    terms = TERMS | {"dueSlicePercent": "20"}
    text = "20% of the fee ($1,600) is due at booking; the remaining 80% ($6,400) later."
    assert invented_terms(text, terms) == []
    assert invented_terms(text, TERMS) != []


def test_figures_written_in_the_offers_own_words_are_the_offers() -> None:
    terms = TERMS | {"usageRights": "paid usage at 15% of media spend until 2027-06-30"}
    assert invented_terms("Usage at 15% of media spend until June 30, 2027.", terms) == []


def test_with_no_fee_every_amount_is_invented() -> None:
    terms = {key: value for key, value in TERMS.items() if key != "fee"}
    assert invented_terms("The fee is $8,000.", terms) == [
        "amount $8,000 is not the offer's fee or a slice of it"
    ]


# A property: whatever the offer holds, the offline draft states nothing the offer does not.

_NAMES = st.sampled_from(["Maya Lin", "Acme", "Dana Ortiz", "Northwind Studio"])
_FEES = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("10000000"), places=2)
_PERCENTS = st.none() | st.decimals(min_value=Decimal("0.01"), max_value=Decimal(100), places=2)
_DATES = st.lists(
    st.dates().map(lambda day: day.isoformat())
    | st.builds(DateMention, st.integers(1, 12), st.integers(1, 28)).map(DateMention.label),
    max_size=3,
)
_WORDS = st.none() | st.sampled_from(["6 months organic social", "none", "30 days, beverages"])


@settings(max_examples=200, deadline=None)
@given(
    seller=_NAMES,
    buyer=_NAMES,
    fee=_FEES,
    currency=st.sampled_from([*CODES, "JPY", "BHD"]),
    percent=_PERCENTS,
    dates=_DATES,
    usage=_WORDS,
    exclusivity=_WORDS,
)
def test_the_offline_draft_never_invents_a_term(
    seller: str,
    buyer: str,
    fee: Decimal,
    currency: str,
    percent: Decimal | None,
    dates: list[str],
    usage: str | None,
    exclusivity: str | None,
) -> None:
    # A fee is written in the currency's minor unit (to_terms refuses 0.01 JPY).
    fee = max(money.quantize(fee, currency), Decimal(1).scaleb(-money.MINOR_UNITS[currency]))
    extracted = to_terms(
        OfferGenOutput(
            deliverables=["sponsored post"],
            fee_amount=f"{fee:f}",
            currency=currency,
            dates=dates,
            usage_rights=usage,
            exclusivity=exclusivity,
            due_slice_percent=f"{percent:f}" if percent is not None else None,
            open_questions=[],
        )
    )
    assert extracted.terms is not None
    built = agreement.build(
        AgreementInput("offer-1", 1, seller, buyer, extracted.terms), model="test-model"
    )
    text = render(agreement_output(built.context))
    assert invented_terms(text, extracted.terms) == []


def test_the_schedule_arithmetic_is_not_a_private_value() -> None:
    """Corpus to_settle_point-088: $2,500 with 40% due at booking makes the due slice
    $1,000, which happens to equal the host's floor for the deliverable. That figure is code's
    arithmetic on the screened fee and reveals nothing; the draft must be stored. The same
    figure written anywhere else (no schedule derives it) is still held."""
    memory = {"host": {"limits": {"instagram_story": {"floor": "1000", "currency": "USD"}}}}
    terms = TERMS | {"fee": {"amount": "2500.00", "currency": "USD"}, "dueSlicePercent": "40"}
    text = draft(terms)
    assert "($1,000) is due at booking" in text
    assert agreement.private_values(memory, text, terms) == []
    whole = terms | {"dueSlicePercent": "100"}
    leaky = draft(whole) + "\n\nThe talent would not go below $1,000."
    assert agreement.private_values(memory, leaky, whole)
