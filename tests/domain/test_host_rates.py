"""L3-L6: a host's ask and floor read from everyday phrasing (domain/limits.py
``read_host_rates``), through the terms reader and ``text2num`` like every other amount."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dealroom.domain.limits import RateReading, StatedRate, read_host_rates
from dealroom.domain.terms import Money


def usd(amount: int) -> Money:
    return Money(Decimal(amount), "USD")


REEL_5000_FLOOR_4000 = [
    # (what the host says, the deliverable it names)
    ("I charge 5k for a reel, don't go under 4k.", "reel"),
    (
        "For Instagram reels my rate is five thousand USD; I won't accept less than four thousand.",
        "instagram_reel",
    ),
    ("Rate card — reel 5000, floor 4000.", "reel"),
    ("Reels: $5,000 each. Absolute minimum 4,000 dollars.", "reel"),
    (
        "Please quote brands $5,000 per reel. I'd go as low as $4,000 if they're a good fit.",
        "reel",
    ),
]


@pytest.mark.parametrize(("said", "slug"), REEL_5000_FLOOR_4000)
def test_l3_l4_the_ask_and_the_floor_are_read_from_everyday_phrasing(said: str, slug: str) -> None:
    assert read_host_rates(said) == RateReading((StatedRate(slug, usd(5000), usd(4000)),))


@pytest.mark.parametrize(
    ("said", "ask", "floor"),
    [
        ("My fee for a sponsored Instagram post is $8,000, never below $6,000.", 8000, 6000),
        ("I charge $3,000 per TikTok video, minimum $2,000.", 3000, 2000),
        ("A podcast ad is $4,000, and my bottom line is $3,000.", 4000, 3000),
        ("$4,000 is my floor for reels, $5,000 is my rate.", 5000, 4000),
        ("4k minimum for a reel, usually 5k", 5000, 4000),
        ("Ask $3,000, floor $2,000.", 3000, 2000),
        ("$3,000 — never below $2,000", 3000, 2000),
    ],
)
def test_l4_a_floor_word_before_or_after_an_amount_makes_it_the_floor(
    said: str, ask: int, floor: int
) -> None:
    [rate] = read_host_rates(said).rates
    assert (rate.ask, rate.floor) == (usd(ask), usd(floor))


def test_l3_a_bare_amount_takes_the_currency_the_message_states() -> None:
    [rate] = read_host_rates("Reels are 4,000 EUR, never below 3000.").rates
    assert (rate.ask, rate.floor) == (Money(Decimal(4000), "EUR"), Money(Decimal(3000), "EUR"))


def test_l3_an_amount_for_several_is_per_unit() -> None:
    [rate] = read_host_rates("Two reels for $9,000, minimum $3,000 a reel.").rates
    assert rate.ask == usd(4500)


def test_l5_each_clause_holds_its_own_deliverables_terms() -> None:
    reading = read_host_rates("Reels 5000, stories 1500, never below 1000 for stories.")
    assert reading.rates == (
        StatedRate("reel", usd(5000), None),
        StatedRate("story", usd(1500), usd(1000)),
    )


def test_l5_a_message_naming_none_takes_the_deliverable_under_discussion() -> None:
    reading = read_host_rates("Never below four thousand.", deliverable="reel")
    assert reading.rates == (StatedRate("reel", None, usd(4000)),)


def test_l6_a_bare_answer_to_the_floor_question_is_the_floor() -> None:
    reading = read_host_rates("four thousand", deliverable="reel", answering="floor")
    assert reading.rates == (StatedRate("reel", None, usd(4000)),)


@pytest.mark.parametrize(
    "said",
    [
        "For reels, don't go under what we agreed last year.",
        "My floor for reels is four and a half thousand.",
        "Never go lower than my usual for a reel.",
    ],
)
def test_l6_a_floor_spoken_of_but_not_read_is_unread_never_guessed(said: str) -> None:
    reading = read_host_rates(said)
    assert reading.rates == ()
    assert reading.unread_floors == ("reel",)


@pytest.mark.parametrize(
    "said",
    [
        "I never work with alcohol brands.",
        "Minimum two weeks notice for reels.",
        "Always confirm the date before you agree anything.",
        "What's my rate for reels?",
        "Offer them $2,000.",
    ],
)
def test_l6_lines_that_are_no_rate_rule_read_as_nothing(said: str) -> None:
    assert not read_host_rates(said)
