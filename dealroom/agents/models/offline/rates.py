"""What the host says about its own rates, read one way for the two agents that need it:
Distil records it (``host.rates.<slug>.ask``, ``host.limits.<slug>``), and the persona, which
runs beside Distil and cannot wait for it, confirms it back to the host or asks about what it
could not read (``domain.limits`` L3–L6 read the message)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from dealroom.agents.models.offline.common import _at, _map
from dealroom.domain.deliverables import Deliverable, parse_slug, read_deliverables
from dealroom.domain.limits import RateReading, StatedRate, read_host_rates
from dealroom.domain.terms import format_money

PUBLIC_WORDS: Final = re.compile(
    r"\b(?:you can (?:share|tell|mention|say)|feel free to (?:share|tell|mention)|"
    r"(?:ok|okay|fine) to (?:share|tell|mention)|tell visitors|let visitors know|visitors can "
    r"know|public(?:ly)?)\b",
    re.I,
)
"""What the host says may be shared: a public card, never a private rate."""

FLOOR_QUESTION: Final = "what's the lowest you'd take?"
ASK_QUESTION: Final = "what do you charge for one?"
CONFIRMATION: Final = "— right?"
GENERIC: Final = frozenset({"standard", "general", "default", "any"})

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def is_rate_question(line: str) -> bool:
    """Whether an agent line is this module's own question about the host's rates (an answer
    to it is a rate, never an instruction about a deal)."""
    return any(mark in line for mark in (FLOOR_QUESTION, ASK_QUESTION, CONFIRMATION))


def host_rates(
    body: str,
    memory: Mapping[str, Any],
    previous_agent: str,
    currency: str,
    discussed: str | None = None,
) -> RateReading:
    """The rates the host's ``body`` states. The deliverable under discussion is the one the
    agent's previous line asked about, else the one ``body`` names (in a sentence about what
    may be shared, say), else ``discussed`` (named earlier), else the host's one recorded rate;
    a bare amount answering the agent's floor question is the floor, one
    answering its rate question or its confirmation is the rate. Sentences saying what may be
    shared are the public card, not a private rate."""
    text = " ".join(
        s.strip() for s in _SENTENCE.split(body) if s.strip() and not PUBLIC_WORDS.search(s)
    )
    if not text:
        return RateReading()
    recorded = [str(k) for k in _map(_at(memory, "host.rates"))]
    asked = read_deliverables(previous_agent)
    shared = read_deliverables(body)  # named in a sentence about what may be shared, say
    if asked:
        deliverable: str | None = asked[-1].slug
    elif shared or discussed:
        deliverable = shared[-1].slug if shared else discussed
    else:
        deliverable = recorded[0] if len(recorded) == 1 else None
    answering = None
    if FLOOR_QUESTION in previous_agent:
        answering = "floor"
    elif ASK_QUESTION in previous_agent or CONFIRMATION in previous_agent:
        answering = "ask"
    return read_host_rates(
        text, default_currency=currency, deliverable=deliverable, answering=answering
    )


def _kind(slug: str | None) -> Deliverable | None:
    return None if slug is None or slug in GENERIC else parse_slug(slug)


def _plural(slug: str | None) -> str:
    read = _kind(slug)
    if read is None:
        return ""
    return Deliverable(read.kind, read.platform, 2).label().removeprefix("2 ")


def _noted(rate: StatedRate) -> str:
    read = _kind(rate.deliverable)
    label = f"{read.label()} " if read is not None else ""
    ask = f"your {label}rate as {format_money(rate.ask)}" if rate.ask is not None else ""
    if rate.floor is None:
        return ask
    plural = _plural(rate.deliverable)
    floor = format_money(rate.floor)
    if ask:
        return f"{ask} and your floor as {floor}"
    return f"your floor for {plural} as {floor}" if plural else f"your floor as {floor}"


def confirmation(reading: RateReading) -> str | None:
    """The line that tells the host what its agent read, or asks about what it could not:
    "I noted your reel rate as $5,000 and your floor as $4,000 — right?" / "I couldn't tell
    your floor for reels — what's the lowest you'd take?". None when the message states no
    rate. The host's own pane only: these are the host's private figures."""
    if not reading:
        return None
    noted = "; ".join(_noted(rate) for rate in reading.rates)
    question = ""
    if reading.unread_floors:
        plural = _plural(reading.unread_floors[0])
        about = f"your floor for {plural}" if plural else "your floor"
        question = f"I couldn't tell {about} — {FLOOR_QUESTION}"
    elif reading.unread_asks:
        plural = _plural(reading.unread_asks[0])
        about = f"your rate for {plural}" if plural else "your rate"
        question = f"I couldn't tell {about} — {ASK_QUESTION}"
    if noted and question:
        return f"I noted {noted}. {question}"
    if noted:
        return f"I noted {noted} {CONFIRMATION}"
    return question
