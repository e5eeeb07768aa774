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

What it cannot do, by design: recognise a private fact the host stated in ordinary words
(those are not *distinctive*), or a value the model has re-encoded (spelled backwards, in
base64). Those channels are closed elsewhere: a visitor-facing agent never sees the host's
private branch (visibility V4), a ruling crosses only as fields of a fixed shape whose
deliverable must already be known on the visitor's side and whose amount may not meet a limit
(crossing C4, C5), and the host's free text is held when it states a known value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from dealroom.domain.limits import LIMITS, PRIVATE_TERMS, limits_of, private_terms_of

PUBLIC: Final = "public"
SOURCE: Final = "source"
MAX_SCAN_CHARS: Final = 200_000
"""Texts are scanned up to this length; anything longer is held outright (``too_long``)."""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
_PHONE = re.compile(r"(?<![\w])\+?\d[\d\s().\-]{5,20}\d(?![\w])")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.]*[A-Za-z0-9]")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_WORDS = re.compile(r"[0-9a-z]+")
# A number as people write it: digit groups (1,234 / 1.234 / 1 234 / 1'234), decimals, and a
# multiplier. Both groupings are tried (F1), so 6.137k and 6.137 (German 6137) both read.
_AMOUNT = re.compile(
    r"(?<![\d])(?P<n>\d{1,3}(?:[,.'\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)"
    r"(?:\s?(?P<m>k|thousand|grand|m|mn|million)\b)?",
    re.I,
)
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


@dataclass(frozen=True, slots=True)
class Private:
    """One private value: what kind, where memory holds it, and how the host stated it (the
    last is shown only in the host's own pane)."""

    kind: str
    """``limit``, ``email``, ``phone``, ``token`` or ``term``."""
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

    def __bool__(self) -> bool:
        return bool(self.amounts or self.literals or self.phrases)

    @classmethod
    def of(
        cls,
        memory: Mapping[str, Any],
        *,
        allowed_amounts: Iterable[Decimal] = (),
        withheld: Iterable[Decimal] = (),
    ) -> PrivateValues:
        """The private values of ``memory``'s host branch (F1-F6)."""
        allowed = {Decimal(a).normalize() for a in allowed_amounts}
        values = cls()
        for amount in withheld:  # F6
            held = Decimal(amount).normalize()
            if held not in allowed:
                values.amounts[held] = Private("held", "a held send", f"{held:f}")
        for slug, limit in limits_of(memory).items():
            if limit.floor.normalize() not in allowed:
                where = f"host.{LIMITS}.{slug}"
                values.amounts[limit.floor.normalize()] = Private(
                    "limit", where, f"{limit.floor:f} {limit.currency}"
                )
        for index, text in enumerate(private_terms_of(memory)):
            where = f"host.{PRIVATE_TERMS}.{index}"
            phrase = " ".join(_WORDS.findall(text.casefold()))
            if len(phrase) >= MIN_TERM_CHARS:
                values.phrases.append((phrase, Private("term", where, text)))
            for amount in _amounts(text):
                if amount not in allowed and amount not in values.amounts:
                    values.amounts[amount] = Private("limit", where, text)
        host = memory.get("host")
        if isinstance(host, Mapping):
            for where, text in _strings(host, "host"):
                values._distinctive(where, text)
        return values

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
        """Every private value ``text`` states (F1-F3), each once."""
        if not self or not text:
            return []
        if len(text) > MAX_SCAN_CHARS:
            return [Match(Private("too_long", "", ""), text[:40])]
        found: dict[Private, Match] = {}
        plain = _UUID.sub(" ", text)
        for amount, raw in _mentions(plain):
            private = self.amounts.get(amount)
            if private is not None and private not in found:
                found[private] = Match(private, raw)
        folded = plain.casefold()
        squeezed = _NOT_ALNUM.sub("", folded)
        digits = re.sub(r"\D", "", " ".join(_PHONE.findall(plain)))
        for literal, private in self.literals:
            haystack = digits if private.kind == "phone" else squeezed
            if private not in found and literal in haystack:
                found[private] = Match(private, private.stated)
        if self.phrases:
            words = " " + " ".join(_WORDS.findall(folded)) + " "
            for phrase, private in self.phrases:
                if private not in found and f" {phrase} " in words:
                    found[private] = Match(private, private.stated)
        return list(found.values())

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
) -> list[Match]:
    """The one call for every host→visitor path: the host's private values (from the room's
    ``memory``) that any of ``values`` (texts or JSON-like values) states. Empty means the
    values may cross; otherwise hold them for the principal (or refuse a ``host.public``
    write)."""
    private = PrivateValues.of(memory, allowed_amounts=allowed_amounts, withheld=withheld)
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
    """Every amount ``text`` states, in any written form (F1)."""
    return _amounts(text)


# --- reading ------------------------------------------------------------------------------


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


def _mentions(text: str) -> Iterator[tuple[Decimal, str]]:
    """Every reading of every number in ``text`` (and its words-as-digits form)."""
    converted = _words_to_digits(text)
    sources = (text,) if converted == text else (text, converted)
    for source in sources:
        for found in _AMOUNT.finditer(source):
            for value in _readings(found.group("n"), found.group("m")):
                yield value, found.group(0)


def _readings(raw: str, multiplier: str | None) -> set[Decimal]:
    """The values a written number may mean: English grouping (``6,137.50``) always;
    continental (``6.137,50``, ``6 137``) when its groups say so."""
    scale = Decimal(_MULTIPLIERS[multiplier.lower()]) if multiplier else Decimal(1)
    compact = re.sub(r"[\u00a0\u202f' ]", "", raw)
    candidates = {compact.replace(",", "")}
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+,\d{1,2}", compact):
        candidates.add(compact.replace(".", "").replace(",", "."))
    readings: set[Decimal] = set()
    for candidate in candidates:
        try:
            value = Decimal(candidate) * scale
        except InvalidOperation:
            continue
        if value.is_finite() and value > 0:
            readings.add(value.normalize())
    return readings


def _amounts(text: str) -> set[Decimal]:
    return {value for value, _raw in _mentions(_UUID.sub(" ", text))}
