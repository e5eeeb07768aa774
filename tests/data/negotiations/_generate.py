"""Writes the negotiation corpus (``*.json`` beside this file); run it to regenerate.

Each script is a host's standing rules, the lines the brand and the host post in their deal
room, and the written offer that must come of it (or the refusal). The expected figures are
written here by hand from the policy's published table (docs: persona/policy.py): the first
counter is the ask, then equal steps (rounded up to 50) down to the settle point halfway
between the floor and the ask; a proposal at or above the next point settles at itself.
Phrasings are drawn with a fixed seed from the lists below, so the corpus is stable.

    python tests/data/negotiations/_generate.py
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
TODAY = "2026-01-01"
"""The test clock's date (tests/support/clock.py): dates resolve against it."""

# (rule sentence, currency, symbol-writer, ask, floor, [(visitor words, quantity, label)])
RATES: list[dict[str, Any]] = [
    {
        "rule": "My fee for a sponsored Instagram post is {ask}, never below {floor}.",
        "currency": "USD",
        "ask": 8000,
        "floor": 6000,
        "asks": [
            ("a sponsored post", 1, "sponsored post"),
            ("a sponsored Instagram post", 1, "sponsored Instagram post"),
            ("a sponsored IG post", 1, "sponsored Instagram post"),
            ("a sponserd post on instagarm", 1, "sponsored Instagram post"),
            ("two sponsored posts", 2, "2 sponsored posts"),
            ("2 sponsored IG posts", 2, "2 sponsored Instagram posts"),
            ("three sponsored Instagram posts", 3, "3 sponsored Instagram posts"),
        ],
    },
    {
        "rule": "I charge {ask} per TikTok video, minimum {floor}.",
        "currency": "USD",
        "ask": 3000,
        "floor": 2000,
        "asks": [
            ("a TikTok", 1, "TikTok video"),
            ("one tiktok video", 1, "TikTok video"),
            ("2 TikToks", 2, "2 TikTok videos"),
            ("a video on TikTok", 1, "TikTok video"),
            ("a tik tok vidoe", 1, "TikTok video"),
            ("four TikTok videos", 4, "4 TikTok videos"),
        ],
    },
    {
        "rule": "My rate for an Instagram reel is {ask} and my floor is {floor}.",
        "currency": "GBP",
        "ask": 4000,
        "floor": 3000,
        "asks": [
            ("an Instagram reel", 1, "Instagram reel"),
            ("2 IG reels", 2, "2 Instagram reels"),
            ("a reel", 1, "reel"),
            ("a couple of insta reels", 2, "2 Instagram reels"),
        ],
    },
    {
        "rule": "YouTube videos are {ask}, not less than {floor}.",
        "currency": "EUR",
        "ask": 12000,
        "floor": 9000,
        "asks": [
            ("a YouTube video", 1, "YouTube video"),
            ("a dedicated YouTube video", 1, "YouTube video"),
            ("one YT video", 1, "YouTube video"),
            ("2 youtube videos", 2, "2 YouTube videos"),
        ],
    },
    {
        "rule": "Instagram stories are {ask} each, no less than {floor}.",
        "currency": "USD",
        "ask": 1500,
        "floor": 1000,
        "asks": [
            ("3 Instagram stories", 3, "3 Instagram stories"),
            ("a couple of IG stories", 2, "2 Instagram stories"),
            ("an Instagram story", 1, "Instagram story"),
        ],
    },
    {
        "rule": "My fee for a blog post is {ask}, never below {floor}.",
        "currency": "USD",
        "ask": 2500,
        "floor": 2000,
        "asks": [("a blog post", 1, "blog post"), ("two blog posts", 2, "2 blog posts")],
    },
    {
        "rule": "A podcast ad is {ask}, and my bottom line is {floor}.",
        "currency": "USD",
        "ask": 4000,
        "floor": 3000,
        "asks": [("a podcast ad", 1, "podcast ad"), ("a podcast spot", 1, "podcast ad")],
    },
]

GREETINGS = [
    "Hi!",
    "Hello there, hope you're well.",
    "Hey,",
    "Good morning!",
    "",
    "Hi team,",
]
COMPANIES = [
    ("We're Brightwave.", "Brightwave"),
    ("I'm Sam from Northwind Coffee.", "Northwind Coffee"),
    ("Lumen Labs here!", "Lumen Labs"),
    ("Writing on behalf of Acme Outdoors.", "Acme Outdoors"),
    ("This is Priya at Kestrel Studio.", "Kestrel Studio"),
    ("", None),
    ("", None),
]
DATES = [
    ("going live on 15 March 2026", ["2026-03-15"]),
    ("in March", ["2026-03-01 to 2026-03-31"]),
    ("live mid-March", ["2026-03-11 to 2026-03-20"]),
    ("going live March 15th", ["2026-03-15"]),
    ("by end of April", ["by 2026-04-30"]),
    ("in early February", ["2026-02-01 to 2026-02-10"]),
    ("sometime in June", ["2026-06-01 to 2026-06-30"]),
    ("on 2026-05-20", ["2026-05-20"]),
    ("on 5/20", ["2026-05-20"]),
    ("next week", ["2026-01-05 to 2026-01-11"]),
    ("in two weeks", ["2026-01-15"]),
    ("in late April", ["2026-04-21 to 2026-04-30"]),
    ("on the 3rd of April", ["2026-04-03"]),
    ("", []),
]
SCHEDULES = [
    ("50% at booking, rest on delivery", "50"),
    ("half up front", "50"),
    ("30% deposit", "30"),
    ("paid in full upfront", "100"),
    ("25% upfront", "25"),
    ("a deposit of 40%", "40"),
    ("fifty percent upfront", "50"),
    ("", None),
]
WANTS = [
    "We'd love {what}",
    "We're looking for {what}",
    "Could we book {what}",
    "Interested in {what}",
]
BIDS = [
    "We can pay {amount}.",
    "Our budget is {amount}.",
    "Could you do {amount}?",
    "How about {amount}?",
    "Would {amount} work?",
    "We were thinking {amount}.",
]
YESES = [
    "Agreed",
    "Sounds good!",
    "Deal.",
    "Yes, that works for us.",
    "ok, let's do it",
    "Perfect, works for me",
    "sure thing",
]


def money(amount: float, currency: str) -> str:
    shown = f"{amount:,.0f}"
    return {"USD": f"${shown}", "GBP": f"£{shown}"}.get(currency, f"{shown} {currency}")


def up50(value: float) -> int:
    return math.ceil(value / 50) * 50


def path(ask: int, floor: int) -> list[int]:
    settle = up50(floor + (ask - floor) / 2)
    points = [ask]
    for k in (1, 2, 3):
        point = max(up50(ask - (ask - settle) * k / 3), settle)
        if point < points[-1]:
            points.append(point)
    return points


def fee(amount: int, currency: str) -> dict[str, str]:
    return {"amount": f"{amount}.00", "currency": currency}


def clear_of_floors(floors: str | list[str], totals: list[int], quantity: int) -> None:
    """A script whose own amounts (what the brand or the host names, or what is agreed, in
    all or per unit) equal a floor it checks for could not tell a leak from the deal: the
    corpus must hold none (the check reads the floor's digits in any currency). The schedule's
    share and rest may equal a floor; the check masks them."""
    shown = [floors] if isinstance(floors, str) else floors
    digits = {int(re.sub(r"\D", "", floor)) for floor in shown}
    figures = {*totals, *(total // quantity for total in totals)}
    if figures & digits:
        raise ValueError(f"an amount of the script equals its floor: {sorted(figures & digits)}")


def opening(
    rng: random.Random, what: str, schedules: list[tuple[str, str | None]] = SCHEDULES
) -> tuple[str, str | None, list[str], str | None]:
    greeting = rng.choice(GREETINGS)
    intro, company = rng.choice(COMPANIES)
    when, dates = rng.choice(DATES)
    schedule, due = rng.choice(schedules)
    want = rng.choice(WANTS).format(what=what)
    parts = [p for p in (greeting, intro) if p]
    body = want + (f", {when}" if when else "") + "."
    if schedule:
        body += f" Payment: {schedule}."
    return " ".join([*parts, body]), company, dates, due


def negotiated(
    rng: random.Random,
    index: int,
    strategy: str,
    schedules: list[tuple[str, str | None]] = SCHEDULES,
    name: str = "",
) -> dict[str, Any]:
    rate = RATES[index % len(RATES)]
    what, quantity, label = rng.choice(rate["asks"])
    cur, ask, floor = rate["currency"], rate["ask"], rate["floor"]
    points = path(ask, floor)
    rules = rate["rule"].format(ask=money(ask, cur), floor=money(floor, cur))
    first, company, dates, due = opening(rng, what, schedules)
    steps: list[dict[str, str]] = [{"visitor": first}]

    def bid(per_unit: int) -> None:
        steps.append({"visitor": rng.choice(BIDS).format(amount=money(per_unit * quantity, cur))})

    def low() -> int:
        choices: list[int] = [floor - 500, floor, floor + 100, ask - 100 * rng.randint(2, 5)]
        return rng.choice(choices)

    rounds = {"accept_ask": 0, "two_rounds": 1, "three_rounds": 2, "to_settle_point": 3}
    if strategy in rounds:
        for _ in range(rounds[strategy] + 1):
            bid(min(low(), points[-1] - 50))
        steps.append({"visitor": rng.choice(YESES)})
        agreed = points[min(rounds[strategy], len(points) - 1)] * quantity
    elif strategy == "meet_ask":
        over = rng.choice([0, 0, 250, 1000])
        bid(ask + over)
        agreed = (ask + over) * quantity
    elif strategy == "meet_next_point":
        bid(min(low(), points[-1] - 50))
        bid(points[1])
        agreed = points[1] * quantity
    else:
        raise ValueError(strategy)
    return {
        "id": f"{name or strategy}-{index:03d}",
        "rules": rules,
        "steps": steps,
        "expect": {
            "offer": {
                "deliverables": [label],
                "fee": fee(agreed, cur),
                "dates": dates,
                "dueSlicePercent": due,
            },
            "buyer": company,
            "first_counter": None if strategy == "meet_ask" else fee(ask * quantity, cur),
            "floor": money(floor, cur),
        },
    }


def host_decides(rng: random.Random, index: int, strategy: str) -> dict[str, Any]:
    """The host's rules name no rate for what the brand wants: the agent asks the host, who
    answers in the deal room's own pane."""
    rate = RATES[index % len(RATES)]
    what, quantity, label = rng.choice(rate["asks"])
    cur, ask, floor = rate["currency"], rate["ask"], rate["floor"]
    other = RATES[(index + 3) % len(RATES)]
    rules = other["rule"].format(
        ask=money(other["ask"], other["currency"]), floor=money(other["floor"], other["currency"])
    )
    first, company, dates, due = opening(rng, what)
    offered = (floor - 200) * quantity
    steps = [{"visitor": first}, {"visitor": rng.choice(BIDS).format(amount=money(offered, cur))}]
    # The floor these rules teach (the other rate's) must not reach the brand either.
    taught = money(other["floor"], other["currency"])
    expect: dict[str, Any] = {"buyer": company, "floor": taught}
    if strategy == "host_states_rate":
        said = rng.choice(
            [
                "{ask}, never below {floor}",
                "{ask} — never below {floor}",
                "Ask {ask}, floor {floor}.",
            ]
        )
        steps.append({"host": said.format(ask=money(ask, cur), floor=money(floor, cur))})
        steps.append({"visitor": rng.choice(YESES)})
        agreed = ask * quantity
        expect["first_counter"] = fee(agreed, cur)
        expect["floor"] = [money(floor, cur), taught]  # stated to the agent, never to the brand
    elif strategy == "host_takes_it":
        steps.append({"host": rng.choice(["Yes, take it.", "Go ahead.", "ok, accept that"])})
        agreed = offered
        expect["first_counter"] = None
    elif strategy == "host_names_amount":
        named = (ask + 500) * quantity
        steps.append(
            {
                "host": rng.choice(["Offer them {x}.", "Counter at {x}.", "Tell them {x}."]).format(
                    x=money(named, cur)
                )
            }
        )
        steps.append({"visitor": rng.choice(YESES)})
        agreed = named
        expect["first_counter"] = fee(named, cur)
    elif strategy == "host_passes":
        steps.append({"host": rng.choice(["No, pass.", "Decline it.", "No thanks, I'll pass"])})
        expect["refusal"] = True
        clear_of_floors(expect["floor"], [offered], quantity)
        return {"id": f"{strategy}-{index:03d}", "rules": rules, "steps": steps, "expect": expect}
    else:
        raise ValueError(strategy)
    clear_of_floors(expect["floor"], [offered, agreed], quantity)
    expect["offer"] = {
        "deliverables": [label],
        "fee": fee(agreed, cur),
        "dates": dates,
        "dueSlicePercent": due,
    }
    return {"id": f"{strategy}-{index:03d}", "rules": rules, "steps": steps, "expect": expect}


def excluded(rng: random.Random, index: int) -> dict[str, Any]:
    rate = RATES[index % len(RATES)]
    what, quantity, _label = rng.choice(rate["asks"])
    cur, ask = rate["currency"], rate["ask"]
    rules = rate["rule"].format(ask=money(ask, cur), floor=money(rate["floor"], cur))
    rules += " " + rng.choice(
        ["I never work with alcohol brands.", "I don't work with gambling companies."]
    )
    category = "alcohol" if "alcohol" in rules else "gambling"
    intro = rng.choice(
        [f"We're an {category} brand", f"We run a {category} company"]
        if category == "alcohol"
        else [f"We're a {category} brand", f"We run a {category} company"]
    )
    steps = [
        {"visitor": f"{intro}. {rng.choice(WANTS).format(what=what)}."},
        {"visitor": rng.choice(BIDS).format(amount=money(ask * quantity, cur))},
    ]
    expect = {"refusal": True, "floor": money(rate["floor"], cur), "buyer": None}
    return {"id": f"excluded-{index:03d}", "rules": rules, "steps": steps, "expect": expect}


# Phrasings the corpus must read as written, a few scripts each.
AT_BOOKING: list[tuple[str, str | None]] = [("50% due at booking", "50")]
"""The schedule as a brand writes it."""
STRATEGIES_AT_BOOKING = ["accept_ask", "two_rounds", "meet_ask", "three_rounds"]
SINGLE_LINES = [
    # (rate, the whole request in one line, quantity, label, per-unit bid)
    (0, "two sponsored posts for {amount}", 2, "2 sponsored posts", 7000),
    (0, "Two sponsored IG posts for {amount}.", 2, "2 sponsored Instagram posts", 8000),
    (1, "3 TikTok videos for {amount}?", 3, "3 TikTok videos", 2500),
    (2, "two Instagram reels for {amount}", 2, "2 Instagram reels", 3500),
]
"""One line names the quantity, the deliverable and the amount for all of them ("two sponsored
posts for $14,000" is one deal for two posts, not one post at $14,000)."""
NOTHING_ON_THE_TABLE = [
    ["Agreed"],
    ["Hi! We're Brightwave.", "Agreed."],
    ["We'd love {what}.", "Agreed!"],
]
"""A yes before anything was proposed: the agent asks for a proposal; no offer is written."""


def single_line(rng: random.Random, index: int, which: int) -> dict[str, Any]:
    number, line, quantity, label, bid = SINGLE_LINES[which]
    rate = RATES[number]
    cur, ask, floor = rate["currency"], rate["ask"], rate["floor"]
    rules = rate["rule"].format(ask=money(ask, cur), floor=money(floor, cur))
    greeting = rng.choice(GREETINGS)
    intro, company = rng.choice(COMPANIES)
    said = line.format(amount=money(bid * quantity, cur))
    steps = [{"visitor": " ".join(p for p in (greeting, intro, said) if p)}]
    if bid >= ask:
        agreed, first_counter = bid * quantity, None  # at the ask: settled as it stands
    else:
        steps.append({"visitor": rng.choice(YESES)})  # the counter is the ask, taken
        agreed = ask * quantity
        first_counter = fee(agreed, cur)
    return {
        "id": f"single_line-{index:03d}",
        "rules": rules,
        "steps": steps,
        "expect": {
            "offer": {
                "deliverables": [label],
                "fee": fee(agreed, cur),
                "dates": [],
                "dueSlicePercent": None,
            },
            "buyer": company,
            "first_counter": first_counter,
            "floor": money(floor, cur),
        },
    }


def agreed_on_nothing(rng: random.Random, index: int, which: int) -> dict[str, Any]:
    rate = RATES[index % len(RATES)]
    what, _quantity, _label = rng.choice(rate["asks"])
    cur = rate["currency"]
    rules = rate["rule"].format(ask=money(rate["ask"], cur), floor=money(rate["floor"], cur))
    steps = [{"visitor": line.format(what=what)} for line in NOTHING_ON_THE_TABLE[which]]
    expect = {"asks_for_proposal": True, "floor": money(rate["floor"], cur), "buyer": None}
    return {
        "id": f"agreed_on_nothing-{index:03d}",
        "rules": rules,
        "steps": steps,
        "expect": expect,
    }


PLAN = [
    ("negotiated", "accept_ask", 30),
    ("negotiated", "meet_ask", 20),
    ("negotiated", "two_rounds", 22),
    ("negotiated", "three_rounds", 14),
    ("negotiated", "to_settle_point", 10),
    ("negotiated", "meet_next_point", 10),
    ("host", "host_states_rate", 16),
    ("host", "host_takes_it", 10),
    ("host", "host_names_amount", 8),
    ("host", "host_passes", 8),
    ("excluded", "excluded", 10),
    ("at_booking", "due_at_booking", len(STRATEGIES_AT_BOOKING)),
    ("single_line", "single_line", len(SINGLE_LINES)),
    ("nothing", "agreed_on_nothing", len(NOTHING_ON_THE_TABLE)),
]


def script(rng: random.Random, index: int, kind: str, strategy: str, k: int) -> dict[str, Any]:
    """The ``k``-th script of its kind, the ``index``-th of the corpus."""
    if kind == "negotiated":
        return negotiated(rng, index, strategy)
    if kind == "host":
        return host_decides(rng, index, strategy)
    if kind == "excluded":
        return excluded(rng, index)
    if kind == "at_booking":
        return negotiated(rng, index, STRATEGIES_AT_BOOKING[k], AT_BOOKING, strategy)
    if kind == "single_line":
        return single_line(rng, index, k)
    return agreed_on_nothing(rng, index, k)


def main() -> None:
    rng = random.Random(14)
    index = 0
    for kind, strategy, count in PLAN:
        scripts = []
        for k in range(count):
            scripts.append(script(rng, index, kind, strategy, k))
            index += 1
        text = json.dumps({"today": TODAY, "scripts": scripts}, indent=1, ensure_ascii=False)
        (HERE / f"{strategy}.json").write_text(text + "\n", encoding="utf-8")
    print(f"{index} scripts")


if __name__ == "__main__":
    main()
