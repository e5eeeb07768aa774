"""The private-value firewall: a leak filter for the host's KNOWN private
values, applied by code to what crosses from the host's side to a visitor.

It is not a word-overlap heuristic and it does not judge meaning. It collects the values the
host's room memory holds privately — the limits (``host.limits``, legacy
``host.rates.<slug>.floor``), the private terms (``host.private_terms``) and the distinctive
values of the rest of the host's branch outside ``host.public`` — and reports each one that a
text (or every string of a JSON value) states, however it is written. This module holds the
firewall's one call (``check``) and ``PrivateValues``, which collects those values (with F3's
phrases and F10's bands) and scans a text for them; each rule below names the module that
implements the rest of it (that module's docstring gives the detail):

- F1  A limit's floor matches as an amount in any written form: ``6137``, ``6,137``,
      ``$6,137``, ``6137.00``, ``6 137``, ``6.137k``, ``USD 6137``, ``6137 dollars`` and
      numbers written in words (``six thousand one hundred thirty-seven``, read by the
      ``text2num`` parser). Any currency: the number alone is the secret. Amounts inside ids
      (UUIDs) are not amounts. Reading the numbers: ``domain/amounts_in_text.py``.
- F2  Distinctive values anywhere in the host's private branch: e-mail addresses, phone
      numbers (9-15 digits, or fewer after a ``+``; matched on the national digits whatever
      the punctuation and country code) and code-like tokens (letters and digits mixed, a
      long identifier of three or more joined parts, or a letter run no word is as long as).
      E-mails and tokens match case-insensitively with separators ignored, so
      ``QX7-Orchid-58213`` is found as ``qx7_orchid_58213``. ``domain/distinctive.py``.
- F3  A private term (``host.private_terms[].text``, an exclusion or other private condition)
      matches as the whole phrase, case and punctuation folded; its amounts are limits (F1)
      and its distinctive values are F2 values. Here (``PrivateValues``).
- F4  ``host.public`` is what the host said may be shared: nothing in it is private. Amounts
      the principal instructed in this room (``allowed_amounts``) are not held either: the
      principal said that figure may be used. ``domain/firewall_memory.py`` reads both.
- F6  While a send is held for the principal, its ruling's figure (one at or under a floor,
      C5) is private too (``withheld``): the host's side sees the held send, and what it
      writes must not carry that figure out by another path (``host.public``, free text).
      ``domain/firewall_memory.py`` reads the figures from the held sends.
- F5  Keys called ``source`` (the id of the message a value was stated in) are metadata, not
      private values. ``domain/firewall_memory.py``.
- F7  Every text is folded before it is read (``domain/normalise.py``): NFKC, format
      characters (zero-width spaces, joiners, soft hyphens) and combining marks dropped, every
      script's digits as ASCII digits, the Arabic separators as ``.`` and ``,``, and the common
      confusables (Cyrillic ``а`` for ``a``) as the Latin letter. ``６１３７``, ``6\u200b137``,
      ``6٫137`` and ``dеv@zyglorb.com`` are read as ``6137``, ``6137``, ``6.137`` (so 6137, F1)
      and ``dev@zyglorb.com``. The host's private strings are folded the same way.
- F8  Digits written one by one are read as one number: number words in a row read digit by
      digit (``six one three seven``, ``five five five, one two three``), odd spacing undone
      (``six  thousand one - hundred``), and digit groups separated by single spaces, hyphens,
      dots or commas joined (``6-1-3-7``, ``6, 1, 3, 7``, ``61 37``). A joined number matches a
      limit (F1) and its digits match a phone (F2). ``61.37`` and ``6,137`` are one number each
      already and are never joined. ``domain/normalise.py`` reads them; the amounts are read
      in ``domain/amounts_in_text.py``, a phone's digits looked for in ``domain/distinctive.py``.
- F9  E-mail addresses spelled with ``at`` and ``dot`` (``dev at zyglorb dot com``,
      ``dev [at] zyglorb [dot] com``) match as the address. ``domain/normalise.py`` and
      ``domain/distinctive.py``.
- F10 An amount close to a limit is held like the limit (``near_limit``): within
      ``band_percent`` (default ``DEFAULT_BAND_PERCENT``, 5%) of a floor (``host.limits``, the
      legacy floor) or of a money amount of a private term (a cap such as "travel capped at
      $1,500"), on either side. Closeness leaks a limit as surely as the figure does: a counter
      one cent or a few dollars over the floor says where the floor is. Not held, though
      close: a figure the principal instructed (F4: that exact figure only, not its
      neighbours; and when the limit itself was instructed, nothing near it), the host's asks
      (``host.rates.<slug>.ask``: the price the host states), and the figures already on the
      visitor's side of memory (``deal``, the visitors' own branches, the rulings that crossed:
      only visitor-side writers write those, memory M3, so they hold what the visitor
      proposed). An amount is any number the text states (F1, F8 digit by digit) except the
      parts of a date or a time (``2026-12-06``, ``10:30``), a year-shaped bare number (1900 to
      2099, no currency), a percentage, a number glued to letters or after ``#`` (an id), and a
      phone-length digit run (F2 covers it); a private term's number gets a band only when the
      term writes it as money (a currency or a money word), so "no shoots before 2027" puts no
      band around 2027. The bands are here; which numbers are amounts, and which a term writes
      as money, is ``domain/amounts_in_text.py``; the spared figures (the asks, the visitor's
      side) are read by ``domain/firewall_memory.py``.

      Why 5% and relative: closeness is relative (a $50 step is 5% of a $1,000 story and 0.4% of
      a 12,000 EUR video), and 5% covers the "just over the floor" leaks, from one cent to a
      few hundred dollars on a $6,000 floor, while it stays clear of a negotiation's own
      figures: the host's agent never states a figure under its settle point, which sits
      halfway between the floor and the ask unless the host sets otherwise, and asks run 25-50%
      over the floor, so the nearest figure it states unprompted is 12.5% or more over the
      floor. Only a host whose ask is within 10% of its floor sees its lower counters held for
      its yes, which is the fail-safe side. ``band_percent=0`` turns F10 off.

What it cannot do, by design: recognise a private fact the host stated in ordinary words
(those are not *distinctive*), or a value the model has re-encoded (spelled backwards, in
base64, letters for digits, a multiple of the floor, padded with more digits). Those channels
are closed elsewhere: a visitor-facing agent never sees the host's
private branch (visibility V4), a ruling crosses only as fields of a fixed shape whose
deliverable must already be known on the visitor's side and whose amount may not meet a limit
(crossing C4, C5), and the host's free text is held when it states a known value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from dealroom.domain import distinctive, normalise
from dealroom.domain.amounts_in_text import (
    AMOUNT,
    WORDS,
    forms,
    is_amount,
    money_amounts,
    not_amounts,
    overlaps,
    readings,
    stated_amounts,
)
from dealroom.domain.firewall_memory import (
    PUBLIC,
    all_strings,
    asks,
    host_strings,
    instructed_amounts,
    visitor_side_amounts,
    withheld_amounts,
)
from dealroom.domain.limits import LIMITS, PRIVATE_TERMS, limits_of, private_terms_of

__all__ = [
    "DEFAULT_BAND_PERCENT",
    "MAX_SCAN_CHARS",
    "MIN_TERM_CHARS",
    "PUBLIC",
    "Match",
    "Private",
    "PrivateValues",
    "amounts_in",
    "check",
    "describe",
    "instructed_amounts",
    "withheld_amounts",
]

MAX_SCAN_CHARS: Final = 200_000
"""Texts are scanned up to this length; anything longer is held outright (``too_long``)."""
DEFAULT_BAND_PERCENT: Final = Decimal(5)
"""F10: an amount within this many per cent of a limit, either side, is held like the limit
(the callers' ``band_percent`` overrides it; the module docstring says why 5)."""
MIN_TERM_CHARS: Final = 8
"""F3: a private term shorter than this (folded) is matched by its amounts and distinctive
values only, not as a phrase."""


@dataclass(frozen=True, slots=True)
class Private:
    """One private value: what kind, where memory holds it, and how the host stated it (the
    last is shown only in the host's own pane)."""

    kind: str
    """``limit``, ``near_limit`` (F10), ``email``, ``phone``, ``token``, ``term`` or ``held``."""
    where: str
    stated: str


@dataclass(frozen=True, slots=True)
class Match:
    private: Private
    found: str
    """The text that stated it (for the host's pane and the operator flag)."""


@dataclass(frozen=True)
class PrivateValues:
    """The host's known private values, ready to scan texts with (build with ``of``)."""

    amounts: dict[Decimal, Private] = field(default_factory=dict)
    literals: list[tuple[str, Private]] = field(default_factory=list)
    """Normalised (lower case, separators removed) emails and tokens, digits of phones."""
    phrases: list[tuple[str, Private]] = field(default_factory=list)
    bands: list[tuple[Decimal, Decimal, Private]] = field(default_factory=list)
    """F10: (low, high, the limit's ``near_limit``) for every limit not instructed."""
    spared: set[Decimal] = field(default_factory=set)
    """F10: figures no band holds: instructed ones, the asks and the visitor side's figures."""

    def __bool__(self) -> bool:
        return bool(self.amounts or self.literals or self.phrases)

    @classmethod
    def of(
        cls,
        memory: Mapping[str, Any],
        *,
        allowed_amounts: Iterable[Decimal] = (),
        withheld: Iterable[Decimal] = (),
        band_percent: Decimal | None = None,
    ) -> PrivateValues:
        """The private values of ``memory``'s host branch (F1-F10); ``band_percent`` is F10's
        band (``DEFAULT_BAND_PERCENT`` unless given; 0 turns it off)."""
        allowed = {Decimal(a).normalize() for a in allowed_amounts}
        band = DEFAULT_BAND_PERCENT if band_percent is None else Decimal(band_percent)
        values = cls()
        for amount in withheld:  # F6
            held = Decimal(amount).normalize()
            if held not in allowed:
                values.amounts[held] = Private("held", "a held send", f"{held:f}")
        for slug, limit in limits_of(memory).items():
            if limit.floor.normalize() not in allowed:
                where = f"host.{LIMITS}.{slug}"
                stated = f"{limit.floor:f} {limit.currency}"
                values.amounts[limit.floor.normalize()] = Private("limit", where, stated)
                values._band(limit.floor, Private("near_limit", where, stated), band)  # F10
        for index, text in enumerate(private_terms_of(memory)):
            where = f"host.{PRIVATE_TERMS}.{index}"
            phrase = " ".join(WORDS.findall(normalise.fold(text).casefold()))  # F7
            if len(phrase) >= MIN_TERM_CHARS:
                values.phrases.append((phrase, Private("term", where, text)))
            for amount in stated_amounts(text):
                if amount not in allowed and amount not in values.amounts:
                    values.amounts[amount] = Private("limit", where, text)
            for amount in money_amounts(text):  # F10: a cap, a minimum written as money
                if amount not in allowed:
                    values._band(amount, Private("near_limit", where, text), band)
        host = memory.get("host")
        if isinstance(host, Mapping):
            for where, text in host_strings(host, "host"):
                values._distinctive(where, normalise.fold(text))  # F7
        if values.bands:
            values.spared.update(allowed, asks(host), visitor_side_amounts(memory))
        return values

    def _band(self, limit: Decimal, private: Private, percent: Decimal) -> None:
        """F10: ``limit``'s band, ``percent`` of it either side."""
        if percent <= 0:
            return
        half = abs(limit) * percent / 100
        band = (limit - half, limit + half, private)
        if band not in self.bands:
            self.bands.append(band)

    def _distinctive(self, where: str, text: str) -> None:
        """F2: the e-mails, phones and code-like tokens of one private string, each once."""
        seen = {literal for literal, _ in self.literals}
        for kind, key, stated in distinctive.literals(text):
            if key not in seen:
                seen.add(key)
                self.literals.append((key, Private(kind, where, stated)))

    def scan(self, text: str) -> list[Match]:
        """Every private value ``text`` states (F1-F10), each once."""
        if not self or not text:
            return []
        if len(text) > MAX_SCAN_CHARS:
            return [Match(Private("too_long", "", ""), text[:40])]
        found: dict[Private, Match] = {}
        plain, read, folded, tokens = forms(text)  # F7, F8, F1 (numbers in words)
        sources = (plain,) if read == plain else (plain, read)
        mentions = [(source, hit) for source in sources for hit in AMOUNT.finditer(source)]
        for _source, number in mentions:
            for amount in readings(number.group("n"), number.group("m")):
                private = self.amounts.get(amount)
                if private is not None and private not in found:
                    found[private] = Match(private, number.group(0))
        joined = normalise.joined_numbers(read)  # F8
        for run in joined:
            private = self.amounts.get(Decimal(run.digits).normalize())
            if private is not None and private not in found:
                found[private] = Match(private, run.written)
        if self.bands:
            self._near(mentions, joined, found)  # F10
        haystacks = distinctive.Haystacks.of(plain, read, folded, joined)  # F2, F8, F9
        for literal, private in self.literals:
            if private not in found and haystacks.hold(private.kind, literal):
                found[private] = Match(private, private.stated)
        if self.phrases:
            words = " " + " ".join(tokens) + " "
            for phrase, private in self.phrases:
                if private not in found and f" {phrase} " in words:
                    found[private] = Match(private, private.stated)
        return list(found.values())

    def _near(
        self,
        mentions: list[tuple[str, re.Match[str]]],
        joined: list[normalise.Joined],
        found: dict[Private, Match],
    ) -> None:
        """F10: the limits an amount (``mentions``: (source, number) pairs) or a number written
        digit by digit is close to."""
        blanked: dict[str, list[tuple[int, int]]] = {}
        for source, hit in mentions:
            for value in readings(hit.group("n"), hit.group("m")):
                close = [p for p in self._close_to(value) if p not in found]
                if not close:
                    continue
                if source not in blanked:
                    blanked[source] = not_amounts(source)
                if overlaps(hit.span(), blanked[source]) or not is_amount(source, hit):
                    continue
                for private in close:
                    found[private] = Match(private, hit.group(0))
        for run in joined:
            if run.one_by_one:
                for private in self._close_to(Decimal(run.digits).normalize()):
                    found.setdefault(private, Match(private, run.written))

    def _close_to(self, value: Decimal) -> list[Private]:
        """F10: the limits whose band holds ``value``, unless it is spared (F4, the asks, the
        visitor's side) or matched exactly (F1, F6)."""
        if value in self.spared or value in self.amounts:
            return []
        return [private for low, high, private in self.bands if low <= value <= high]

    def scan_value(self, value: object) -> list[Match]:
        """Every private value any string of a JSON-like value states (keys included)."""
        found: dict[Private, Match] = {}
        for text in all_strings(value):
            for match in self.scan(text):
                found.setdefault(match.private, match)
        return list(found.values())


def check(
    memory: Mapping[str, Any],
    *values: object,
    allowed_amounts: Iterable[Decimal] = (),
    withheld: Iterable[Decimal] = (),
    band_percent: Decimal | None = None,
) -> list[Match]:
    """The one call for every host→visitor path: the host's private values (from the room's
    ``memory``) that any of ``values`` (texts or JSON-like values) states. Empty means the
    values may cross; otherwise hold them for the principal (or refuse a ``host.public``
    write). ``band_percent`` is F10's band (``DEFAULT_BAND_PERCENT`` unless given)."""
    private = PrivateValues.of(
        memory, allowed_amounts=allowed_amounts, withheld=withheld, band_percent=band_percent
    )
    if not private:
        return []
    found: dict[Private, Match] = {}
    for value in values:
        for match in private.scan_value(value):
            found.setdefault(match.private, match)
    return list(found.values())


def describe(matches: Iterable[Match]) -> list[str]:
    """What the matches would reveal, in words for the host's pane (private values shown:
    only the host reads this)."""
    said: list[str] = []
    for match in matches:
        private = match.private
        text = {
            "limit": f"your limit {private.stated} ({private.where})",
            "near_limit": f"a figure close to your limit {private.stated} ({private.where})",
            "email": f"the e-mail address {private.stated}",
            "phone": f"the phone number {private.stated}",
            "token": f"the private detail {private.stated}",
            "term": f'your private term "{private.stated}"',
            "held": f"the figure {private.stated} from a send you have not confirmed",
        }.get(private.kind, "a message too long to check")
        if text not in said:
            said.append(text)
    return said


def amounts_in(text: str) -> set[Decimal]:
    """Every amount ``text`` states, in any written form (F1, F7, F8)."""
    return set(stated_amounts(text))
