"""How the private-value firewall reads the numbers a text states (``domain/firewall.py``, rules
F1 and F8, and F10's test of which numbers are amounts).

- F1  A number as people write it: digit groups (``6,137``, ``6.137``, ``6 137``, ``6'137``),
      decimals, and a multiplier (``6.137k``, ``6 grand``, ``1.2 million``). Both groupings
      are read (``readings``): English (``6,137.50``) always, continental (``6.137,50``,
      ``6 137``) when the groups say so, so ``6.137`` is 6.137 and 6137. Numbers written in
      words are read as digits by the ``text2num`` parser (``six thousand one hundred
      thirty-seven``). A UUID is an id: its digits are no amount. A text is folded first (F7,
      ``normalise.fold``).
- F8  Number words in a row are read digit by digit, and odd spacing undone
      (``normalise.spell_digits``), before the numbers are read (``forms``).
- F10 Which of a text's numbers are amounts (``is_amount``, ``not_amounts``): a number marked as
      money (a currency before or after it, a multiplier), or a bare number that is not a
      year (1900 to 2099), a percentage or part of an id (glued to letters, after ``#``,
      ``/``, ``_``, ``@``, ``=`` or ``&``), and not inside a date, a time or a phone-length
      digit run (F2 matches phones). ``money_amounts``: the numbers a text writes as money (a
      currency next to it, a multiplier, or a money word before it): a private term's caps
      and minimums, never its years or counts. ``digit_amounts``: the numbers a text writes
      in digits (the figures F10 spares are read so, with no words to read).

Pure functions of the text; nothing here knows a private value. The readings are cached: the
same terms, asks and figures come back in every turn of a room.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Final

from dealroom.domain import normalise
from dealroom.domain.distinctive import MIN_PHONE_DIGITS, PHONE

_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
WORDS: Final = re.compile(r"[0-9a-z]+")
"""The words of a folded, case-folded text (``forms``; a private term's phrase, F3)."""
# A number as people write it: digit groups (1,234 / 1.234 / 1 234 / 1'234), decimals, and a
# multiplier. Both groupings are tried (F1), so 6.137k and 6.137 (German 6137) both read.
AMOUNT: Final = re.compile(
    r"(?<![\d])(?P<n>\d{1,3}(?:[,.'\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)"
    r"(?:\s?(?P<m>k|thousand|grand|m|mn|million)\b)?",
    re.I,
)
_GROUP_MARKS: Final = re.compile(r"[\u00a0\u202f' ]")
_CONTINENTAL: Final = re.compile(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+,\d{1,2}")
_MULTIPLIERS: Final = {
    "k": 1_000,
    "thousand": 1_000,
    "grand": 1_000,
    "m": 1_000_000,
    "mn": 1_000_000,
    "million": 1_000_000,
}

# F10: what makes a number an amount of money, and what makes it something else.
_CODES: Final = r"usd|eur|gbp|cad|aud|chf|nzd|sgd|sek|nok|dkk|inr|jpy|cny|hkd|mxn|brl|zar"
_CURRENCY_BEFORE: Final = re.compile(rf"(?:[$£€¥₹]|\b(?:{_CODES}))\s?$", re.I)
_CURRENCY_AFTER: Final = re.compile(
    rf"\s?(?:[$£€¥₹]|(?:{_CODES}|dollars?|bucks|euros?|pounds?|quid|cents?)\b)", re.I
)
_MONEY_WORD_BEFORE: Final = re.compile(
    r"\b(?:pay|paying|paid|budget|fee|rate|price|cost|costs|charge|spend|spending|cap|capped)"
    r"\b\D{0,12}$",
    re.I,
)
_YEAR: Final = re.compile(r"(?:19|20)\d\d")
_ID_MARK: Final = frozenset("#/_@=&")
_DATE_OR_TIME: Final = re.compile(
    r"(?<![\d.,])\d{1,4}([-/.])\d{1,2}\1\d{1,4}(?![\d.,]?\d)|\b\d{1,2}:\d{2}(?::\d{2})?\b"
)


def _words_to_digits(text: str) -> str:
    """Numbers written in words, as digits (``text2num``); the text unchanged without any."""
    if not re.search(r"[A-Za-z]", text):
        return text
    try:
        from text_to_num import alpha2digit  # a compiled, well-kept parser (DECISIONS.md)
    except ImportError:  # pragma: no cover - a declared dependency
        return text
    # "six thousand, one hundred" is one number to a reader; the parser stops at the comma.
    text = re.sub(r"(?<=[A-Za-z]),(?=\s+[A-Za-z])", "", text)
    try:
        converted: str = alpha2digit(text, "en")
    except Exception:  # pragma: no cover - the parser refuses odd input; digits still match
        return text
    return converted


def forms(text: str) -> tuple[str, str, str, list[str]]:
    """``text`` as the firewall reads it: folded without ids (F7), the same with its numbers in
    words as digits (F8, F1), the first case-folded, and its words."""
    plain = _UUID.sub(" ", normalise.fold(text))
    folded = plain.casefold()
    tokens = WORDS.findall(folded)
    numbers = normalise.NUMBER_WORDS.intersection(tokens)
    spelled = normalise.spell_digits(plain, words=not numbers.isdisjoint(normalise.DIGIT_WORDS))
    read = _words_to_digits(spelled) if numbers else spelled
    return plain, read, folded, tokens


def _read(text: str) -> tuple[str, ...]:
    """``text``'s forms to read amounts in (``forms``)."""
    plain, read, _folded, _tokens = forms(text)
    return (plain,) if read == plain else (plain, read)


def _mentions(sources: Iterable[str]) -> Iterator[tuple[Decimal, str]]:
    """Every reading of every number in ``sources`` (a text's forms, ``_read``)."""
    for source in sources:
        for found in AMOUNT.finditer(source):
            for value in readings(found.group("n"), found.group("m")):
                yield value, found.group(0)


@lru_cache(maxsize=4096)
def readings(raw: str, multiplier: str | None) -> frozenset[Decimal]:
    """F1: the values a written number may mean: English grouping (``6,137.50``) always;
    continental (``6.137,50``, ``6 137``) when its groups say so. Cached: the same figures
    come back in every turn of a room."""
    scale = Decimal(_MULTIPLIERS[multiplier.lower()]) if multiplier else Decimal(1)
    compact = _GROUP_MARKS.sub("", raw)
    candidates = {compact.replace(",", "")}
    if _CONTINENTAL.fullmatch(compact):
        candidates.add(compact.replace(".", "").replace(",", "."))
    values: set[Decimal] = set()
    for candidate in candidates:
        try:
            value = Decimal(candidate) * scale
        except InvalidOperation:
            continue
        if value.is_finite() and value > 0:
            values.add(value.normalize())
    return frozenset(values)


@lru_cache(maxsize=1024)
def stated_amounts(text: str) -> frozenset[Decimal]:
    """Every amount ``text`` states (F1, F7, F8). Cached: a room's terms, asks and
    instructions are read again on every check."""
    return frozenset(value for value, _raw in _mentions(_read(text)))


@lru_cache(maxsize=4096)
def digit_amounts(text: str) -> frozenset[Decimal]:
    """The amounts ``text`` writes in digits (F10's spared figures: no words to read)."""
    plain = normalise.fold(text)
    return frozenset(
        value
        for found in AMOUNT.finditer(plain)
        for value in readings(found.group("n"), found.group("m"))
    )


@lru_cache(maxsize=1024)
def money_amounts(text: str) -> frozenset[Decimal]:
    """F10: the amounts ``text`` writes as money (a currency, a multiplier or a money word
    next to it): a private term's caps and minimums, never its years or counts."""
    money: set[Decimal] = set()
    for source in _read(text):
        for found in AMOUNT.finditer(source):
            start, end = found.span()
            if (
                found.group("m")
                or _CURRENCY_BEFORE.search(source, max(0, start - 8), start)
                or _CURRENCY_AFTER.match(source, end)
                or _MONEY_WORD_BEFORE.search(source, max(0, start - 24), start)
            ):
                money |= readings(found.group("n"), found.group("m"))
    return frozenset(money)


def is_amount(source: str, found: re.Match[str]) -> bool:
    """F10: whether a number of ``source`` (not in a date, a time or a phone) is an
    amount: money-marked, or a bare number that is not a year, a percentage or part of an
    id."""
    start, end = found.span()
    if found.group("m"):
        return True
    if _CURRENCY_BEFORE.search(source, max(0, start - 8), start) or _CURRENCY_AFTER.match(
        source, end
    ):
        return True
    before, after = source[start - 1 : start], source[end : end + 1]
    if before.isalpha() or before in _ID_MARK or after.isalpha() or after == "%":
        return False
    return not _YEAR.fullmatch(found.group("n"))


def not_amounts(source: str) -> list[tuple[int, int]]:
    """F10: the spans of ``source`` whose numbers are not amounts: dates, times and
    phone-length digit runs (F2 matches phones)."""
    spans = [found.span() for found in _DATE_OR_TIME.finditer(source)]
    for found in PHONE.finditer(source):
        if sum(c.isdigit() for c in found.group()) >= MIN_PHONE_DIGITS:
            spans.append(found.span())
    return spans


def overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    start, end = span
    return any(start < other_end and other_start < end for other_start, other_end in spans)
