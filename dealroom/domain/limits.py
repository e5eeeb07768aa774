"""A host's limits as code-owned data (ARCHITECTURE "Room memory").

What a host states as a floor, minimum, "never below", budget cap or exclusion is not free
text in its branch: it is a reserved, structured part that code reads and enforces.

    host.limits.<deliverable-slug> = {"floor": "6000", "currency": "USD", "source": "<msg id>"}
    host.private_terms             = [{"text": "no alcohol brands", "source": "<msg id>"}, ...]

The ask stays where the rate card always was (``host.rates.<slug>.ask`` = ``"8000 USD"``).
Both parts are under ``host`` and so outside every visitor-side view (V4). This module only
reads and shapes them; the firewall that checks host→visitor flows against them builds on it.

Rules:
- L1  A limit's floor is a positive decimal with an ISO currency; anything else is not a
      limit (it is ignored, never guessed).
- L2  A floor recorded under the legacy ``host.rates.<slug>.floor`` (``"6000 USD"``) is still
      a limit, so documents written before L1 stay protected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from text_to_num import alpha2digit

from dealroom.domain.deliverables import read_deliverables
from dealroom.domain.terms import Money, find_amount_mentions

LIMITS: Final = "limits"
PRIVATE_TERMS: Final = "private_terms"
RATES: Final = "rates"


@dataclass(frozen=True, slots=True)
class Limit:
    """The least the host takes for one deliverable."""

    deliverable: str
    floor: Decimal
    currency: str
    source: str | None = None


def _decimal(raw: object) -> Decimal | None:
    if not isinstance(raw, str | int):
        return None
    try:
        value = Decimal(str(raw).replace(",", "").strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() and value > 0 else None


def _currency(raw: object) -> str | None:
    if isinstance(raw, str) and len(raw) == 3 and raw.isalpha():
        return raw.upper()
    return None


def _legacy(slug: str, raw: object) -> Limit | None:
    """L2: ``"6000 USD"`` under ``host.rates.<slug>.floor``."""
    if not isinstance(raw, str):
        return None
    parts = raw.split()
    if len(parts) != 2:
        return None
    amount, currency = _decimal(parts[0]), _currency(parts[1])
    if amount is None or currency is None:
        return None
    return Limit(slug, amount, currency)


def limits_of(memory: Mapping[str, Any]) -> dict[str, Limit]:
    """Every limit the host's branch holds, by deliverable slug (L1, L2)."""
    host = memory.get("host")
    if not isinstance(host, Mapping):
        return {}
    found: dict[str, Limit] = {}
    rates = host.get(RATES)
    if isinstance(rates, Mapping):
        for slug, rate in rates.items():
            if isinstance(rate, Mapping) and (limit := _legacy(str(slug), rate.get("floor"))):
                found[str(slug)] = limit
    limits = host.get(LIMITS)
    if isinstance(limits, Mapping):
        for slug, entry in limits.items():
            if not isinstance(entry, Mapping):
                continue
            floor, currency = _decimal(entry.get("floor")), _currency(entry.get("currency"))
            if floor is None or currency is None:
                continue
            source = entry.get("source")
            found[str(slug)] = Limit(
                str(slug), floor, currency, source if isinstance(source, str) else None
            )
    return found


def private_terms_of(memory: Mapping[str, Any]) -> list[str]:
    """The texts of ``host.private_terms`` (entries are ``{"text", "source"}`` or strings)."""
    host = memory.get("host")
    terms = host.get(PRIVATE_TERMS) if isinstance(host, Mapping) else None
    if not isinstance(terms, list):
        return []
    texts: list[str] = []
    for entry in terms:
        text = entry.get("text") if isinstance(entry, Mapping) else entry
        if isinstance(text, str) and text.strip():
            texts.append(text.strip())
    return texts


def limit_entry(floor: Decimal, currency: str, source: str | None) -> dict[str, str]:
    """The stored form of one limit (what a writer puts at ``host.limits.<slug>``)."""
    entry = {"floor": f"{floor:f}", "currency": currency.upper()}
    if source:
        entry["source"] = source
    return entry


def parse_limit(text: str) -> dict[str, str] | None:
    """A writer's limit (memory M12): the JSON text of ``{"floor", "currency", "source"}``,
    stored as ``limit_entry``; None unless the floor and the currency hold (L1)."""
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    if not isinstance(raw, Mapping) or set(raw) - {"floor", "currency", "source"}:
        return None
    floor, currency = _decimal(raw.get("floor")), _currency(raw.get("currency"))
    source = raw.get("source")
    if floor is None or currency is None or not isinstance(source, str | None):
        return None
    return limit_entry(floor, currency, source[:64] if source else None)


def parse_private_term(text: str) -> dict[str, str | None] | None:
    """A writer's private term (memory M12): the JSON text of ``{"text", "source"}``, or the
    term as plain text; stored as ``{"text", "source"}``."""
    stripped = text.strip()
    raw: object = stripped
    if stripped.startswith("{"):
        try:
            raw = json.loads(stripped)
        except ValueError:
            return None
    if isinstance(raw, str):
        return {"text": raw, "source": None} if raw else None
    if not isinstance(raw, Mapping) or set(raw) - {"text", "source"}:
        return None
    term, source = raw.get("text"), raw.get("source")
    if not isinstance(term, str) or not term.strip() or not isinstance(source, str | None):
        return None
    return {"text": term.strip(), "source": source[:64] if source else None}


# --- what a host says: its ask and floor, read from everyday phrasing ---------------------------
#
# Rules (cited by the offline engine's Distil and its home-room confirmation):
# - L3  Amounts are read by the terms reader (``find_amount_mentions``) after number words are
#       turned into digits by ``text2num`` ("five thousand USD" → "5000 USD"); "5 k" is "5k". A
#       bare number ("floor 4000", "reel 5000") is an amount when a floor or rate word, or a
#       deliverable, leads to it in its clause. It takes the currency the same message states
#       for another amount, else the house currency.
# - L4  An amount is a floor when a floor phrase leads to it in its clause ("don't go under",
#       "won't accept less than", "as low as", "minimum", "floor", …) or directly follows it
#       ("4k is my floor", "$4,000 minimum"); otherwise an ask when a rate word leads to it or a
#       deliverable is named (in its clause, or earlier in the message), or when the message
#       states a floor. An ask at or under the floor it comes with is no ask.
# - L5  A clause holds one deliverable's terms: its own deliverable, else the one named before it
#       in the message, else the one the caller says is being discussed.
# - L6  A floor phrase with no floor read for it (and not about days, posts or percents), or a
#       rate word with a deliverable and no amount at all, is *unread*: the caller asks rather
#       than guessing or dropping it. Questions are not rules.

_CLAUSE = re.compile(
    r"[.!?;](?=\s|$)\s*|,\s+|\s+[—–-]+\s+|\s*\n+\s*|\s+(?:and|but|though|while)\s+"
)
FLOOR_PHRASES: Final = re.compile(
    r"\b(?:(?:never|don'?t|do not|won'?t|will not|wouldn'?t|would not|can'?t|cannot|not)\s+"
    r"(?:ever\s+)?(?:go\s+|take\s+|accept\s+|do\s+(?:it\s+)?|settle\s+(?:for\s+)?|work\s+(?:for\s+)?)?"
    r"(?:anything\s+)?(?:below|under|lower than|less than)|no (?:less|lower) than|"
    r"nothing (?:below|under|less than|lower than)|(?:absolute\s+|bare\s+)?minimum|min\b|floor|"
    r"at (?:the )?(?:very )?least|lowest|bottom line|rock bottom|walk[- ]?away|"
    r"(?:go|come|drop|come down)\s+(?:as low as|down to)|as low as|no lower)\b",
    re.I,
)
_FLOOR_AFTER = re.compile(
    r"^\s*(?:is|as|would be|being)?\s*(?:my|the|our|an?|your)?\s*(?:absolute\s+|bare\s+)?"
    r"(?:floor|minimum|min\b|lowest|bottom line|rock bottom|walk[- ]?away|"
    r"at (?:the )?(?:very )?least)",
    re.I,
)
RATE_WORDS: Final = re.compile(
    r"\b(?:rates?|rate card|fees?|price|pricing|charges?|charging|ask|asking|costs?|quote|"
    r"usual|usually|standard|each|per|apiece)\b",
    re.I,
)
_NOT_MONEY = re.compile(
    r"^\s*(?:%|percent|per ?cent|days?|weeks?|months?|hours?|years?|posts?|reels?|stor(?:y|ies)|"
    r"videos?|followers?|views?|words?|minutes?|mins?|seconds?|notice|revisions?|times?)\b",
    re.I,
)
_BARE = re.compile(
    r"(?<![\w.,$£€/-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s?(k)\b)?(?![\w/%-])", re.I
)
_EACH = re.compile(r"\b(?:each|per|apiece|a piece|a pop)\b", re.I)
_FRACTION = re.compile(r"\b(?:half|quarter|third)s?\b", re.I)


@dataclass(frozen=True, slots=True)
class StatedRate:
    """One deliverable's terms as the host stated them (``deliverable`` None: none named)."""

    deliverable: str | None
    ask: Money | None
    floor: Money | None


@dataclass(frozen=True, slots=True)
class RateReading:
    """What a host's message says about its rates (L3–L6)."""

    rates: tuple[StatedRate, ...] = ()
    unread_floors: tuple[str | None, ...] = ()
    """Deliverables whose floor was spoken of but not read (L6)."""
    unread_asks: tuple[str | None, ...] = ()
    """Deliverables whose rate was spoken of with no amount at all (L6)."""

    @property
    def floors(self) -> bool:
        return any(rate.floor is not None for rate in self.rates)

    def __bool__(self) -> bool:
        return bool(self.rates or self.unread_floors or self.unread_asks)


@dataclass(frozen=True, slots=True)
class _Amount:
    money: Money
    start: int
    end: int
    explicit: bool


def _amounts(
    clause: str, default_currency: str, accept_bare: Callable[[int], bool]
) -> list[_Amount]:
    """L3: the terms reader's amounts, and bare numbers where ``accept_bare`` says so."""
    found: list[_Amount] = []
    marked = {m.start: m for m in find_amount_mentions(clause, default_currency="XXX")}
    for mention in find_amount_mentions(clause, default_currency=default_currency):
        implicit = marked.get(mention.start)
        explicit = implicit is None or implicit.money.currency != "XXX"
        found.append(_Amount(mention.money, mention.start, mention.end, explicit))
    taken = [(a.start, a.end) for a in found]
    for match in _BARE.finditer(clause):
        if any(s <= match.start() < e or match.start() <= s < match.end() for s, e in taken):
            continue
        if _NOT_MONEY.match(clause[match.end() :]) or not accept_bare(match.start()):
            continue
        try:
            value = Decimal(match.group(1).replace(",", ""))
        except InvalidOperation:
            continue
        if match.group(2):
            value *= 1000
        if value < 50:
            continue  # a count, a day, a quantity: no fee is written this way
        value = value.quantize(Decimal(1)) if value == value.to_integral_value() else value
        found.append(_Amount(Money(value, default_currency), match.start(), match.end(), False))
    return sorted(found, key=lambda a: a.start)


def read_host_rates(
    text: str,
    *,
    default_currency: str = "USD",
    deliverable: str | None = None,
    answering: str | None = None,
) -> RateReading:
    """The asks and floors a host's message states (L3–L6). ``deliverable`` is the one under
    discussion when the message names none; ``answering`` is ``"floor"`` or ``"ask"`` when the
    message answers a question about that figure (a bare amount is then that figure)."""
    text = text.replace("\u2019", "'")
    if re.search(r"[a-z]", text, re.I):
        text = alpha2digit(text, "en", threshold=0)
    text = re.sub(r"(\d)\s+k\b", r"\1k", text, flags=re.I)
    clauses = [c for c in _CLAUSE.split(text) if c and c.strip()]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    questions = [s for s in sentences if "?" in s]
    currency = default_currency
    for mention in find_amount_mentions(text, default_currency="XXX"):
        if mention.money.currency != "XXX":
            currency = mention.money.currency  # L3: the message's own currency
            break
    named_any = bool(read_deliverables(text))
    states_floor = bool(FLOOR_PHRASES.search(text)) or answering == "floor"
    slug = deliverable
    asks: dict[str | None, Money] = {}
    floors: dict[str | None, Money] = {}
    order: list[str | None] = []
    floor_talk: list[str | None] = []
    rate_talk: list[str | None] = []
    for clause in clauses:
        if any(clause.strip() in q for q in questions):
            continue  # L6: a question is not a rule
        named = read_deliverables(clause)
        if named:
            slug = named[-1].slug
        lead_cue = FLOOR_PHRASES.search(clause) or RATE_WORDS.search(clause)

        def bare_ok(start: int, clause: str = clause, named: bool = bool(named)) -> bool:
            lead = clause[:start]
            if _FRACTION.search(lead):
                return False  # "four and a half thousand" is not read digit by digit
            cued = FLOOR_PHRASES.search(lead) or RATE_WORDS.search(lead)
            # an answer to a question about the figure is short: "4000", "no, 4,500"
            short = answering is not None and len(re.findall(r"[a-z]+", clause, re.I)) <= 4
            return bool(cued or named or short)

        amounts = _amounts(clause, currency, bare_ok) if lead_cue or named or answering else []
        amounts = amounts or _amounts(clause, currency, lambda _s: False)
        since = 0
        floor_here = False
        for index, amount in enumerate(amounts):
            money = amount.money
            if not amount.explicit:
                money = Money(money.amount, currency)
            if named and named[-1].quantity > 1 and not _EACH.search(clause):
                # "2 reels for 9000" is 4,500 a reel: rates are per unit
                money = Money(money.amount / named[-1].quantity, money.currency)
            lead = clause[since : amount.start]
            following = amounts[index + 1].start if index + 1 < len(amounts) else len(clause)
            after = clause[amount.end : following]
            since = amount.end
            if slug not in order:
                order.append(slug)
            if FLOOR_PHRASES.search(lead) or _FLOOR_AFTER.match(after):
                floors.setdefault(slug, money)  # L4
                floor_here = True
            elif (
                RATE_WORDS.search(lead)
                or RATE_WORDS.match(after.strip())
                or named_any
                or answering is not None
                or states_floor
            ):
                if answering == "floor" and not RATE_WORDS.search(lead):
                    floors.setdefault(slug, money)
                    floor_here = True
                else:
                    asks.setdefault(slug, money)  # L4
        cue = FLOOR_PHRASES.search(clause)
        if (
            cue is not None
            and not floor_here
            and not _NOT_MONEY.match(re.sub(r"^\s*\d[\d,.]*\s*", "", clause[cue.end() :]))
        ):
            floor_talk.append(slug)
        if not amounts and (named or slug is not None) and RATE_WORDS.search(clause):
            rate_talk.append(slug)
    rates: list[StatedRate] = []
    for key in order:
        ask, floor = asks.get(key), floors.get(key)
        if (
            ask is not None
            and floor is not None
            and (ask.currency != floor.currency or ask.amount <= floor.amount)
        ):
            ask = None  # L4: an ask is above the floor it comes with
        if ask is not None or floor is not None:
            rates.append(StatedRate(key, ask, floor))
    unread_floors = tuple(dict.fromkeys(k for k in floor_talk if k not in floors))
    unread_asks = tuple(dict.fromkeys(k for k in rate_talk if k not in asks and k not in floors))
    return RateReading(tuple(rates), unread_floors, unread_asks)
