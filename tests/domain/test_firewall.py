"""The private-value firewall (F1-F5, dealroom.domain.firewall) and the ruling rules C4-C5
(dealroom.domain.crossing): a leak filter for the host's known private values."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealroom.domain import crossing, firewall
from dealroom.domain.limits import limit_entry, limits_of

MEMORY: dict[str, Any] = {
    "host": {
        "limits": {"sponsored_post": limit_entry(Decimal(6137), "USD", "m-1")},
        "private_terms": [{"text": "no crypto exchanges", "source": "m-2"}],
        "rates": {"sponsored_post": {"ask": "8000 USD"}},
        "notes": "Call me on +1 (415) 555-0134 or dev.raman@studio.example; promo QX7-orchid-58213",
        "rules": ["never work with alcohol brands"],
        "public": {"card": "sponsored post from 8000 USD, code PUBLIC42X"},
    },
    "pendingPrincipalDecisions": {},
}


def kinds(text: str, memory: dict[str, Any] = MEMORY) -> list[str]:
    return sorted(m.private.kind for m in firewall.check(memory, text))


@pytest.mark.parametrize(
    "text",
    [
        "6137",
        "I can do $6,137.",
        "6137.00 USD",
        "USD 6137",
        "6 137 dollars",
        "6.137k",
        "6,137.0",
        "6.137,00 €",
        "six thousand one hundred thirty-seven",
        "Six thousand, one hundred and thirty-seven dollars",
        "sixty-one hundred thirty-seven",
    ],
)
def test_f1_a_limit_matches_in_any_written_form(text: str) -> None:
    assert kinds(text) == ["limit"]


@pytest.mark.parametrize(
    "text",
    [
        "$8,000 works",  # the ask is not private
        "$61.37",
        "61370",
        "16137",
        "room 123e4567-e89b-12d3-a456-426614176137",  # an id, not an amount
        "six thousand",
        "sponsored post",
        "code PUBLIC42X",  # host.public is not private (F4)
        "we don't work with alcohol brands",  # not a private term, and ordinary words
    ],
)
def test_f1_f4_other_numbers_and_public_values_pass(text: str) -> None:
    assert kinds(text) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("write to DEV.RAMAN@studio.example", "email"),
        ("ring 415-555-0134", "phone"),
        ("ring +14155550134", "phone"),
        ("the qx7_orchid_58213 promo", "token"),
        ("QX7 orchid 58213", "token"),
        ("We have: No crypto-exchanges, sorry.", "term"),
    ],
)
def test_f2_f3_distinctive_values_match_however_separated(text: str, kind: str) -> None:
    assert kinds(text) == [kind]


def test_f4_an_instructed_figure_is_not_held() -> None:
    assert firewall.check(MEMORY, "$6,137", allowed_amounts={Decimal("6137.00")}) == []
    memory = MEMORY | {
        "pendingPrincipalDecisions": {
            "host-fee": {"side": "host", "question": "?", "principalInstruction": "take 6137"},
            "visitor-x": {"side": "visitor", "question": "?", "principalInstruction": "9999"},
        }
    }
    assert firewall.instructed_amounts(memory) == {Decimal(6137)}


def test_f5_source_ids_are_not_private_values() -> None:
    memory = {"host": {"limits": {"x": {"floor": "10", "currency": "USD", "source": "ab12cd34ef"}}}}
    assert firewall.check(memory, "message ab12cd34ef") == []


def test_json_values_are_scanned_keys_and_all() -> None:
    assert [m.private.kind for m in firewall.check(MEMORY, {"qx7_orchid_58213": [1]})] == ["token"]
    assert firewall.check(MEMORY, {"fee": {"amount": 6137}})


def test_describe_says_what_would_be_revealed() -> None:
    said = firewall.describe(firewall.check(MEMORY, "6137 and dev.raman@studio.example"))
    assert said == [
        "your limit 6137 USD (host.limits.sponsored_post)",
        "the e-mail address dev.raman@studio.example",
    ]


def test_no_private_values_nothing_is_held() -> None:
    assert firewall.check({}, "6137 qx7_orchid_58213") == []
    assert firewall.check({"host": {"public": {"a": "qx7_orchid_58213"}}}, "qx7_orchid_58213") == []


@given(floor=st.integers(1000, 10**7), cents=st.sampled_from(["", ".00"]))
def test_f1_property_every_format_of_any_floor(floor: int, cents: str) -> None:
    memory = {"host": {"limits": {"x": limit_entry(Decimal(floor), "USD", None)}}}
    for text in (f"{floor}{cents}", f"${floor:,}{cents}", f"{floor:,} USD", f"USD {floor}"):
        assert firewall.check(memory, f"we could do {text} then"), text
    assert not firewall.check(memory, f"we could do {floor + 1}")


# --- C4, C5 ---------------------------------------------------------------------------------


def ruling(amount: str | None, deliverable: str | None = "sponsored_post") -> crossing.Ruling:
    return crossing.Ruling("counter", amount, "USD", deliverable)


def test_c4_a_deliverable_must_be_named_on_the_visitor_side() -> None:
    side = ["Could you do a sponsored post for $4,000?", json.dumps({"deal": {"x": 1}})]
    assert crossing.named_deliverable("sponsored_post", side) == "sponsored_post"
    assert crossing.named_deliverable("qx7_orchid_58213", side) is None
    assert crossing.named_deliverable("post", side) == "post"
    assert crossing.named_deliverable("sponsored", ["sponsoredpost"]) is None


def test_c5_an_amount_meeting_a_limit_is_refused_unless_instructed() -> None:
    limits = limits_of(MEMORY)
    assert crossing.undercut_limits(ruling("6137"), limits) == [limits["sponsored_post"]]
    assert crossing.undercut_limits(ruling("6136"), limits) == [limits["sponsored_post"]]
    assert crossing.undercut_limits(ruling("6137", None), limits) == [limits["sponsored_post"]]
    assert crossing.undercut_limits(ruling("6138"), limits) == []
    assert crossing.undercut_limits(ruling("6137"), limits, {Decimal(6137)}) == []
    assert crossing.undercut_limits(ruling(None), limits) == []
    euros = crossing.Ruling("counter", "100", "EUR", "sponsored_post")
    assert crossing.undercut_limits(euros, limits) == []


def test_c5_a_limit_for_another_deliverable_does_not_bound_a_ruling() -> None:
    """Corpus host_takes_it-123: the host's only floor is $6,000 for a sponsored Instagram
    post; taking $2,400 for three Instagram stories (which the host has no rate for) reveals
    nothing about that floor and must cross. A limit the vocabulary cannot tell apart from the
    ruling's deliverable still bounds it."""
    memory = {
        "host": {"limits": {"instagram_sponsored_post": limit_entry(Decimal(6000), "USD", None)}}
    }
    limits = limits_of(memory)
    floor = [limits["instagram_sponsored_post"]]

    def settle(deliverable: str | None, amount: str = "2400") -> crossing.Ruling:
        return crossing.Ruling("settle", amount, "USD", deliverable)

    assert crossing.undercut_limits(settle("instagram_story"), limits) == []
    assert crossing.undercut_limits(settle("blog_post"), limits) == []
    assert crossing.undercut_limits(settle("tiktok_sponsored_post"), limits) == []
    # the same deliverable however the slug is written, its plain form, or none named
    assert crossing.undercut_limits(settle("instagram_sponsored_post"), limits) == floor
    assert crossing.undercut_limits(settle("sponsored_post"), limits) == floor
    assert crossing.undercut_limits(settle("instagram_post"), limits) == floor
    assert crossing.undercut_limits(settle(None), limits) == floor
    # a slug the vocabulary does not read is never told apart (a covert slug gains nothing)
    assert crossing.undercut_limits(settle("qx7_orchid_58213"), limits) == floor
    # a floor recorded without a deliverable bounds every ruling
    generic = limits_of({"host": {"limits": {"standard": limit_entry(Decimal(3000), "USD", None)}}})
    assert crossing.undercut_limits(settle("instagram_story"), generic) == [generic["standard"]]
