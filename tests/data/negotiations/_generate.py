"""Writes the negotiation corpus (``*.json`` beside this file); run it to regenerate.

Each script is a host's standing rules, the lines the brand and the host post in their deal
room, and the written offer that must come of it (or the refusal). The expected figures are
worked out here, independently of the engine, from the policy's published table
(persona/policy.py NP1-NP7, ``Host`` below): the first counter is the ask; a brand that does
not move up gets the same counter again; a move is met with half of it in whole units (a
sixteenth of the ask, rounded up to 50), down to the hold point (the lowest such step at or
above half-way from the floor to the ask); a proposal at or above the counter it would draw
settles at itself; a move close under the hold point is put to the host, who takes it or not.
Phrasings and bids are drawn with a fixed seed from the lists below, so the corpus is stable
(the bids are drawn as they always were; only what the policy makes of them is computed).

    python tests/data/negotiations/_generate.py
"""

from __future__ import annotations

import json
import math
import random
import re
from fractions import Fraction
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
    """Where the scripts' bids are drawn from: three equal steps (rounded up to 50) from the
    ask to half-way to the floor. Bids stay under its last point, so no bid of a haggling
    script meets a counter by itself."""
    settle = up50(floor + (ask - floor) / 2)
    points = [ask]
    for k in (1, 2, 3):
        point = max(up50(ask - (ask - settle) * k / 3), settle)
        if point < points[-1]:
            points.append(point)
    return points


class Host:
    """The host side of the policy table (persona/policy.py NP3-NP7), per unit, written out
    again here so the corpus checks the engine rather than copying it."""

    def __init__(self, ask: int, floor: int) -> None:
        self.ask, self.floor = ask, floor
        self.unit = max(up50(ask / 16), 50)
        target = Fraction(floor + ask, 2)
        self.hold = ask - math.floor((ask - target) / self.unit) * self.unit
        self.standing: int | None = None
        self.previous: int | None = None

    def answer(self, offer: int) -> tuple[str, int]:
        """("counter", amount), ("settle", offer) or ("ask", offer) for one proposal."""
        moved = False
        if self.standing is None:
            counter = self.ask  # NP4
        else:
            assert self.previous is not None
            move = offer - self.previous
            moved = move > 0
            units = math.floor(Fraction(move, 2 * self.unit) + Fraction(1, 2)) if moved else 0
            counter = max(self.standing - units * self.unit, self.hold)  # NP5-NP7
        self.previous = offer
        if offer >= counter:
            return "settle", offer  # NP3
        near = offer >= self.hold - 2 * self.unit
        if moved and self.standing == self.hold and near:
            return "ask", offer  # NP7
        self.standing = counter
        return "counter", counter


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

    host = Host(ask, floor)

    def haggle(count: int) -> int:
        """The brand bids ``count`` times (drawn as they always were), the host answering each;
        then the brand takes the counter standing. The agreed fee for all of them. A bid the
        host takes, or puts to its principal (who takes it), ends the haggling; the draws for
        the rest are made all the same, so the scripts after this one stay as they were."""
        agreed: int | None = None
        for _ in range(count):
            per_unit = min(low(), points[-1] - 50)
            said = rng.choice(BIDS).format(amount=money(per_unit * quantity, cur))
            if agreed is not None:
                continue
            steps.append({"visitor": said})
            decision, amount = host.answer(per_unit)
            if decision == "ask":  # NP7: put to the host, who takes it
                steps.append({"host": "Yes, take it."})
                agreed = amount
            elif decision == "settle":
                agreed = amount
        yes = rng.choice(YESES)
        if agreed is None:
            assert host.standing is not None
            steps.append({"visitor": yes})
            agreed = host.standing
        return int(agreed * quantity)

    rounds = {"accept_ask": 0, "two_rounds": 1, "three_rounds": 2, "to_settle_point": 3}
    if strategy in rounds:
        agreed = haggle(rounds[strategy] + 1)
    elif strategy == "meet_ask":
        over = rng.choice([0, 0, 250, 1000])
        bid(ask + over)
        agreed = (ask + over) * quantity
    elif strategy == "meet_next_point":
        opening_bid = min(low(), points[-1] - 50)
        host.answer(opening_bid)
        bid(opening_bid)
        decision, meets = host.answer(points[1])
        assert decision == "settle", "the second bid meets the counter it draws"
        bid(points[1])
        agreed = meets * quantity
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


def near_hold_point(rng: random.Random, index: int, k: int) -> dict[str, Any]:
    """A brand that keeps moving up in big steps until the agent stands at its hold point, then
    comes close under it: the agent puts that to the host (NP7), who takes it (the offer is the
    brand's figure) or says no (the hold point stands, and the brand takes it)."""
    rate = RATES[index % len(RATES)]
    what, quantity, label = rng.choice(rate["asks"])
    cur, ask, floor = rate["currency"], rate["ask"], rate["floor"]
    rules = rate["rule"].format(ask=money(ask, cur), floor=money(floor, cur))
    first, company, dates, due = opening(rng, what)
    steps: list[dict[str, str]] = [{"visitor": first}]
    host = Host(ask, floor)
    low = up50(ask * 0.2)
    # a move of twice the gap from the ask to the hold point earns all of it (NP6)
    for per_unit in (low, low + 2 * (ask - host.hold)):
        steps.append({"visitor": rng.choice(BIDS).format(amount=money(per_unit * quantity, cur))})
        assert host.answer(per_unit)[0] == "counter"
    assert host.standing == host.hold
    close = host.hold - host.unit
    steps.append({"visitor": rng.choice(BIDS).format(amount=money(close * quantity, cur))})
    assert host.answer(close) == ("ask", close)
    takes = k % 2 == 0
    steps.append({"host": "Yes, take it." if takes else "No."})
    if takes:
        agreed = close
    else:
        steps.append({"visitor": rng.choice(YESES)})
        agreed = host.hold
    clear_of_floors(money(floor, cur), [agreed * quantity], quantity)
    return {
        "id": f"near_hold_point-{index:03d}",
        "rules": rules,
        "steps": steps,
        "expect": {
            "offer": {
                "deliverables": [label],
                "fee": fee(agreed * quantity, cur),
                "dates": dates,
                "dueSlicePercent": due,
            },
            "buyer": company,
            "first_counter": fee(ask * quantity, cur),
            "floor": money(floor, cur),
        },
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
    ("near_hold", "near_hold_point", 6),
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
    if kind == "near_hold":
        return near_hold_point(rng, index, k)
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
