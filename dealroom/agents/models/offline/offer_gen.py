"""Offer-Gen's rules: the terms the visitor's side of the conversation shows were agreed.

It reads only the context it is given (the visitor pane's lines, the rulings that crossed
there, the visitor-visible memory and the live offer's terms). A fee counts as agreed only
when a ruling settled it, or when the participant said yes to an amount the agent stated
(a counter among them); an amount that was only proposed is named as an open question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from dealroom.agents.models.offline.common import (
    _at,
    _house_currency,
    _list,
    _map,
    _money_from,
    _str,
    _strings,
)
from dealroom.agents.models.offline.offer_talk import without_shortcut
from dealroom.agents.offer_gen import (
    OPEN_DATES,
    OPEN_DELIVERABLES,
    OPEN_EXCLUSIVITY,
    OPEN_FEE,
    OPEN_PAYMENT_SCHEDULE,
    OPEN_USAGE_RIGHTS,
    OfferGenOutput,
)
from dealroom.domain.deliverables import Deliverable, parse_slug, read_deliverables
from dealroom.domain.reader import read_dates, read_schedule
from dealroom.domain.terms import Intent, Money, find_amounts, find_dates, intent_of

SHORT: Final = 120
"""Characters kept of a usage-rights or exclusivity phrase."""


@dataclass(frozen=True, slots=True)
class _Line:
    author: str
    body: str


@dataclass(frozen=True, slots=True)
class _Fee:
    money: Money
    slug: str | None
    line: str
    """The agent's words the fee was agreed on ("" for a settled ruling)."""


def offer_gen_output(context: Mapping[str, Any]) -> OfferGenOutput:
    lines = [
        _Line(_str(line.get("author")), _str(line.get("body")))
        for line in _list(context.get("transcript"))
        if isinstance(line, Mapping)
    ]
    rulings = [_map(ruling) for ruling in _list(context.get("rulings"))]
    memory = _map(context.get("memory"))
    current = _map(context.get("current_terms"))
    currency = _house_currency(memory)

    questions: list[str] = []
    fee = (
        _settled(rulings) or _accepted_counter(lines, rulings) or _accepted_amount(lines, currency)
    )
    fee_amount: str | None
    fee_currency: str | None
    if fee is not None:
        fee_amount, fee_currency = fee.money.digits(), fee.money.currency
    else:
        current_fee = _map(current.get("fee"))
        fee_amount = _str(current_fee.get("amount")) or None
        fee_currency = _str(current_fee.get("currency")) or None
    if fee_amount is None or fee_currency is None:
        fee_amount = fee_currency = None
        questions.append(OPEN_FEE)

    deliverables = _deliverables(fee, lines, memory) or _strings(current.get("deliverables"))
    if not deliverables:
        questions.append(OPEN_DELIVERABLES)
    dates = _dates(lines, _today(context)) or _strings(current.get("dates"))
    if not dates:
        questions.append(OPEN_DATES)
    usage = _phrase(lines, _USAGE) or _str(current.get("usageRights")) or None
    if usage is None:
        questions.append(OPEN_USAGE_RIGHTS)
    exclusivity = _phrase(lines, _EXCLUSIVITY) or _str(current.get("exclusivity")) or None
    if exclusivity is None:
        questions.append(OPEN_EXCLUSIVITY)
    due = _due_slice(lines) or _str(current.get("dueSlicePercent")) or None
    if due is None:
        questions.append(OPEN_PAYMENT_SCHEDULE)

    return OfferGenOutput(
        deliverables=deliverables,
        fee_amount=fee_amount,
        currency=fee_currency,
        dates=dates,
        usage_rights=usage,
        exclusivity=exclusivity,
        due_slice_percent=due,
        open_questions=questions,
    )


def _today(context: Mapping[str, Any]) -> date | None:
    try:
        return date.fromisoformat(_str(context.get("today")))
    except ValueError:
        return None


# --- the fee ---


def _ruling_fee(ruling: Mapping[str, Any]) -> _Fee | None:
    money = _money_from(ruling.get("amount"), ruling.get("currency"))
    if money is None:
        return None
    return _Fee(money, _str(ruling.get("deliverable")) or None, "")


def _settled(rulings: Sequence[Mapping[str, Any]]) -> _Fee | None:
    """The newest ruling that settled the visitor's own proposal: both sides agreed."""
    for ruling in reversed(rulings):
        if ruling.get("decision") == "settle" and (fee := _ruling_fee(ruling)) is not None:
            return fee
    return None


def _says_yes(body: str) -> bool:
    return intent_of(body) is Intent.YES and "?" not in body


def _accepted_counter(lines: Sequence[_Line], rulings: Sequence[Mapping[str, Any]]) -> _Fee | None:
    """The newest counter the agent stated in this pane and the participant then said yes to
    (without naming another amount)."""
    for ruling in reversed(rulings):
        if ruling.get("decision") != "counter" or (fee := _ruling_fee(ruling)) is None:
            continue
        money = fee.money
        stated = [
            index
            for index, line in enumerate(lines)
            if line.author == "agent"
            and money in find_amounts(line.body, default_currency=money.currency)
        ]
        if not stated:
            continue
        for line in lines[stated[-1] + 1 :]:
            if line.author != "participant":
                continue
            named = find_amounts(line.body, default_currency=money.currency)
            if any(other != money for other in named):
                break  # a new proposal: the counter was not taken
            if _says_yes(line.body):
                return _Fee(money, fee.slug, lines[stated[-1]].body)
    return None


def _accepted_amount(lines: Sequence[_Line], currency: str) -> _Fee | None:
    """The last amount the agent stated that the participant then said yes to."""
    standing: tuple[Money, str] | None = None
    agreed: _Fee | None = None
    for line in lines:
        amounts = find_amounts(line.body, default_currency=currency)
        if line.author == "agent":
            if amounts:
                standing = (amounts[-1], line.body)
            continue
        if line.author != "participant":
            continue
        if standing is not None and all(a == standing[0] for a in amounts):
            said = intent_of(line.body)
            if _says_yes(line.body):
                agreed = _Fee(standing[0], None, standing[1])
                standing = None
            elif said is Intent.NO:
                standing = None
        elif amounts:
            standing = None  # the participant proposed something else
    return agreed


# --- deliverables and dates ---


def _deliverables(fee: _Fee | None, lines: Sequence[_Line], memory: Mapping[str, Any]) -> list[str]:
    """What the agreed fee buys: the ruling's deliverable, else those named where the fee was
    agreed, else those of the newest line naming any, else the recorded proposal. Each takes
    its quantity (and platform, when the ruling names none) from the newest line naming it."""
    named: list[Deliverable] = []
    if fee is not None:
        named = [parse_slug(fee.slug)] if fee.slug else read_deliverables(fee.line)
    if not named:
        named = next(
            (found for line in reversed(lines) if (found := read_deliverables(line.body))), []
        )
    if not named and (proposals := _map(_at(memory, "deal.proposals"))):
        named = [parse_slug(str(list(proposals)[-1]))]
    said = [d for line in reversed(lines) for d in reversed(read_deliverables(line.body))]
    labels = []
    for item in named:
        same = next((d for d in said if d.kind == item.kind), None)
        if same is not None and (item.platform is None or same.platform == item.platform):
            item = Deliverable(item.kind, item.platform or same.platform, same.quantity)
        labels.append(item.label())
    return list(dict.fromkeys(labels))


def _dates(lines: Sequence[_Line], today: date | None) -> list[str]:
    """Every date in the conversation. With today known, each resolves against it (ISO days,
    windows, deadlines); else ISO when it has a year and as read without one."""
    if today is None:
        found = [mention.label() for line in lines for mention in find_dates(line.body)]
    else:
        found = [term.label() for line in lines for term in read_dates(line.body, today)]
    return list(dict.fromkeys(found))


# --- usage rights, exclusivity and the payment schedule ---

_USAGE = re.compile(r"\busage(?:\s+rights?)?\b", re.IGNORECASE)
_EXCLUSIVITY = re.compile(r"\bexclusiv\w*", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_LEAD = re.compile(r"^\s*(?::|-|—|–|=|is\b|are\b|will be\b)\s*", re.IGNORECASE)


def _sentences(lines: Sequence[_Line]) -> list[str]:
    """Every statement of the conversation, newest first; questions are not terms."""
    found = [
        part.strip()
        for line in lines
        for part in _SENTENCE.split(without_shortcut(line.body))
        if part.strip() and not part.strip().endswith("?")
    ]
    return found[::-1]


def _short(text: str) -> str:
    text = text.strip().rstrip(".!;,").strip()
    if len(text) <= SHORT:
        return text
    return text[:SHORT].rsplit(" ", 1)[0]


def _phrase(lines: Sequence[_Line], keyword: re.Pattern[str]) -> str:
    """The newest statement naming ``keyword``: what follows ``keyword:`` when it is written
    as a label, else the statement itself, short."""
    for sentence in _sentences(lines):
        match = keyword.search(sentence)
        if match is None:
            continue
        after = sentence[match.end() :]
        lead = _LEAD.match(after)
        if lead is not None and lead.end() > 0 and _short(after[lead.end() :]):
            return _short(after[lead.end() :])
        return _short(sentence)
    return ""


def _due_slice(lines: Sequence[_Line]) -> str:
    """Percent of the fee due at booking, from the newest statement of the schedule."""
    for sentence in _sentences(lines):
        found = read_schedule(sentence)
        if found is not None:
            return found
    return ""
