"""The terms reader: dates and month windows, payment schedules, amount ranges and the
counterparty's company, read from chat text (pure: no I/O, the clock is passed in as
``today``). Deliverables are in ``domain.deliverables``, single amounts in ``domain.terms``.

Dates resolve against ``today``: a month or day written without a year is its next
occurrence (on or after today). A day is ``YYYY-MM-DD``; a window is
``YYYY-MM-DD to YYYY-MM-DD`` ("in March", "mid-March", "early April", "next week"); a
deadline is ``by YYYY-MM-DD``. Relative days ("next Friday", "in two weeks", "tomorrow")
are parsed by ``dateparser`` with ``today`` as its base (docs/DECISIONS.md "Libraries",
terms reader).
"""

from __future__ import annotations

import calendar
import itertools
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Final

from text_to_num import alpha2digit

from dealroom.domain.terms import Money, find_amount_mentions

_MONTHS: Final = {n.lower(): i for i, n in enumerate(calendar.month_name) if n} | {
    n.lower(): i for i, n in enumerate(calendar.month_abbr) if n
}
_MONTH = "|".join(sorted((*_MONTHS, "sept"), key=len, reverse=True))
_PART = r"(?P<part>early|mid|middle of|late|end of|the end of|beginning of|start of)"


@dataclass(frozen=True, slots=True)
class DateTerm:
    """A day, a window (``start``..``end``) or a deadline (``by`` ``end``)."""

    start: date | None
    end: date | None = None

    def label(self) -> str:
        if self.start is None and self.end is not None:
            return f"by {self.end.isoformat()}"
        assert self.start is not None
        if self.end is None or self.end == self.start:
            return self.start.isoformat()
        return f"{self.start.isoformat()} to {self.end.isoformat()}"


def _month_number(word: str) -> int:
    return 9 if word.lower() == "sept" else _MONTHS[word.lower()]


def _next_month(month: int, year: int | None, today: date) -> int:
    if year is not None:
        return year
    return today.year if month >= today.month else today.year + 1


def _window(month: int, year: int, part: str | None) -> DateTerm:
    last = calendar.monthrange(year, month)[1]
    start, end = 1, last
    if part in ("early", "beginning of", "start of"):
        end = 10
    elif part in ("mid", "middle of"):
        start, end = 11, 20
    elif part in ("late", "end of", "the end of"):
        start = 21
    return DateTerm(date(year, month, start), date(year, month, end))


_DAY_FIRST = re.compile(
    r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>"
    + _MONTH
    + r")\b\.?(?:,?\s+(?P<y>\d{4}))?",
    re.I,
)
_MONTH_FIRST = re.compile(
    r"\b(?P<m>" + _MONTH + r")\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?!\s*(?:%|k\b|,\d))"
    r"(?:,?\s+(?P<y>\d{4}))?",
    re.I,
)
_ISO = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b")
_SLASH = re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})(?:/(?P<y>\d{4}|\d{2}))?\b")
_MONTH_ONLY = re.compile(
    r"\b(?:(?P<by>by|before)\s+(?:the\s+)?(?:end of\s+)?|(?:in|during|for|around|across|"
    + r"sometime in|throughout)\s+(?:the\s+)?(?:month of\s+)?|"
    + _PART
    + r"[\s-]+)(?P<m>"
    + _MONTH
    + r")\b(?:\s+(?P<y>\d{4}))?",
    re.I,
)
_RELATIVE = re.compile(
    r"\b(?:tomorrow|next (?:mon|tues|wednes|thurs|fri|satur|sun)day|this (?:mon|tues|wednes|"
    r"thurs|fri|satur|sun)day|(?:in|within) \d{1,2} (?:days?|weeks?|months?)|"
    r"(?:on )?(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
    re.I,
)
_NEXT = re.compile(r"\b(?P<by>by (?:the )?end of )?next (?P<unit>week|month)\b", re.I)


def _day(year: int | None, month: int, day: int, today: date) -> DateTerm | None:
    if not 1 <= month <= 12:
        return None
    for candidate in [year] if year is not None else [today.year, today.year + 1]:
        if not 1 <= day <= calendar.monthrange(candidate, month)[1]:
            continue
        found = date(candidate, month, day)
        if year is not None or found >= today:
            return DateTerm(found)
    return None


@lru_cache(maxsize=256)
def _relative(phrase: str, today: date) -> date | None:
    import dateparser  # only relative phrases need it, and its import is slow

    settings = {"RELATIVE_BASE": datetime.combine(today, datetime.min.time())}
    parsed = dateparser.parse(
        phrase, languages=["en"], settings=settings | {"PREFER_DATES_FROM": "future"}
    )
    return parsed.date() if parsed is not None else None


def read_dates(text: str, today: date) -> list[DateTerm]:
    """Every date, window and deadline in ``text``, in order of mention."""
    return list(_read_dates(text, today))


@lru_cache(maxsize=4096)
def _read_dates(text: str, today: date) -> tuple[DateTerm, ...]:
    if re.search(r"[a-z]", text, re.I):
        text = alpha2digit(text, "en", threshold=0)
    found: list[tuple[int, int, DateTerm]] = []

    def add(match: re.Match[str], term: DateTerm | None) -> None:
        if term is None:
            return
        if any(s <= match.start() < e or match.start() <= s < match.end() for s, e, _ in found):
            return
        found.append((match.start(), match.end(), term))

    for pattern in (_ISO, _DAY_FIRST, _MONTH_FIRST):
        for m in pattern.finditer(text):
            year = int(m["y"]) if m["y"] else None
            month = int(m["m"]) if m["m"].isdigit() else _month_number(m["m"])
            add(m, _day(year, month, int(m["d"]), today))
    for m in _SLASH.finditer(text):
        year = int(m["y"]) if m["y"] else None
        year = year + 2000 if year is not None and year < 100 else year
        add(m, _day(year, int(m["m"]), int(m["d"]), today))
    for m in _MONTH_ONLY.finditer(text):
        month = _month_number(m["m"])
        year = _next_month(month, int(m["y"]) if m["y"] else None, today)
        window = _window(month, year, (m["part"] or "").lower() or None)
        add(m, DateTerm(None, window.end) if m["by"] else window)
    for m in _NEXT.finditer(text):
        if m["unit"].lower() == "week":
            monday = today + timedelta(days=7 - today.weekday())
            window = DateTerm(monday, monday + timedelta(days=6))
        else:
            month, year = (today.month % 12) + 1, today.year + (today.month == 12)
            window = _window(month, year, None)
        add(m, DateTerm(None, window.end) if m["by"] else window)
    for m in _RELATIVE.finditer(text):
        day = _relative(m.group(0).lower().removeprefix("on "), today)
        add(m, DateTerm(day) if day is not None else None)
    return tuple(term for _start, _end, term in sorted(found, key=lambda f: f[0]))


# --- payment schedules ----------------------------------------------------------------------

_TIMING = (
    r"(?:up[\s-]?front|in advance|at booking|on booking|at signing|on signing|upon signing|"
    r"upon booking|when we book|to book|to start|at the start|before (?:we )?start\w*|now|"
    r"as (?:a )?deposit|deposit)"
)
_FRACTIONS: Final = {"half": "50", "a third": "33.33", "one third": "33.33", "a quarter": "25"}
_SCHEDULES: Final = (
    re.compile(
        r"(?P<p>\d{1,3}(?:\.\d{1,2})?)\s?(?:%|percent|per cent)\s*(?:of (?:it|the fee|the total|"
        r"the payment)\s*)?(?:is\s+|due\s+|paid\s+|payable\s+)*" + _TIMING,
        re.I,
    ),
    re.compile(r"\bdeposit of\s+(?P<p>\d{1,3}(?:\.\d{1,2})?)\s?(?:%|percent)", re.I),
    re.compile(
        r"\b(?P<frac>half|a third|one third|a quarter)\s+(?:of (?:it|the fee)\s+)?"
        r"(?:is\s+|due\s+|paid\s+)*" + _TIMING,
        re.I,
    ),
    re.compile(r"\b(?P<even>50\s?/\s?50|fifty[\s-]fifty|split (?:it )?(?:in half|evenly))", re.I),
    re.compile(
        r"\b(?P<full>paid in full|(?:all|everything|the (?:whole|full) (?:fee|amount)|in full|"
        r"100%)\s+(?:is\s+|due\s+|paid\s+)*" + _TIMING + r"|full payment\s+" + _TIMING + r")",
        re.I,
    ),
)


@lru_cache(maxsize=4096)
def read_schedule(text: str) -> str | None:
    """The percent of the fee due at booking ``text`` states (the last one stated), as
    digits (``"50"``, ``"33.33"``); None when it states none."""
    if re.search(r"[a-z]", text, re.I):
        text = alpha2digit(text, "en", threshold=0)
    found: list[tuple[int, str]] = []
    for pattern in _SCHEDULES:
        for m in pattern.finditer(text):
            groups = m.groupdict()
            if groups.get("p"):
                value = groups["p"]
            elif groups.get("frac"):
                value = _FRACTIONS[groups["frac"].lower()]
            elif groups.get("even"):
                value = "50"
            else:
                value = "100"
            if Decimal(value) <= 0 or Decimal(value) > 100:
                continue
            found.append((m.start(), value))
    return max(found)[1] if found else None


# --- amount ranges --------------------------------------------------------------------------

_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|and)\s*$", re.I)
_SHORT_RANGE = re.compile(
    r"(?P<sym>\$|£|€)?(?P<lo>\d{1,3})\s?(?:-|–|to)\s?(?P=sym)?(?P<hi>\d{1,3})\s?(?P<mult>k)\b", re.I
)


def read_range(text: str, *, default_currency: str = "USD") -> tuple[Money, Money] | None:
    """An amount range (``$5,000-$6,000``, ``between 5k and 6k``, ``5-6k``): (low, high)."""
    short = _SHORT_RANGE.search(text)
    if short is not None:
        currency = {"$": "USD", "£": "GBP", "€": "EUR"}.get(short["sym"] or "", default_currency)
        lo, hi = Decimal(short["lo"]) * 1000, Decimal(short["hi"]) * 1000
        if lo < hi:
            return Money(lo, currency), Money(hi, currency)
    mentions = find_amount_mentions(text, default_currency=default_currency)
    for first, second in itertools.pairwise(mentions):
        between = text[first.end : second.start]
        if not _RANGE_JOIN.match(between):
            continue
        low, high = first.money, second.money
        if low.currency == high.currency and low.amount < high.amount:
            return low, high
    return None


# --- the counterparty -----------------------------------------------------------------------

_COMPANY = r"(?P<company>[A-Z][\w&.'-]*(?: (?:[A-Z][\w&.'-]*|&|of))*)"
_INTRO: Final = (
    re.compile(
        r"\b(?:[Ii]'?m|[Ii] am|[Tt]his is|[Mm]y name is)\s+(?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
        r"\s+(?:from|at|with|of)\s+" + _COMPANY
    ),
    re.compile(
        r"\b(?:[Ww]e'?re|[Ww]e are|on behalf of|[Ii] (?:work|am) (?:at|for|with)|[Ii]'?m (?:at|"
        r"with|from)|[Hh]ere at|[Rr]epresenting|[Ww]riting from)\s+" + _COMPANY
    ),
    re.compile(r"(?:^|[,.!]\s*)\W*" + _COMPANY + r"\s+here\b"),
)
_NOT_NAMES: Final = frozenset(
    "Not Just Looking Interested Here Sorry Ok Okay Happy Glad Sure Hoping Wondering "  # noqa: SIM905 (a word list reads best as text)
    "Reaching Writing Still Also Really The A An I We Hi Hello Hey Thanks Excited Keen "
    "Ready Planning Launching Big Huge Fans Fine Good Great".split()
)
_DROP_TAIL = re.compile(r"\s+(?:and|&|of)$")


def read_company(text: str) -> str | None:
    """The company a counterparty introduces itself as (``We're Brightwave``, ``I'm Sam
    from Brightwave Labs``, ``Brightwave here``), or None."""
    for pattern in _INTRO:
        found = pattern.search(text)
        if found is None:
            continue
        company = _DROP_TAIL.sub("", found["company"].rstrip(".,'!"))
        if company.split()[0] in _NOT_NAMES or company.upper() in ("USD", "EUR", "GBP"):
            continue
        return company
    return None


# --- a principal's rate ---------------------------------------------------------------------

FLOOR_WORDS: Final = re.compile(
    r"\b(?:never (?:go )?below|never less than|never under|no less than|not below|not less than|"
    r"not under|minimum|floor|at least|lowest|bottom line|rock bottom)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class RateStatement:
    """``$8,000, never below $6,000``: an ask and a floor, not an offer of either."""

    ask: Money | None
    floor: Money


def read_rate(text: str, *, default_currency: str = "USD") -> RateStatement | None:
    """The rate a principal states when a floor word comes before an amount; None when no
    amount is a floor (a plain amount may be an instruction to offer it)."""
    ask: Money | None = None
    floor: Money | None = None
    since = 0
    for mention in find_amount_mentions(text, default_currency=default_currency):
        before = text[since : mention.start]
        since = mention.end
        if FLOOR_WORDS.search(before):
            floor = floor or mention.money
        elif ask is None:
            ask = mention.money
    if floor is None:
        return None
    return RateStatement(ask if ask is not None and ask.amount > floor.amount else None, floor)
