"""The private-value firewall: a leak filter for the host's KNOWN private
values, applied by code to what crosses from the host's side to a visitor.

It is not a word-overlap heuristic and it does not judge meaning. It collects the values the
host's room memory holds privately — the limits (``host.limits``, legacy
``host.rates.<slug>.floor``), the private terms (``host.private_terms``) and the distinctive
values of the rest of the host's branch outside ``host.public`` — and reports each one that a
text (or every string of a JSON value) states, however it is written:

- F1  A limit's floor matches as an amount in any written form: ``6137``, ``6,137``,
      ``$6,137``, ``6137.00``, ``6 137``, ``6.137k``, ``USD 6137``, ``6137 dollars`` and
      numbers written in words (``six thousand one hundred thirty-seven``, read by the
      ``text2num`` parser). Any currency: the number alone is the secret. Amounts inside ids
      (UUIDs) are not amounts.
- F2  Distinctive values anywhere in the host's private branch: e-mail addresses, phone
      numbers (9-15 digits, or fewer after a ``+``; matched on the national digits whatever
      the punctuation and country code) and code-like tokens (letters and digits mixed, a
      long identifier of three or more joined parts, or a letter run no word is as long as).
      E-mails and tokens match case-insensitively with separators ignored, so
      ``QX7-Orchid-58213`` is found as ``qx7_orchid_58213``.
- F3  A private term (``host.private_terms[].text``, an exclusion or other private condition)
      matches as the whole phrase, case and punctuation folded; its amounts are limits (F1)
      and its distinctive values are F2 values.
- F4  ``host.public`` is what the host said may be shared: nothing in it is private. Amounts
      the principal instructed in this room (``allowed_amounts``) are not held either: the
      principal said that figure may be used.
- F6  While a send is held for the principal, its ruling's figure (one at or under a floor,
      C5) is private too (``withheld``): the host's side sees the held send, and what it
      writes must not carry that figure out by another path (``host.public``, free text).
- F5  Keys called ``source`` (the id of the message a value was stated in) are metadata, not
      private values.
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
      already and are never joined.
- F9  E-mail addresses spelled with ``at`` and ``dot`` (``dev at zyglorb dot com``,
      ``dev [at] zyglorb [dot] com``) match as the address.
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
      band around 2027.

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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final

from dealroom.domain import normalise
from dealroom.domain.limits import LIMITS, PRIVATE_TERMS, RATES, limits_of, private_terms_of

PUBLIC: Final = "public"
SOURCE: Final = "source"
MAX_SCAN_CHARS: Final = 200_000
"""Texts are scanned up to this length; anything longer is held outright (``too_long``)."""
DEFAULT_BAND_PERCENT: Final = Decimal(5)
"""F10: an amount within this many per cent of a limit, either side, is held like the limit
(the callers' ``band_percent`` overrides it; the module docstring says why 5)."""
VISITOR_SIDE: Final = frozenset({"deal", "rulings"})
"""F10: the parts of memory on the visitor's side besides the visitors' own branches: the
shared deal (written by visitor-side writers only, memory M3) and the rulings that crossed."""
NOT_A_VISITOR_BRANCH: Final = frozenset(
    {"host", "goals", "plans", "pendingPrincipalDecisions", "offers", "sent", "deliveries"}
)
"""F10: top-level parts that are not a visitor's branch: the host's, and memory's reserved
parts (``memory.RESERVED``, a test keeps the two in step) other than the rulings."""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
_PHONE = re.compile(r"(?<![\w])\+?\d[\d\s().\-]{5,20}\d(?![\w])")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.]*[A-Za-z0-9]")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_WORDS = re.compile(r"[0-9a-z]+")
_BRANCH_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
# A number as people write it: digit groups (1,234 / 1.234 / 1 234 / 1'234), decimals, and a
# multiplier. Both groupings are tried (F1), so 6.137k and 6.137 (German 6137) both read.
_AMOUNT = re.compile(
    r"(?<![\d])(?P<n>\d{1,3}(?:[,.'\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)"
    r"(?:\s?(?P<m>k|thousand|grand|m|mn|million)\b)?",
    re.I,
)
_GROUP_MARKS = re.compile(r"[\u00a0\u202f' ]")
_CONTINENTAL = re.compile(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+,\d{1,2}")
_MULTIPLIERS: Final = {
    "k": 1_000,
    "thousand": 1_000,
    "grand": 1_000,
    "m": 1_000_000,
    "mn": 1_000_000,
    "million": 1_000_000,
}
MIN_TOKEN: Final = 6
MIN_PHONE_DIGITS: Final = 9
MIN_TERM_CHARS: Final = 8

# F10: what makes a number an amount of money, and what makes it something else.
_CODES = r"usd|eur|gbp|cad|aud|chf|nzd|sgd|sek|nok|dkk|inr|jpy|cny|hkd|mxn|brl|zar"
_CURRENCY_BEFORE = re.compile(rf"(?:[$£€¥₹]|\b(?:{_CODES}))\s?$", re.I)
_CURRENCY_AFTER = re.compile(
    rf"\s?(?:[$£€¥₹]|(?:{_CODES}|dollars?|bucks|euros?|pounds?|quid|cents?)\b)", re.I
)
_MONEY_WORD_BEFORE = re.compile(
    r"\b(?:pay|paying|paid|budget|fee|rate|price|cost|costs|charge|spend|spending|cap|capped)"
    r"\b\D{0,12}$",
    re.I,
)
_YEAR = re.compile(r"(?:19|20)\d\d")
_ID_MARK = frozenset("#/_@=&")
_DATE_OR_TIME = re.compile(
    r"(?<![\d.,])\d{1,4}([-/.])\d{1,2}\1\d{1,4}(?![\d.,]?\d)|\b\d{1,2}:\d{2}(?::\d{2})?\b"
)


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
            phrase = " ".join(_WORDS.findall(normalise.fold(text).casefold()))  # F7
            if len(phrase) >= MIN_TERM_CHARS:
                values.phrases.append((phrase, Private("term", where, text)))
            for amount in _amounts(text):
                if amount not in allowed and amount not in values.amounts:
                    values.amounts[amount] = Private("limit", where, text)
            for amount in _money_amounts(text):  # F10: a cap, a minimum written as money
                if amount not in allowed:
                    values._band(amount, Private("near_limit", where, text), band)
        host = memory.get("host")
        if isinstance(host, Mapping):
            for where, text in _strings(host, "host"):
                values._distinctive(where, normalise.fold(text))  # F7
        if values.bands:
            values.spared.update(allowed, _asks(host), _visitor_side_amounts(memory))
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
        """F2: the e-mails, phones and code-like tokens of one private string."""
        seen = {literal for literal, _ in self.literals}
        for email in _EMAIL.findall(text):
            key = _NOT_ALNUM.sub("", email.casefold())
            if key not in seen:
                seen.add(key)
                self.literals.append((key, Private("email", where, email)))
        for phone in _PHONE.findall(text):
            digits = re.sub(r"\D", "", phone)
            if (len(digits) < MIN_PHONE_DIGITS and not phone.startswith("+")) or len(digits) > 15:
                continue
            key = digits[-10:]  # the national number: matched with or without the country code
            if key not in seen:
                seen.add(key)
                self.literals.append((key, Private("phone", where, phone.strip())))
        for token in _TOKEN.findall(_EMAIL.sub(" ", text)):
            if not _code_like(token):
                continue
            key = _NOT_ALNUM.sub("", token.casefold())
            if len(key) >= MIN_TOKEN and key not in seen:
                seen.add(key)
                self.literals.append((key, Private("token", where, token)))

    def scan(self, text: str) -> list[Match]:
        """Every private value ``text`` states (F1-F10), each once."""
        if not self or not text:
            return []
        if len(text) > MAX_SCAN_CHARS:
            return [Match(Private("too_long", "", ""), text[:40])]
        found: dict[Private, Match] = {}
        plain, read, folded, tokens = _forms(text)  # F7, F8, F1 (numbers in words)
        sources = (plain,) if read == plain else (plain, read)
        mentions = [(source, hit) for source in sources for hit in _AMOUNT.finditer(source)]
        for _source, number in mentions:
            for amount in _readings(number.group("n"), number.group("m")):
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
        squeezed = _NOT_ALNUM.sub("", folded)
        digits = re.sub(r"\D", "", " ".join(_PHONE.findall(plain)))
        more: dict[str, str] = {}  # the haystacks of F8 and F9, made when a literal needs one
        for literal, private in self.literals:
            if private in found:
                continue
            if private.kind == "phone":
                hit = literal in digits or literal in _haystack(more, "phone", read, joined)
            elif private.kind == "email":  # F9
                hit = literal in squeezed or literal in _haystack(more, "email", folded, joined)
            else:
                hit = literal in squeezed or (
                    read != plain and literal in _haystack(more, "token", read, joined)
                )
            if hit:
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
            for value in _readings(hit.group("n"), hit.group("m")):
                close = [p for p in self._close_to(value) if p not in found]
                if not close:
                    continue
                if source not in blanked:
                    blanked[source] = _not_amounts(source)
                if _overlaps(hit.span(), blanked[source]) or not _is_amount(source, hit):
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
        for text in _all_strings(value):
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


def instructed_amounts(memory: Mapping[str, Any], side: str = "host") -> set[Decimal]:
    """F4: the figures ``side``'s principal instructed in this room
    (``pendingPrincipalDecisions.*.principalInstruction``)."""
    decisions = memory.get("pendingPrincipalDecisions")
    if not isinstance(decisions, Mapping):
        return set()
    figures: set[Decimal] = set()
    for entry in decisions.values():
        if not isinstance(entry, Mapping) or entry.get("side") != side:
            continue
        instruction = entry.get("principalInstruction")
        if isinstance(instruction, str):
            figures |= _amounts(instruction)
    return figures


def withheld_amounts(held_payloads: Iterable[Mapping[str, Any]]) -> set[Decimal]:
    """F6: the figures of the rulings in held sends' payloads."""
    figures: set[Decimal] = set()
    for payload in held_payloads:
        ruling = payload.get("ruling")
        amount = ruling.get("amount") if isinstance(ruling, Mapping) else None
        if isinstance(amount, str):
            figures |= _amounts(amount)
    return figures


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
    return set(_amounts(text))


# --- reading ------------------------------------------------------------------------------


def _haystack(made: dict[str, str], kind: str, text: str, joined: list[normalise.Joined]) -> str:
    """The text a ``kind`` of literal is looked for in besides the plain text, made once a
    scan: a phone's digits in words or one by one (F8), an e-mail spelled with at and dot
    (F9), a token with digits in words (F8)."""
    if kind not in made:
        if kind == "phone":
            spelled = [re.sub(r"\D", "", phone) for phone in _PHONE.findall(text)]
            made[kind] = "|".join([*spelled, *(run.digits for run in joined)])
        elif kind == "email":
            made[kind] = _NOT_ALNUM.sub("", normalise.unspell_at_dot(text))
        else:
            made[kind] = _NOT_ALNUM.sub("", text.casefold())
    return made[kind]


def _code_like(token: str) -> bool:
    letters = sum(c.isalpha() for c in token)
    digits = sum(c.isdigit() for c in token)
    if letters and digits and len(token) >= MIN_TOKEN:
        return True
    parts = [p for p in re.split(r"[_\-.]", token) if p]
    if len(parts) >= 3 and len(token) >= 12:
        return True
    return any(len(run) >= 20 for run in re.findall(r"[A-Za-z]+", token))


def _strings(host: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every string under the host branch outside ``public`` (F4, F5)."""
    for key, child in host.items():
        if key != PUBLIC:
            yield from _walk(child, f"{prefix}.{key}")


def _walk(value: object, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, child in value.items():
            if key != SOURCE:
                yield from _walk(child, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, child in enumerate(value):
            yield from _walk(child, f"{path}.{index}")


def _all_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, child in value.items():
            yield str(key)
            yield from _all_strings(child)
    elif isinstance(value, list | tuple | set | frozenset):
        for child in value:
            yield from _all_strings(child)
    elif value is not None:
        yield str(value)


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


def _forms(text: str) -> tuple[str, str, str, list[str]]:
    """``text`` as the firewall reads it: folded without ids (F7), the same with its numbers in
    words as digits (F8, F1), the first case-folded, and its words."""
    plain = _UUID.sub(" ", normalise.fold(text))
    folded = plain.casefold()
    tokens = _WORDS.findall(folded)
    numbers = normalise.NUMBER_WORDS.intersection(tokens)
    spelled = normalise.spell_digits(plain, words=not numbers.isdisjoint(normalise.DIGIT_WORDS))
    read = _words_to_digits(spelled) if numbers else spelled
    return plain, read, folded, tokens


def _read(text: str) -> tuple[str, ...]:
    """``text``'s forms to read amounts in (``_forms``)."""
    plain, read, _folded, _tokens = _forms(text)
    return (plain,) if read == plain else (plain, read)


def _mentions(sources: Iterable[str]) -> Iterator[tuple[Decimal, str]]:
    """Every reading of every number in ``sources`` (a text's forms, ``_read``)."""
    for source in sources:
        for found in _AMOUNT.finditer(source):
            for value in _readings(found.group("n"), found.group("m")):
                yield value, found.group(0)


@lru_cache(maxsize=4096)
def _readings(raw: str, multiplier: str | None) -> frozenset[Decimal]:
    """The values a written number may mean: English grouping (``6,137.50``) always;
    continental (``6.137,50``, ``6 137``) when its groups say so. Cached: the same figures
    come back in every turn of a room."""
    scale = Decimal(_MULTIPLIERS[multiplier.lower()]) if multiplier else Decimal(1)
    compact = _GROUP_MARKS.sub("", raw)
    candidates = {compact.replace(",", "")}
    if _CONTINENTAL.fullmatch(compact):
        candidates.add(compact.replace(".", "").replace(",", "."))
    readings: set[Decimal] = set()
    for candidate in candidates:
        try:
            value = Decimal(candidate) * scale
        except InvalidOperation:
            continue
        if value.is_finite() and value > 0:
            readings.add(value.normalize())
    return frozenset(readings)


@lru_cache(maxsize=1024)
def _amounts(text: str) -> frozenset[Decimal]:
    """Every amount ``text`` states (F1, F7, F8). Cached: a room's terms, asks and
    instructions are read again on every check."""
    return frozenset(value for value, _raw in _mentions(_read(text)))


@lru_cache(maxsize=4096)
def _digit_amounts(text: str) -> frozenset[Decimal]:
    """The amounts ``text`` writes in digits (F10's spared figures: no words to read)."""
    plain = normalise.fold(text)
    return frozenset(
        value
        for found in _AMOUNT.finditer(plain)
        for value in _readings(found.group("n"), found.group("m"))
    )


@lru_cache(maxsize=1024)
def _money_amounts(text: str) -> frozenset[Decimal]:
    """F10: the amounts ``text`` writes as money (a currency, a multiplier or a money word
    next to it): a private term's caps and minimums, never its years or counts."""
    money: set[Decimal] = set()
    for source in _read(text):
        for found in _AMOUNT.finditer(source):
            start, end = found.span()
            if (
                found.group("m")
                or _CURRENCY_BEFORE.search(source, max(0, start - 8), start)
                or _CURRENCY_AFTER.match(source, end)
                or _MONEY_WORD_BEFORE.search(source, max(0, start - 24), start)
            ):
                money |= _readings(found.group("n"), found.group("m"))
    return frozenset(money)


def _is_amount(source: str, found: re.Match[str]) -> bool:
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


def _not_amounts(source: str) -> list[tuple[int, int]]:
    """F10: the spans of ``source`` whose numbers are not amounts: dates, times and
    phone-length digit runs (F2 matches phones)."""
    spans = [found.span() for found in _DATE_OR_TIME.finditer(source)]
    for found in _PHONE.finditer(source):
        if sum(c.isdigit() for c in found.group()) >= MIN_PHONE_DIGITS:
            spans.append(found.span())
    return spans


def _overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    start, end = span
    return any(start < other_end and other_start < end for other_start, other_end in spans)


def _asks(host: object) -> set[Decimal]:
    """F10: the host's asks (``host.rates.<slug>.ask``): the price it states."""
    rates = host.get(RATES) if isinstance(host, Mapping) else None
    asks: set[Decimal] = set()
    if isinstance(rates, Mapping):
        for rate in rates.values():
            ask = rate.get("ask") if isinstance(rate, Mapping) else None
            if isinstance(ask, str | int):
                asks |= _digit_amounts(str(ask))
    return asks


def _visitor_side_amounts(memory: Mapping[str, Any]) -> set[Decimal]:
    """F10: the figures in the visitor's side of memory: ``deal``, the rulings that crossed
    and every visitor's own branch (what the visitor proposed, its budget)."""
    figures: set[Decimal] = set()
    for key, part in memory.items():
        if key in VISITOR_SIDE or (
            isinstance(key, str) and _BRANCH_KEY.fullmatch(key) and key not in NOT_A_VISITOR_BRANCH
        ):
            for text in _all_strings(part):
                figures |= _digit_amounts(text)
    return figures
