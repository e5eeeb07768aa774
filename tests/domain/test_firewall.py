"""The private-value firewall (F1-F5, dealroom.domain.firewall) and the ruling rules C4-C5
(dealroom.domain.crossing): a leak filter for the host's known private values."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealroom.domain import crossing, firewall, firewall_memory
from dealroom.domain import memory as memdoc
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
        "five thousand",  # "six thousand" is within F10's band of the floor: held there
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
    # F1 alone is exact; one over the floor is F10's (held at the default band)
    assert not firewall.check(memory, f"we could do {floor + 1}", band_percent=Decimal(0))
    assert firewall.check(memory, f"we could do ${floor + 1}")


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


# --- F7-F10: normalised text and the closeness band ----------------------------------------

LEAKY: dict[str, Any] = {
    "host": {
        "limits": {"sponsored_post": limit_entry(Decimal(6137), "USD", "m-1")},
        "rates": {"sponsored_post": {"ask": "8000 USD"}},
        "private_terms": [
            {"text": "travel capped at $1,500 a trip", "source": "m-2"},
            {"text": "no shoots before 2027", "source": "m-3"},
        ],
        "notes": "Reach me on dev@zyglorb.com or 555-123-4567; promo QX7-orchid-58213",
    },
    "deal": {"proposals": {"sponsored_post": {"amount": "6100 USD"}}},
    "visitor": {"budget": "6,290 USD"},
    "pendingPrincipalDecisions": {},
}


def leaky(text: object, **kwargs: Any) -> list[str]:
    return sorted(m.private.kind for m in firewall.check(LEAKY, text, **kwargs))


@pytest.mark.parametrize(
    "text",
    [
        "6-1-3-7",
        "6 1 3 7",
        "6.1.3.7",
        "6, 1, 3, 7",
        "6 - 1 - 3 - 7",
        "61 37",
        "six one three seven",
        "Six-One-Three-Seven",
        "SIX ONE THREE SEVEN dollars",
        "six, one, three, seven",
        "six-thousand-one-hundred-thirty-seven",
        "six  thousand   one-hundred  thirty - seven",
        "six\nthousand one hundred\tthirty-seven",
        "sixty-one thirty-seven",
    ],
)
def test_f8_a_limit_spelled_or_spaced_digit_by_digit_matches(text: str) -> None:
    assert leaky(f"the number is {text}, ok?") == ["limit"]


@pytest.mark.parametrize(
    "text",
    [
        "\uff16\uff11\uff13\uff17",  # full-width digits
        "$\uff16,\uff11\uff13\uff17",
        "\U0001d7d4\U0001d7cf\U0001d7d1\U0001d7d5",  # mathematical bold digits
        "6\u200b1\u200b3\u200b7",  # zero-width spaces
        "6\u2060137",  # word joiner
        "6\u00ad137",  # soft hyphen
        "\ufeff6137\u200d",  # BOM, zero-width joiner
        "6\u066b137",  # Arabic decimal separator (6.137 read as 6,137)
        "6\u066c137",  # Arabic thousands separator
        "\u0666\u0661\u0663\u0667",  # Arabic-Indic digits
        "\u096c\u0967\u0969\u096d",  # Devanagari digits
        "6\u0336137",  # a combining stroke
        "6\u20131\u20133\u20137",  # en dashes between the digits
        "6\u00a0137",  # no-break space
    ],
)
def test_f7_a_limit_in_confusable_width_or_invisible_forms_matches(text: str) -> None:
    assert leaky(f"we could do {text} then") == ["limit"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("dev at zyglorb dot com", "email"),
        ("dev [at] zyglorb [dot] com", "email"),
        ("dev(at)zyglorb(dot)com", "email"),
        ("DEV AT ZYGLORB DOT COM", "email"),
        ("dev @ zyglorb . com", "email"),
        ("d\u0435v@zygl\u043erb.c\u043em", "email"),  # Cyrillic е and о
        (
            "\uff44\uff45\uff56\uff20\uff5a\uff59\uff47\uff4c\uff4f\uff52\uff42\uff0e\uff43\uff4f\uff4d",
            "email",
        ),
        ("dev@zyg\u200blorb.com", "email"),
        ("five five five, one two three, four five six seven", "phone"),
        ("five-five-five one-two-three four-five-six-seven", "phone"),
        ("5 5 5 1 2 3 4 5 6 7", "phone"),
        ("\uff15\uff15\uff15-\uff11\uff12\uff13-\uff14\uff15\uff16\uff17", "phone"),
        ("qx7_\u043erchid_58213", "token"),  # Cyrillic о
        ("QX7\u200b-orchid-58213", "token"),
        ("Travel c\u0430pped at $1,500 a trip", "term"),  # Cyrillic а; its amount is held too
    ],
)
def test_f7_f9_emails_phones_tokens_in_words_and_confusables_match(text: str, kind: str) -> None:
    kinds = leaky(f"sure: {text}")
    assert kind in kinds, kinds


@pytest.mark.parametrize(
    "text",
    [
        "$6,137.01",
        "$6,140",
        "6,150 USD",
        "I can do 6140",
        "$6.2k",
        "6,300 dollars",
        "$6,000",  # under the floor, as close
        "six thousand",
        "six thousand one hundred forty dollars",
        "six one four zero",
        "6 1 4 0",
        "\uff16\uff11\uff14\uff10 USD",
    ],
)
def test_f10_an_amount_within_the_band_of_a_limit_is_held(text: str) -> None:
    assert leaky(f"we could do {text} for the post") == ["near_limit"]


def test_f10_a_near_floor_ruling_is_held_in_its_substance_and_its_payload() -> None:
    near = crossing.Ruling("counter", "6150", "USD", "sponsored_post")
    payload = {"ruling": near.to_json(), "open_questions": []}
    assert leaky(crossing.render(near, "Dev")) == ["near_limit"]
    assert leaky(payload) == ["near_limit"]
    ask = crossing.Ruling("counter", "8000", "USD", "sponsored_post")
    assert leaky(crossing.render(ask, "Dev")) == []
    assert leaky({"ruling": ask.to_json(), "open_questions": []}) == []


def test_f10_a_cap_in_a_private_term_has_a_band_too() -> None:
    assert leaky("travel up to $1,480 is fine") == ["near_limit"]
    assert leaky("travel up to $1,400 is fine") == []
    # a term's number that is not money (a year) gets no band
    assert leaky("we could shoot in 2026 or 2028") == []


def test_f10_f4_the_authorised_exact_figure_passes_its_neighbours_do_not() -> None:
    assert leaky("$6,150", allowed_amounts={Decimal("6150.00")}) == []
    assert leaky("$6,160", allowed_amounts={Decimal(6150)}) == ["near_limit"]
    # the floor itself authorised: nothing near it is private any more
    assert leaky("$6,137 or $6,150", allowed_amounts={Decimal(6137)}) == []


def test_f10_the_visitors_own_figures_and_the_ask_pass() -> None:
    assert leaky("you offered $6,100; your budget is 6,290 USD") == []
    assert leaky("my rate is $8,000") == []
    memory = {"host": {"limits": {"x": limit_entry(Decimal(6137), "USD", None)},
                       "rates": {"x": {"ask": "6300 USD"}}}}  # fmt: skip
    assert firewall.check(memory, "I can do $6,300") == []
    assert firewall.check(memory, "I can do $6,250")


def test_f10_the_band_is_the_callers_to_choose() -> None:
    assert leaky("$6,300", band_percent=Decimal(1)) == []
    assert leaky("$6,190", band_percent=Decimal(1)) == ["near_limit"]
    assert leaky("$6,450", band_percent=Decimal(10)) == ["near_limit"]
    assert leaky("$6,137.01", band_percent=Decimal(0)) == []
    assert Decimal(5) == firewall.DEFAULT_BAND_PERCENT  # F10's default


@pytest.mark.parametrize(
    "text",
    [
        "Going live on 2026-12-06, or 06/12/2026, or 6.12.2026 at 10:30.",
        "shoot in December 2026, two weeks from 2026-11-22",
        "order 7f3a, 6 posts over 12 weeks, 50% upfront",
        "$7,000 would work",  # 14% over the floor
        "$5,500 is too low",
        "the 3rd of April, 2026",
        "room 123e4567-e89b-12d3-a456-426614176140",
        "version 6.1.3",
        "one or two posts, then a third",
        "Oh, one more thing",
    ],
)
def test_f7_f10_ordinary_text_with_unrelated_numbers_passes(text: str) -> None:
    assert leaky(text) == []


def test_f10_dates_pass_next_to_a_floor_shaped_like_a_year() -> None:
    memory = {"host": {"limits": {"blog_post": limit_entry(Decimal(2000), "USD", None)}}}
    for text in ("on 2026-05-20", "by 20/05/2026", "in early 2026", "May 20, 2026", "2,500 USD"):
        assert firewall.check(memory, text) == [], text
    assert firewall.check(memory, "$2,050")


def test_f8_a_phone_shaped_order_id_is_held_as_the_phone() -> None:
    assert leaky("order no. 555 123 4567") == ["phone"]


def test_f10_describe_names_the_limit_a_figure_is_close_to() -> None:
    said = firewall.describe(firewall.check(LEAKY, "$6,140"))
    assert said == ["a figure close to your limit 6137 USD (host.limits.sponsored_post)"]


@given(
    floor=st.integers(1000, 10**7),
    permille=st.integers(-49, 49),
)
def test_f10_property_every_figure_within_the_band_is_held(floor: int, permille: int) -> None:
    memory = {"host": {"limits": {"x": limit_entry(Decimal(floor), "USD", None)}}}
    near = (Decimal(floor) * (1000 + permille) / 1000).quantize(Decimal("0.01"))
    assert firewall.check(memory, f"we could do ${near:,}"), near
    far = Decimal(floor) * Decimal("1.06")
    assert not firewall.check(memory, f"we could do ${far:,.2f}")


def test_f10_only_the_visitor_side_of_memory_spares_a_figure() -> None:
    """The host's own parts (its plans, goal reasons, its questions to its principal) are
    written by host-side writers that saw the floor: a figure there is not the visitor's."""
    host_side = LEAKY | {
        "plans": {"host": "counter at 6,150 USD"},
        "goals": {"new-offer": {"status": "open", "reason": "6150 is close"}},
        "pendingPrincipalDecisions": {"host-x": {"side": "host", "question": "take $6,150?"}},
    }
    assert sorted(m.private.kind for m in firewall.check(host_side, "$6,150")) == ["near_limit"]
    visitor_side = LEAKY | {"rulings": {"visitor": [{"amount": "6150", "currency": "USD"}]}}
    assert firewall.check(visitor_side, "$6,150") == []
    # A host's teammate's branch (host_2) sits on the host's side too; a brand's colleague's
    # branch (visitor_2) is the visitor's.
    manager = LEAKY | {"host_2": {"notes": "Dev would take 6,150"}}
    assert sorted(m.private.kind for m in firewall.check(manager, "$6,150")) == ["near_limit"]
    colleague = LEAKY | {"visitor_2": {"budget": "6150 USD"}}
    assert firewall.check(colleague, "$6,150") == []


def test_f10_the_visitor_side_is_memorys_non_reserved_parts() -> None:
    parts = firewall_memory.NOT_A_VISITOR_BRANCH | firewall_memory.VISITOR_SIDE
    assert parts == memdoc.RESERVED | {memdoc.HOST, memdoc.DEAL}
    assert memdoc.RULINGS in firewall_memory.VISITOR_SIDE


def test_f7_f10_an_amount_near_a_limit_is_held_in_every_locale_an_account_may_choose() -> None:
    """Money reaches a visitor in their own locale (P10): every locale an account may choose
    (L1) writes an amount close to the floor in a form the firewall holds, Swiss apostrophes
    and raised commas included; the locales it cannot read are refused, not let through."""
    from babel.localedata import locale_identifiers

    from dealroom.domain.locale import money_is_read
    from dealroom.domain.money import display

    chosen = [name for name in locale_identifiers() if money_is_read(name)]
    assert {"en_US", "de_DE", "de_CH", "fr_FR", "it_CH", "pt_BR"} <= set(chosen)
    near = {name: display(Decimal(6140), "USD", name) for name in chosen}
    unread = {name: text for name, text in near.items() if "near_limit" not in leaky(text)}
    assert unread == {}
