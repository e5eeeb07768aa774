"""Reading commercial terms out of chat text (dealroom.domain.terms)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealroom.domain.terms import (
    CODES,
    DELIVERABLES,
    DateMention,
    Intent,
    Money,
    deliverable_label,
    find_amount_mentions,
    find_amounts,
    find_dates,
    find_deliverable,
    find_deliverables,
    format_money,
    intent_of,
    money_code,
    parse_money,
    round_up,
)


def usd(amount: int | str) -> Money:
    return Money(Decimal(amount), "USD")


# --- amounts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("$8,000", usd(8000), id="dollar-sign-grouped"),
        pytest.param("$8k", usd(8000), id="dollar-sign-k"),
        pytest.param("8k", usd(8000), id="bare-k-takes-default-currency"),
        pytest.param("8K USD", usd(8000), id="k-then-code"),
        pytest.param("8000 USD", usd(8000), id="code-after"),
        pytest.param("USD 8000", usd(8000), id="code-before"),
        pytest.param("usd8000", usd(8000), id="code-before-lowercase-no-space"),
        pytest.param("£5,000", Money(Decimal(5000), "GBP"), id="pound-sign"),
        pytest.param("€4,000", Money(Decimal(4000), "EUR"), id="euro-sign"),
        pytest.param("€4.500", Money(Decimal(4500), "EUR"), id="euro-dot-grouping"),
        pytest.param("5000€", Money(Decimal(5000), "EUR"), id="euro-sign-after"),
        pytest.param("4,000 euros", Money(Decimal(4000), "EUR"), id="euros-word"),
        pytest.param("7,500 dollars", usd(7500), id="dollars-word"),
        pytest.param("$4.50", usd("4.50"), id="cents"),
        pytest.param("US$ 2,500.50", usd("2500.50"), id="us-dollar-sign"),
        pytest.param("1.5k", usd(1500), id="fractional-k"),
        pytest.param("$1.2m", usd(1_200_000), id="millions"),
        pytest.param("4,000", usd(4000), id="grouped-bare-number"),
        pytest.param("our budget is 4000.", usd(4000), id="bare-after-budget"),
        pytest.param("we can pay 4500 EUR", Money(Decimal(4500), "EUR"), id="bare-after-pay-code"),
        pytest.param("$8,000 USD", usd(8000), id="symbol-and-code-once"),
    ],
)
def test_reads_the_common_forms_of_an_amount(text: str, expected: Money) -> None:
    assert find_amounts(text) == [expected]


def test_amounts_come_in_the_order_written() -> None:
    text = "Your $8,000 is steep; we could do 5k, maybe £4,000 or 3,500 euros."
    assert find_amounts(text) == [
        usd(8000),
        usd(5000),
        Money(Decimal(4000), "GBP"),
        Money(Decimal(3500), "EUR"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "on 2026-12-05",
        "3 reels and 2 stories",
        "sometime in 2026",
        "5 Dec",
        "call me at 10",
        "we have 300 followers",
    ],
)
def test_dates_counts_and_years_are_not_amounts(text: str) -> None:
    assert find_amounts(text) == []


def test_amount_mentions_say_where_each_amount_is() -> None:
    text = "fee $8,000, never below 6k; budget is 5000"
    mentions = find_amount_mentions(text)
    assert [text[m.start : m.end] for m in mentions] == ["$8,000", "6k", "5000"]
    assert [m.money for m in mentions] == find_amounts(text)


def test_a_bare_amount_takes_the_default_currency() -> None:
    assert find_amounts("8k", default_currency="EUR") == [Money(Decimal(8000), "EUR")]
    assert find_amounts("$8k", default_currency="EUR") == [usd(8000)]


def test_parse_money_reads_memory_values() -> None:
    assert parse_money("8000 USD") == usd(8000)
    assert parse_money("8000") == usd(8000)
    assert parse_money("8000", default_currency="GBP") == Money(Decimal(8000), "GBP")
    assert parse_money("no amount here") is None
    assert parse_money("") is None


@pytest.mark.parametrize(
    ("money", "shown", "code"),
    [
        (usd(8000), "$8,000", "8000 USD"),
        (usd("8000.5"), "$8,000.50", "8000.50 USD"),
        (Money(Decimal(5000), "GBP"), "£5,000", "5000 GBP"),
        (Money(Decimal(8000), "EUR"), "€8,000", "8000 EUR"),
        (Money(Decimal(1250000), "CHF"), "CHF1,250,000", "1250000 CHF"),
        (Money(Decimal(7350), "CAD"), "CA$7,350", "7350 CAD"),
    ],
)
def test_formats_money_for_people_and_for_memory(money: Money, shown: str, code: str) -> None:
    assert format_money(money) == shown
    assert money_code(money) == code


def test_digits_are_the_amount_alone() -> None:
    assert usd(8000).digits() == "8000"
    assert usd("99.9").digits() == "99.90"


amounts = st.decimals(
    min_value=Decimal("0.01"), max_value=Decimal("1000000000"), places=2, allow_nan=False
)
money = st.builds(Money, amounts, st.sampled_from(CODES))


@given(money)
def test_format_then_parse_round_trips(value: Money) -> None:
    assert parse_money(format_money(value)) == value


@given(money)
def test_memory_code_then_parse_round_trips(value: Money) -> None:
    assert parse_money(money_code(value)) == value


@given(st.lists(money, min_size=1, max_size=5))
def test_every_formatted_amount_in_a_sentence_is_read_in_order(values: list[Money]) -> None:
    text = "We discussed " + ", then ".join(format_money(v) for v in values) + "."
    assert find_amounts(text) == values


@given(amounts, st.sampled_from([1, 50, 100, 250]))
def test_round_up_never_rounds_down(amount: Decimal, step: int) -> None:
    rounded = round_up(amount, step)
    assert rounded >= amount
    assert rounded - amount < step
    assert rounded % step == 0


def test_round_up_to_fifty() -> None:
    assert round_up(Decimal(7025)) == Decimal(7050)
    assert round_up(Decimal(7000)) == Decimal(7000)


# --- deliverables -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a sponsored post", ["sponsored_post"]),
        ("two sponsored posts and a story", ["sponsored_post", "story"]),
        ("an Instagram reel, a YouTube video and a keynote talk", ["reel", "video", "keynote"]),
        ("stories then a post", ["story", "post"]),
        ("a blog post", ["blog_post"]),
        ("a podcast ad", ["podcast_ad"]),
        ("host.rates.sponsored_post.ask", ["sponsored_post"]),
        ("nothing to buy here", []),
    ],
)
def test_reads_deliverables_in_order_most_specific_first(text: str, expected: list[str]) -> None:
    assert find_deliverables(text) == expected


def test_first_deliverable_and_labels() -> None:
    assert find_deliverable("a reel then a video") == "reel"
    assert find_deliverable("hello") is None
    assert deliverable_label("sponsored_post") == "sponsored post"


@given(st.sampled_from(DELIVERABLES))
def test_a_label_reads_back_as_its_slug(slug: str) -> None:
    assert find_deliverables(f"We'd like a {deliverable_label(slug)}.") == [slug]


# --- dates ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("on 2026-12-05", DateMention(12, 5, 2026)),
        ("December 5", DateMention(12, 5)),
        ("Dec. 5th, 2026", DateMention(12, 5, 2026)),
        ("5 Dec", DateMention(12, 5)),
        ("the 5th of December 2026", DateMention(12, 5, 2026)),
        ("Feb 29", DateMention(2, 29)),
    ],
)
def test_reads_dates(text: str, expected: DateMention) -> None:
    assert find_dates(text) == [expected]


@pytest.mark.parametrize("text", ["Feb 30", "2026-13-01", "2025-02-29", "$5,000"])
def test_impossible_dates_are_not_dates(text: str) -> None:
    assert find_dates(text) == []


def test_date_labels() -> None:
    assert DateMention(12, 5, 2026).label() == "2026-12-05"
    assert DateMention(12, 5).label() == "December 5"


@given(st.dates())
def test_iso_dates_round_trip(day: date) -> None:
    mention = DateMention(day.month, day.day, day.year)
    assert find_dates(f"on {mention.label()}") == [mention]


# --- yes / no ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["yes", "Sure!", "deal", "Agreed.", "sounds good", "go ahead", "take it", "ok", "Yes please"],
)
def test_yes(text: str) -> None:
    assert intent_of(text) is Intent.YES


@pytest.mark.parametrize(
    "text",
    ["no", "not sure", "decline it", "no deal", "don't take it", "we'll pass", "Nope"],
)
def test_no(text: str) -> None:
    assert intent_of(text) is Intent.NO


@pytest.mark.parametrize("text", ["no problem, go ahead", "no worries, sounds good"])
def test_no_problem_is_not_a_no(text: str) -> None:
    assert intent_of(text) is Intent.YES


@pytest.mark.parametrize("text", ["hello", "What date works?", ""])
def test_neither(text: str) -> None:
    assert intent_of(text) is None
