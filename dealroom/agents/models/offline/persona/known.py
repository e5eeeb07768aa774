"""What the visitor's pane knows: the host's public card, the deliverable, the date, the
counter standing here. Read only from the visitor-visible context."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from dealroom.agents.models.offline.common import (
    _at,
    _humanise,
    _leaves,
    _map,
    _money_from,
    _overlaps,
    _str,
    _words,
)
from dealroom.agents.models.offline.persona.turn import Turn, last_dispatch, pane_rulings
from dealroom.domain.deliverables import Deliverable, parse_slug, read_deliverables
from dealroom.domain.reader import read_dates
from dealroom.domain.terms import (
    DateMention,
    Money,
    deliverable_label,
    find_amount_mentions,
    find_amounts,
    find_dates,
    find_deliverables,
)

_PRICE_WORDS = re.compile(r"\b(?:rates?|price|pricing|cost|charge|fee|much|budget)\b", re.I)
_OFFER_WORDS = re.compile(
    r"\bwhat (?:do|can|does|would) (?:you|she|he|they) (?:deliver|do|offer|make|create)\b|"
    r"\b(?:deliverables|services|formats|what kind of (?:content|posts?|work))\b",
    re.I,
)
"""A question about what the host does: the public notes answer it."""


def public_items(memory: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the host said may be shared, as (section label, humanised text)."""
    public = _at(memory, "host.public")
    items: list[tuple[str, str]] = []
    for path, text in _leaves(public):
        label = deliverable_label(path.split(".")[-1]) if path else "note"
        items.append((label, _humanise(text)))
    return items


def public_answer(turn: Turn, question: str) -> str | None:
    """An answer from ``host.public`` alone, when something there matches the question."""
    items = public_items(turn.memory)
    if not items:
        return None
    words = _words(question) | set(find_deliverables(question))
    pricing = bool(_PRICE_WORDS.search(question)) or bool(find_deliverables(question))
    offering = bool(_OFFER_WORDS.search(question))
    chosen = [
        (label, text)
        for label, text in items
        if _overlaps(words, _words(f"{label} {text}").union(find_deliverables(text)))
        or (pricing and ("rate" in label or find_amounts(text)))
        or (offering and not find_amounts(text))
    ]
    if not chosen:
        return None
    by_label: dict[str, list[str]] = {}
    for label, text in chosen:
        by_label.setdefault(label, []).append(text)
    parts = [f"{turn.host}'s {label}: {'; '.join(texts)}" for label, texts in by_label.items()]
    parts = parts[:2]  # with the budget question, at most three sentences
    return ". ".join(parts) + "."


def known_deliverable(turn: Turn) -> Deliverable | None:
    """What the visitor is after: this message, then earlier lines of the session, then the
    deal as recorded, then our own plan, then the last ruling that crossed here."""
    for line in [turn.body, *reversed(turn.participant_lines())]:
        named = read_deliverables(line)
        if named:
            return named[-1]
    proposals = _map(_at(turn.memory, "deal.proposals"))
    slugs = [str(key) for key in proposals if key != "general"]
    if slugs:
        read = parse_slug(slugs[-1])
        count = _str(_map(proposals[slugs[-1]]).get("quantity"))
        return Deliverable(read.kind, read.platform, int(count) if count.isdigit() else 1)
    if turn.plan.deliverable:
        read = parse_slug(turn.plan.deliverable)
        return Deliverable(read.kind, read.platform, max(turn.plan.quantity, 1))
    rulings = pane_rulings(turn)
    if rulings and (slug := _str(_map(rulings[-1]).get("deliverable"))):
        return parse_slug(slug)
    return None


def unit_priced(text: str) -> bool:
    """``$7,000 per post`` / ``$7k each``: the amount is for one of them."""
    mentions = find_amount_mentions(text)
    if not mentions:
        return False
    after = text[mentions[-1].end : mentions[-1].end + 20]
    return bool(_PER_UNIT.match(after))


_PER_UNIT = re.compile(r"^\s*(?:per\b|each\b|apiece\b|a (?:post|reel|story|video)\b|/)", re.I)
_ANY_DAY = date(2000, 1, 1)
"""Whether a line names a date does not depend on today (only what it resolves to does)."""


def known_date(turn: Turn) -> DateMention | str | None:
    """The date the visitor named last: a calendar date as written, else for a
    window or relative day ``""`` (known, but resolved only by the written offer), else what
    the deal recorded."""
    for line in [turn.body, *reversed(turn.participant_lines())]:
        dates = find_dates(line)
        if dates:
            return dates[-1]
        if read_dates(line, _ANY_DAY):
            return ""
    recorded = [text for _path, text in _leaves(_at(turn.memory, "deal.dates"))]
    return recorded[-1] if recorded else None


def standing_counter(turn: Turn) -> tuple[Money, str | None] | None:
    """The host's counter standing in this pane: the last ruling that crossed here, if it was
    a counter, else the plan's."""
    rulings = pane_rulings(turn)
    if rulings and turn.plan.seen_ruling == last_dispatch(turn):
        return None  # the visitor has proposed since the last ruling crossed here
    if rulings:
        last = _map(rulings[-1])
        if last.get("decision") != "counter":
            return None
        money = _money_from(last.get("amount"), last.get("currency"))
        return (money, _str(last.get("deliverable")) or None) if money else None
    if turn.plan.counter is not None:
        return turn.plan.counter, turn.plan.deliverable or None
    return None
