"""A principal's instruction lapses when the terms it covered move (instructions PI1-PI4), and
the firewall then no longer spares its figures (F4)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from dealroom.domain import firewall, instructions
from dealroom.domain.memory_records import record_principal_decision, record_ruling
from dealroom.domain.provenance import Said

YES = "Yes, take $6,000."
QUESTION = "Acme offers $6,000 for a sponsored post; that's close. Should I take it?"


def _proposed(amount: str, slug: str = "sponsored_post", **more: str) -> dict[str, Any]:
    return {"deal": {"proposals": {slug: {"amount": f"{amount} USD", **more}}}}


def _instructed(memory: dict[str, Any]) -> dict[str, Any]:
    return record_principal_decision(memory, "sponsored_post", "host", QUESTION, YES)


def test_pi1_an_instruction_records_the_terms_it_covers() -> None:
    doc = _instructed(_proposed("6000"))
    entry = doc["pendingPrincipalDecisions"]["sponsored_post"]
    assert entry["covers"] == {"amounts": ["6000"], "deliverables": ["sponsored_post"]}
    assert firewall.instructed_amounts(doc) == {Decimal(6000)}


def test_pi2_acting_on_the_instruction_is_no_move() -> None:
    doc = _instructed(_proposed("6000"))
    settled = {"decision": "settle", "amount": "6000", "currency": "USD"}
    doc = record_ruling(doc, "visitor", settled | {"deliverable": "sponsored_post"}, "d-1")
    assert instructions.lapse(doc) == doc
    assert firewall.instructed_amounts(doc) == {Decimal(6000)}


def test_pi2_a_new_amount_on_the_brands_side_lapses_it_and_the_firewall_stops_sparing() -> None:
    doc = _instructed(_proposed("6000"))
    doc["deal"]["proposals"]["sponsored_post"]["amount"] = "5800 USD"
    # PI3: spared no more even before the lapse is recorded
    assert firewall.instructed_amounts(doc) == set()
    lapsed = instructions.lapse(doc)
    entry = lapsed["pendingPrincipalDecisions"]["sponsored_post"]
    assert entry["lapsed"] == {"reason": "the terms moved after it was given: 5,800"}
    assert entry["principalInstruction"] == YES  # what was said stays on record
    assert firewall.instructed_amounts(lapsed) == set()
    assert list(instructions.standing(lapsed)) == []


def test_pi2_a_new_deliverable_or_quantity_lapses_it() -> None:
    doc = _instructed(_proposed("6000"))
    reel = doc | {"deal": {"proposals": {**doc["deal"]["proposals"], "reel": {}}}}
    assert instructions.moved(reel["pendingPrincipalDecisions"]["sponsored_post"], reel)
    two = _proposed("6000", quantity="2")
    two["pendingPrincipalDecisions"] = doc["pendingPrincipalDecisions"]
    assert "sponsored post x2" in str(
        instructions.moved(doc["pendingPrincipalDecisions"]["sponsored_post"], two)
    )


def test_pi2_a_new_counter_on_the_hosts_side_lapses_it() -> None:
    doc = _instructed(_proposed("6000"))
    countered = {"decision": "counter", "amount": "7000", "currency": "USD", "deliverable": None}
    doc = record_ruling(doc, "visitor", countered, "d-2")
    assert firewall.instructed_amounts(doc) == set()


def test_pi4_the_instruction_read_again_stays_lapsed_and_a_new_message_renews_it() -> None:
    said = [Said("m-1", "Yes, take $6,000.")]
    doc = _proposed("6000")
    source = instructions.source(YES, said)
    assert source == "m-1"
    doc = record_principal_decision(doc, "sponsored_post", "host", QUESTION, YES, source)
    doc["deal"]["proposals"]["sponsored_post"]["amount"] = "5800 USD"
    entry = instructions.lapse(doc)["pendingPrincipalDecisions"]["sponsored_post"]
    # the same message, re-read by a writer (in other words, even): nothing renewed
    assert instructions.read_again(entry, QUESTION, "Take 6000, yes.", source)
    # the principal saying it again is a new message: it replaces the lapsed one
    said.append(Said("m-2", "Yes, take $6,000."))
    again = instructions.source(YES, said)
    assert again == "m-2"
    assert not instructions.read_again(entry, QUESTION, YES, again)
    renewed = record_principal_decision(doc, "sponsored_post", "host", QUESTION, YES, again)
    assert firewall.instructed_amounts(renewed) == {Decimal(6000)}
    # an instruction naming no figure is read again when the same words answer the same question
    plain = {"principalInstruction": "Yes.", "question": QUESTION, "lapsed": {"reason": "x"}}
    assert instructions.read_again(plain, QUESTION, "yes", None)
    assert not instructions.read_again(plain, "Should I take $5,800?", "Yes.", None)


def test_an_instruction_recorded_without_covers_stands() -> None:
    doc = _proposed("5800")
    doc["pendingPrincipalDecisions"] = {
        "fee": {"side": "host", "question": "?", "principalInstruction": YES}
    }
    assert firewall.instructed_amounts(doc) == {Decimal(6000)}
