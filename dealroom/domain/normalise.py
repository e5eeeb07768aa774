"""How the private-value firewall reads a text before it matches (``domain/firewall.py``, rules
F7-F9): the forms a model can write a value in that a reader still reads as the value.

- F7  ``fold``: NFKC (full-width and mathematical digits and letters, ligatures, no-break and
      other odd spaces, ``＠`` and ``．``), then format characters (zero-width spaces and joiners,
      the word joiner, soft hyphens, byte-order marks, bidi controls, tag characters) and
      combining marks dropped, every script's decimal digits read as ASCII digits, the Arabic
      decimal and thousands separators read as ``.`` and ``,``, dash and dot variants as ``-``
      and ``.``, and the common confusables (Cyrillic, Greek and Armenian letters drawn like
      Latin ones, ``а`` for ``a``) folded to the Latin letter. The fold is a small table of
      the commonest of the letters UTS #39 lists as confusable with a Latin letter, not the
      whole of UTS #39 (no dependency for it): rarer lookalikes, and letters standing in for
      digits (``O`` for ``0``), are not folded.
- F8  ``spell_digits``: odd spacing undone (runs of spaces, tabs and line breaks are one space;
      ``thirty - seven`` is ``thirty-seven``) and number words read digit by digit where they
      come two or more in a row (``six one three seven``, ``six-one-three-seven``, ``five five
      five, one two three``: ``oh`` and ``zero`` are 0); a lone ``one`` stays a word.
      ``joined_numbers``: digit groups separated by single spaces, hyphens, dots, slashes or
      commas (with or without a space) joined into one candidate number (``6-1-3-7``,
      ``6, 1, 3, 7``, ``61 37`` are 6137). A run that is already one well-formed number
      (``61.37``, ``6,137``) is read as that number, never joined.
- F9  ``unspell_at_dot``: e-mail addresses spelled with the words ``at`` and ``dot``
      (``dev at zyglorb dot com``, ``dev [at] zyglorb [dot] com``) lose those words, so the
      address's letters read as they do written out.

Pure functions of the text; nothing here knows a private value.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

CONFUSABLES: Final = {
    # Cyrillic
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "ɡ": "g", "һ": "h", "і": "i", "ј": "j", "ӏ": "l",
    "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y", "ү": "y",
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M",
    "О": "O", "Р": "P", "Ԛ": "Q", "Ѕ": "S", "Т": "T", "Ԝ": "W", "Х": "X", "У": "Y", "Ү": "Y",
    "Ӏ": "l",
    # Greek
    "α": "a", "γ": "y", "ι": "i", "ν": "v", "ο": "o", "ρ": "p",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Armenian
    "օ": "o", "ս": "u", "հ": "h", "ո": "n", "զ": "q", "ց": "g",
    # Latin letters drawn like others
    "ı": "i", "ɑ": "a", "ɩ": "i",
    # separators: Arabic decimal and thousands separators and comma, dots, dashes
    "\u066b": ".", "\u066c": ",", "\u060c": ",", "\u00b7": ".", "\u2219": ".", "\u22c5": ".",
    "\u30fb": ".", "\u3002": ".", "\u3001": ",", "\u2212": "-", "\u2043": "-",
}  # fmt: skip
"""F7: characters read as another (confusables, Arabic separators, dot and dash variants)."""

_DROPPED_CATEGORIES: Final = frozenset({"Cf", "Mn", "Me"})
"""Format characters (zero-width, joiners, soft hyphen, BOM, bidi, tags) and combining marks."""


def _folded(code: int) -> str | int | None:
    """F7 for one character: dropped (None), read as another (str) or kept (its code)."""
    char = chr(code)
    if char in CONFUSABLES:
        return CONFUSABLES[char]
    category = unicodedata.category(char)
    if category in _DROPPED_CATEGORIES:
        return None
    if category == "Nd":
        return str(unicodedata.decimal(char))
    if category == "Pd":
        return "-"
    return code


class _Table(dict[int, "str | int | None"]):
    """F7's translation table, filled one character at a time as texts bring them: a few
    hundred entries in practice, never the whole of Unicode."""

    def __missing__(self, code: int) -> str | int | None:
        folded = self[code] = _folded(code)
        return folded


_TABLE: Final = _Table()
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]+")


_GROUP_MARK: Final = re.compile("(?<=\\d)['\u2019\u2e41](?=\\d{3}(?!\\d))")
"""Thousands grouped with an apostrophe or a raised comma, as Swiss and other locales write
money (6'137, 6\u2019137, 6\u2e41137): read as the comma they stand for."""


def fold(text: str) -> str:
    """F7: ``text`` as a reader reads it: compatibility forms, invisible characters, other
    scripts' digits and confusable letters folded to plain ASCII where they have a twin, and
    thousands marks read as commas."""
    if text.isascii():
        return _GROUP_MARK.sub(",", text) if "'" in text else text
    text = _GROUP_MARK.sub(",", unicodedata.normalize("NFKC", text))
    if text.isascii():
        return text
    return _NON_ASCII.sub(lambda run: run.group().translate(_TABLE), text)


_ODD_SPACES: Final = re.compile(r"\s{2,}|[^\S ]")
_LETTER_HYPHEN: Final = re.compile(r"(?<=[A-Za-z]) ?- ?(?=[A-Za-z])")
DIGIT_WORDS: Final = {
    "zero": "0", "oh": "0", "nought": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_DIGIT_WORD: Final = r"(?:" + "|".join(DIGIT_WORDS) + r"|\d)"
_RUN: Final = rf"\b{_DIGIT_WORD}\b(?:(?: ?[-.,/] ?| )\b{_DIGIT_WORD}\b)+"
_DIGIT_WORD_RUN: Final = re.compile(_RUN)
"""Matched on the lower-cased text: a case-sensitive pattern is several times faster."""
_DIGIT_WORD_RUN_ANY_CASE: Final = re.compile(_RUN, re.IGNORECASE)
_LETTERS: Final = re.compile(r"[A-Za-z]+")


_CARDINALS: Final = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    "hundred", "thousand", "million", "billion", "trillion",
)  # fmt: skip
_ORDINALS: Final = (
    "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
    "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
    "eighteenth", "nineteenth", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth",
    "seventieth", "eightieth", "ninetieth", "hundredth", "thousandth", "millionth",
)  # fmt: skip
NUMBER_WORDS: Final = frozenset(
    (*_CARDINALS, *(f"{word}s" for word in _CARDINALS), *_ORDINALS, "oh", "nought")
)
"""The words a number in words is made of (cardinals, their plurals and ordinals): a text with
none of them has no number in words to read, and skips the reading."""
_ODD_SPACE_MARKS: Final = ("  ", "\n", "\t", "\r", "\x0b", "\x0c")


def spell_digits(text: str, *, words: bool = True) -> str:
    """F8: odd spacing undone and number words that come in a row read digit by digit
    (``words=False``: the caller knows there are no number words)."""
    if not text.isascii() or any(mark in text for mark in _ODD_SPACE_MARKS):
        text = _ODD_SPACES.sub(" ", text)
    if " -" in text or "- " in text:
        text = _LETTER_HYPHEN.sub("-", text)
    if not words:
        return text
    lower = text.lower()
    if len(lower) != len(text):  # a letter whose lower case is longer (İ): the slow way
        return _DIGIT_WORD_RUN_ANY_CASE.sub(lambda run: _digits_of(run.group().lower()), text)
    pieces: list[str] = []
    last = 0
    for run in _DIGIT_WORD_RUN.finditer(lower):
        pieces += (text[last : run.start()], _digits_of(run.group()))
        last = run.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _digits_of(run: str) -> str:
    """A lower-case run of number words, each word as its digit."""
    return _LETTERS.sub(lambda word: DIGIT_WORDS.get(word.group(), word.group()), run)


_NUMBER_RUN: Final = re.compile(r"\d+(?:(?:, ?| ?- ?|[ ./])\d+)+")
_ONE_NUMBER: Final = re.compile(r"\d+[.,]\d+")


@dataclass(frozen=True, slots=True)
class Joined:
    """F8: a run of digit groups read as one number."""

    digits: str
    written: str
    one_by_one: bool
    """Three or more single digits: a number written digit by digit, as nobody writes a date,
    a range or a quantity."""


def joined_numbers(text: str) -> list[Joined]:
    """F8: every run of digit groups in ``text`` joined into one candidate number (not one
    inside a word or an id: ``v6.1.3``, ``QX7-1-2``)."""
    joined: list[Joined] = []
    for run in _NUMBER_RUN.finditer(text):
        start, end = run.span()
        before, after = text[start - 1 : start], text[end : end + 1]
        if before.isalnum() or before in ("_", ".", ",") or after.isalnum() or after == "_":
            continue
        written = run.group()
        if _ONE_NUMBER.fullmatch(written):
            continue  # 61.37 or 6,137: one number, read as such (firewall F1)
        groups = _DIGITS.findall(written)
        single = len(groups) >= 3 and all(len(group) == 1 for group in groups)
        joined.append(Joined("".join(groups), written, single))
    return joined


_DIGITS: Final = re.compile(r"\d+")
_SPELLED_AT_DOT: Final = re.compile(r"\b(?:at|dot)\b", re.IGNORECASE)


def unspell_at_dot(text: str) -> str:
    """F9: ``text`` without the words ``at`` and ``dot`` (an e-mail address spelled out)."""
    return _SPELLED_AT_DOT.sub(" ", text)
