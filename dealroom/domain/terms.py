"""Reading commercial terms out of chat text (pure, no I/O).

The offline engine negotiates with rules, so it needs to read what people write: amounts with
their currency, what is being bought, dates, and whether a line says yes or no. The forms are
the common ones (``$8,000``, ``$8k``, ``8000 USD``, ``USD 8000``, ``£5,000``, ``€4,000``,
``4,000 euros``); anything fancier is left unread rather than guessed.

Memory stores money as a plain code string (``money_code`` → ``"8000 USD"``) and replies show
it the way people write it (``format_money`` → ``"$8,000"``, ``"8,000 EUR"``); both parse back.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from enum import StrEnum

from dealroom.domain.money import display

# --- money ----------------------------------------------------------------------------------

CODES = ("USD", "EUR", "GBP", "CAD", "AUD", "CHF", "NZD", "SGD", "SEK", "NOK", "DKK", "INR")
"""The ISO 4217 codes read when written out (``8000 USD``, ``USD 8000``)."""

_SYMBOLS = {
    "$": "USD",
    "us$": "USD",
    "£": "GBP",
    "€": "EUR",
    "ca$": "CAD",
    "a$": "AUD",
    "nz$": "NZD",
    "₹": "INR",
}
"""Leading symbols, the ones ``format_money`` writes included, so its output reads back."""

_WORDS = {
    "dollar": "USD",
    "dollars": "USD",
    "bucks": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "pound": "GBP",
    "pounds": "GBP",
    "quid": "GBP",
}
_MULTIPLIERS = {
    "k": 1_000,
    "thousand": 1_000,
    "m": 1_000_000,
    "mm": 1_000_000,
    "million": 1_000_000,
}

_CODE_ALT = "|".join(CODES)
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d{1,3}(?:\.\d{3})+(?!\d|,\d)|\d+(?:\.\d+)?"
_MULT = r"(?:\s?(?:thousand|million)\b|(?:k|mm|m)\b)"
_AFTER = r"(?:\s?(?:" + _CODE_ALT + r")\b)?"
"""A code repeating a symbol (``$8,000 USD``) is consumed so it is not read twice."""
_CONTEXT = (
    r"\b(?:pay|paying|budget|offer|offering|fee|rate|price|spend|spending|cost|charge)"
    r"(?:\s+(?:is|of|was|would be|around|about|up to|at|:))*\s*:?\s*"
)
_MONEY = re.compile(
    r"(?P<sym>\b(?:us|ca|a|nz)\$|\$|£|€|₹)\s?(?P<n1>"
    + _NUM
    + r")(?P<m1>"
    + _MULT
    + r")?"
    + _AFTER
    + r"|\b(?P<code>"
    + _CODE_ALT
    + r")\s?(?P<n2>"
    + _NUM
    + r")(?P<m2>"
    + _MULT
    + r")?"
    + r"|(?<![\w.,])(?P<n3>"
    + _NUM
    + r")(?P<m3>"
    + _MULT
    + r")?\s?"
    r"(?:(?P<code3>" + _CODE_ALT + r")\b|(?P<word>dollars?|bucks|euros?|pounds?|quid)\b"
    r"|(?P<sym3>€|£))"
    + r"|(?<![\w.,])(?P<n4>"
    + _NUM
    + r")(?P<m4>k|mm|m)\b"
    + r"|(?<![\w.,])(?P<n5>\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?)(?!\d|,\d)"
    + r"|(?P<ctx>"
    + _CONTEXT
    + r")(?P<n6>\d{3,}(?:\.\d{1,2})?)(?!\d|[,.]\d)"
    r"(?:\s?(?P<code6>" + _CODE_ALT + r")\b|\s?(?P<word6>dollars?|bucks|euros?|pounds?|quid)\b)?",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Money:
    """An amount in one currency. ``currency`` is an upper-case ISO 4217 code."""

    amount: Decimal
    currency: str

    def digits(self) -> str:
        """The amount alone, digits only (``"8000"``, ``"8000.50"``): a ruling's amount."""
        return _plain(self.amount)


def _plain(amount: Decimal) -> str:
    if amount == amount.to_integral_value():
        return f"{amount.quantize(Decimal(1)):f}"
    return f"{amount.quantize(Decimal('0.01')):f}"


def money_code(money: Money) -> str:
    """The form memory stores: ``"8000 USD"``."""
    return f"{money.digits()} {money.currency}"


def format_money(money: Money, locale: str | None = None) -> str:
    """The form people read, from the one money formatter (P10 in ``domain/money.py``):
    ``"$8,000"``, ``"£5,000.50"``, ``"€4,000"``, ``"CA$8,000"``; every one reads back."""
    return display(money.amount, money.currency, locale)


def _number(raw: str, currency: str) -> Decimal | None:
    # "€4.500" is four thousand five hundred; "$4.50" is four dollars fifty.
    if currency == "EUR" and re.fullmatch(r"\d{1,3}(?:\.\d{3})+", raw):
        raw = raw.replace(".", "")
    try:
        return Decimal(raw.replace(",", ""))
    except InvalidOperation:
        return None


def _money(raw: str, mult: str | None, currency: str) -> Money | None:
    value = _number(raw, currency)
    if value is None:
        return None
    if mult:
        value *= _MULTIPLIERS[mult.strip().lower()]
    if value <= 0:
        return None
    if value == value.to_integral_value():
        value = value.quantize(Decimal(1))
    return Money(value, currency)


@dataclass(frozen=True, slots=True)
class AmountMention:
    """An amount and where it is written (``text[start:end]``)."""

    money: Money
    start: int
    end: int


def find_amount_mentions(text: str, *, default_currency: str = "USD") -> list[AmountMention]:
    """Every amount in ``text`` with its position, in order (see ``find_amounts``)."""
    found: list[AmountMention] = []
    for match in _MONEY.finditer(text):
        groups = match.groupdict()
        start = match.start()
        if groups["n1"] is not None:
            money = _money(groups["n1"], groups["m1"], _SYMBOLS[groups["sym"].lower()])
        elif groups["n2"] is not None:
            money = _money(groups["n2"], groups["m2"], groups["code"].upper())
        elif groups["n3"] is not None:
            if groups["code3"]:
                currency = groups["code3"].upper()
            elif groups["word"]:
                currency = _WORDS[groups["word"].lower()]
            else:
                currency = _SYMBOLS[groups["sym3"]]
            money = _money(groups["n3"], groups["m3"], currency)
        elif groups["n4"] is not None:
            money = _money(groups["n4"], groups["m4"], default_currency)
        elif groups["n5"] is not None:
            money = _money(groups["n5"], None, default_currency)
        else:
            if groups["code6"]:
                currency = groups["code6"].upper()
            elif groups["word6"]:
                currency = _WORDS[groups["word6"].lower()]
            else:
                currency = default_currency
            money = _money(groups["n6"], None, currency)
            start = match.start("n6")  # the words before it ("budget is") are not the amount
        if money is not None:
            found.append(AmountMention(money, start, match.end()))
    return found


def find_amounts(text: str, *, default_currency: str = "USD") -> list[Money]:
    """Every amount in ``text``, in order. A bare number counts only when it looks like money
    (``8k``, ``4,000``, or after a word like *budget*, *fee*, *pay*) and then takes
    ``default_currency``; dates, counts and years are not amounts."""
    return [m.money for m in find_amount_mentions(text, default_currency=default_currency)]


def parse_money(text: str, *, default_currency: str = "USD") -> Money | None:
    """The first amount in ``text`` (``"8000 USD"`` as memory stores it, or chat forms)."""
    amounts = find_amounts(text, default_currency=default_currency)
    if amounts:
        return amounts[0]
    # A memory value may be a bare number ("8000"): read it in the default currency.
    bare = text.strip().replace(",", "")
    if re.fullmatch(r"\d+(?:\.\d+)?", bare):
        return _money(bare, None, default_currency)
    return None


def round_up(amount: Decimal, step: int = 50) -> Decimal:
    """``amount`` rounded up to a multiple of ``step`` (a counter never rounds down)."""
    units = (amount / step).to_integral_value(rounding=ROUND_CEILING)
    return (units * step).quantize(Decimal(1))


# --- deliverables ---------------------------------------------------------------------------

_DELIVERABLES: tuple[tuple[str, str], ...] = (
    ("sponsored_post", r"sponsored\s+posts?"),
    ("sponsored_video", r"sponsored\s+videos?"),
    ("blog_post", r"blog\s+posts?"),
    ("podcast_ad", r"podcast\s+(?:ads?|spots?|reads?|mentions?)"),
    ("story", r"(?:instagram\s+|ig\s+)?stor(?:y|ies)"),
    ("reel", r"(?:instagram\s+|ig\s+)?reels?"),
    ("video", r"(?:youtube\s+|tiktok\s+)?videos?"),
    ("keynote", r"keynotes?(?:\s+(?:talk|speech))?"),
    ("workshop", r"workshops?"),
    ("newsletter", r"newsletters?(?:\s+(?:features?|mentions?|placements?))?"),
    ("post", r"(?:instagram\s+|ig\s+|linkedin\s+)?posts?"),
)
DELIVERABLES: tuple[str, ...] = tuple(dict.fromkeys(slug for slug, _ in _DELIVERABLES))
"""The deliverable slugs this module reads, most specific first."""

_DELIVERABLE_RES = tuple(
    (slug, re.compile(r"\b" + pattern + r"\b", re.IGNORECASE)) for slug, pattern in _DELIVERABLES
)


def find_deliverables(text: str) -> list[str]:
    """Deliverable slugs in order of mention (``"a sponsored post"`` → ``sponsored_post``,
    not also ``post``). A slug written as such (``sponsored_post``) is read too."""
    spans: list[tuple[int, int, str]] = []
    for slug, pattern in _DELIVERABLE_RES:
        spans += [(m.start(), -(m.end() - m.start()), slug) for m in pattern.finditer(text)]
    for slug in DELIVERABLES:
        spans += [(m.start(), -len(slug), slug) for m in re.finditer(rf"\b{slug}\b", text)]
    found: list[str] = []
    end = -1
    for start, negative_length, slug in sorted(spans):
        if start >= end:
            found.append(slug)
            end = start - negative_length
    return found


def find_deliverable(text: str) -> str | None:
    """The first deliverable mentioned, if any."""
    found = find_deliverables(text)
    return found[0] if found else None


def deliverable_label(slug: str) -> str:
    """How a slug reads in a sentence: ``sponsored_post`` → ``sponsored post``."""
    return slug.replace("_", " ")


# --- dates ----------------------------------------------------------------------------------

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): number for number, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
_DATE = re.compile(
    r"\b(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})\b"
    r"|\b(?P<m1>" + _MONTH_ALT + r")\.?\s+" + _DAY.format("d1") + r"\b(?:,?\s+(?P<y1>\d{4})\b)?"
    r"|\b" + _DAY.format("d2") + r"\s+(?:of\s+)?(?P<m2>" + _MONTH_ALT + r")\b\.?"
    r"(?:,?\s+(?P<y2>\d{4})\b)?",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DateMention:
    """A calendar date as written; ``year`` is None when the text gives none."""

    month: int
    day: int
    year: int | None = None

    def label(self) -> str:
        """``2026-12-05`` when the year is known, else ``December 5``."""
        if self.year is not None:
            return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"
        return f"{calendar.month_name[self.month]} {self.day}"


def _date(year: int | None, month: int, day: int) -> DateMention | None:
    if not 1 <= month <= 12:
        return None
    # Without a year, 29 February is still a date someone can mean.
    if not 1 <= day <= calendar.monthrange(year if year is not None else 2000, month)[1]:
        return None
    return DateMention(month, day, year)


def find_dates(text: str) -> list[DateMention]:
    """Dates in order: ISO (``2026-12-05``), ``December 5``, ``Dec 5th, 2026``, ``5 Dec``."""
    found: list[DateMention] = []
    for match in _DATE.finditer(text):
        g = match.groupdict()
        if g["iy"] is not None:
            mention = _date(int(g["iy"]), int(g["im"]), int(g["id"]))
        elif g["m1"] is not None:
            year = int(g["y1"]) if g["y1"] else None
            mention = _date(year, _MONTHS[g["m1"].lower()], int(g["d1"]))
        else:
            year = int(g["y2"]) if g["y2"] else None
            mention = _date(year, _MONTHS[g["m2"].lower()], int(g["d2"]))
        if mention is not None:
            found.append(mention)
    return found


# --- yes / no -------------------------------------------------------------------------------


class Intent(StrEnum):
    YES = "yes"
    NO = "no"


_NEUTRAL = re.compile(
    r"\b(?:no problem|no worries|not a problem|why not|no doubt|not bad|no rush)\b"
)
_NO = re.compile(
    r"\b(?:no|nope|nah|not|never|decline|declined|reject|rejected|don'?t|do not|can'?t|cannot|"
    r"won'?t|will not|(?:i'?ll|we'?ll|i will|we will) pass|pass on (?:it|this|that))\b"
)
_YES = re.compile(
    r"\b(?:yes|yeah|yep|yup|sure|deal|agreed|agree|ok|okay|sounds good|sounds great|go ahead|"
    r"take it|accept|let'?s do it|works for (?:me|us)|that works|absolutely|of course|"
    r"definitely|do it)\b"
)


def intent_of(text: str) -> Intent | None:
    """Whether a line says yes or no. A negation wins (``no deal``, ``don't take it``);
    ``no problem``-style phrases are not negations. None when the line says neither."""
    lowered = _NEUTRAL.sub(" ", text.lower().replace("\u2019", "'"))
    if _NO.search(lowered):
        return Intent.NO
    if _YES.search(lowered):
        return Intent.YES
    return None
