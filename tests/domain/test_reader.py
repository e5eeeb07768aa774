"""The terms reader (domain/deliverables.py, domain/reader.py): what people write, read
against an injected today."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from dealroom.domain.deliverables import Deliverable, rate_slug, read_deliverables
from dealroom.domain.reader import read_company, read_dates, read_range, read_schedule

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("two sponsored posts for $14,000", [("sponsored_post", None, 2)]),
        ("a sponserd post on instagarm", [("sponsored_post", "instagram", 1)]),
        ("3 IG stories and one TikTok", [("story", "instagram", 3), ("video", "tiktok", 1)]),
        ("one tiktok video", [("video", "tiktok", 1)]),
        ("2 TikToks", [("video", "tiktok", 2)]),
        ("a YouTube video", [("video", "youtube", 1)]),
        ("2x reels", [("reel", None, 2)]),
        ("a couple of Instagram reels", [("reel", "instagram", 2)]),
        ("a blog post and a podcast ad", [("blog_post", None, 1), ("podcast_ad", None, 1)]),
        ("We love your work!", []),
    ],
)
def test_deliverables_have_kind_platform_and_quantity(
    text: str, expected: list[tuple[str, str | None, int]]
) -> None:
    assert [(d.kind, d.platform, d.quantity) for d in read_deliverables(text)] == expected


@pytest.mark.parametrize(
    ("wanted", "rates", "slug"),
    [
        (Deliverable("sponsored_post"), ["instagram_sponsored_post"], "instagram_sponsored_post"),
        (Deliverable("sponsored_post", "instagram"), ["sponsored_post"], "sponsored_post"),
        (Deliverable("post", "instagram"), ["sponsored_post"], "sponsored_post"),
        (Deliverable("reel", "instagram"), ["tiktok_reel", "instagram_reel"], "instagram_reel"),
        (Deliverable("video", "tiktok"), ["instagram_reel"], None),
        (Deliverable("reel", "tiktok"), ["instagram_reel"], None),
        (Deliverable("reel"), ["instagram_reel", "tiktok_reel"], None),
    ],
)
def test_rates_match_by_kind_with_platform_as_refinement(
    wanted: Deliverable, rates: list[str], slug: str | None
) -> None:
    assert rate_slug(wanted, rates) == slug


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("live mid-March", ["2027-03-11 to 2027-03-20"]),
        ("in March", ["2027-03-01 to 2027-03-31"]),
        ("on 15 March 2027", ["2027-03-15"]),
        ("March 15th", ["2027-03-15"]),
        ("December 20", ["2026-12-20"]),
        ("by end of April", ["by 2027-04-30"]),
        ("next week", ["2026-12-07 to 2026-12-13"]),
        ("next Friday", ["2026-12-04"]),
        ("in two weeks", ["2026-12-15"]),
        ("sometime in February, ideally Feb 14", ["2027-02-01 to 2027-02-28", "2027-02-14"]),
        ("we can pay $7,000", []),
    ],
)
def test_dates_resolve_against_the_injected_today(text: str, labels: list[str]) -> None:
    assert [d.label() for d in read_dates(text, TODAY)] == labels


def test_another_today_moves_the_year() -> None:
    assert [d.label() for d in read_dates("in March", date(2027, 4, 2))] == [
        "2028-03-01 to 2028-03-31"
    ]


@pytest.mark.parametrize(
    ("text", "percent"),
    [
        ("50% due at booking", "50"),
        ("half up front", "50"),
        ("50% at booking, rest on delivery", "50"),
        ("30% deposit", "30"),
        ("a deposit of 25%", "25"),
        ("fifty percent upfront", "50"),
        ("paid in full upfront", "100"),
        ("50/50", "50"),
        ("we'll pay on delivery", None),
    ],
)
def test_schedules(text: str, percent: str | None) -> None:
    assert read_schedule(text) == percent


@pytest.mark.parametrize("text", ["$5,000-$6,000", "between 5k and 6k", "5-6k", "$5,000 to $6,000"])
def test_ranges(text: str) -> None:
    found = read_range(text)
    assert found is not None
    assert (found[0].amount, found[1].amount) == (Decimal(5000), Decimal(6000))


def test_one_amount_is_no_range() -> None:
    assert read_range("$7,000") is None


@pytest.mark.parametrize(
    ("text", "company"),
    [
        ("Hi, we're Brightwave and we'd love a post", "Brightwave"),
        ("I'm Sam from Brightwave Labs", "Brightwave Labs"),
        ("Brightwave here!", "Brightwave"),
        ("on behalf of Northwind Coffee, we want a reel", "Northwind Coffee"),
        ("We're interested in a post", None),
    ],
)
def test_company(text: str, company: str | None) -> None:
    assert read_company(text) == company
