"""Open questions that cross with a ruling: the missing terms, typed (seed 000: missing terms
go as open questions rather than holding the message back).

A host-side send's questions are written by a model with the host's private rules in view, so
like the ruling itself (crossing C1/C2) they cross only as typed data, worded by code from the
recipient's side. Numbered rules, cited by the code and tests that depend on them:

- OQ1 A question crosses only as terms of the offer (``OpenTerm``): each of the host side's
      questions is read for the terms it asks about, and one naming none is dropped. The terms
      go in the table's order, each once, so neither the wording, the order nor repetition of
      the model's text crosses: at most which of the eight terms are open.
- OQ2 What the recipient's agent reads is code's question for each term (``QUESTIONS``),
      asked from the recipient's side; it words it in its own voice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Final


class OpenTerm(StrEnum):
    """A term of the written offer that may still be missing."""

    DELIVERABLE = "deliverable"
    QUANTITY = "quantity"
    DATES = "dates"
    FEE = "fee"
    CURRENCY = "currency"
    USAGE_RIGHTS = "usage_rights"
    EXCLUSIVITY = "exclusivity"
    PAYMENT_SCHEDULE = "payment_schedule"


QUESTIONS: Final[dict[OpenTerm, str]] = {
    OpenTerm.DELIVERABLE: "Which deliverable would you like?",
    OpenTerm.QUANTITY: "How many would you like?",
    OpenTerm.DATES: "Which dates do you have in mind?",
    OpenTerm.FEE: "What budget do you have in mind?",
    OpenTerm.CURRENCY: "Which currency will you pay in?",
    OpenTerm.USAGE_RIGHTS: "What usage rights do you need, and for how long?",
    OpenTerm.EXCLUSIVITY: "Do you need any exclusivity, and for how long?",
    OpenTerm.PAYMENT_SCHEDULE: "How much of the fee would you pay at booking?",
}
"""OQ2: each term's question, asked of the recipient."""
_NAMES: Final = frozenset(term.value for term in OpenTerm)

_READS: Final[tuple[tuple[OpenTerm, re.Pattern[str]], ...]] = (
    (
        OpenTerm.PAYMENT_SCHEDULE,
        re.compile(r"\b(?:payment schedule|upfront|deposit|due at booking|instal?ments?)\b"),
    ),
    (OpenTerm.USAGE_RIGHTS, re.compile(r"\b(?:usage|rights|licen[cs]e|licensing|whitelisting)\b")),
    (OpenTerm.EXCLUSIVITY, re.compile(r"\bexclusiv")),
    (OpenTerm.CURRENCY, re.compile(r"\bcurrenc")),
    (OpenTerm.QUANTITY, re.compile(r"\b(?:how many|quantity|number of)\b")),
    (
        OpenTerm.DATES,
        re.compile(r"\b(?:dates?|when|week|month|deadline|timeline|schedule|go[- ]live|launch)\b"),
    ),
    (OpenTerm.FEE, re.compile(r"\b(?:budget|fee|price|how much|amount|rate)\b")),
    (
        OpenTerm.DELIVERABLE,
        re.compile(r"\b(?:deliverables?|which (?:post|video|content|platform|format)|what kind)\b"),
    ),
)


def terms_of(question: str) -> set[OpenTerm]:
    """OQ1: the terms ``question`` asks about (none when it names no term of the table)."""
    text = question.casefold()
    found = {term for term, pattern in _READS if pattern.search(text)}
    if OpenTerm.PAYMENT_SCHEDULE in found:
        found.discard(OpenTerm.FEE)  # "how much of the fee is due upfront" asks the schedule
        found.discard(OpenTerm.DATES)  # "schedule" is its word too
    return found


def typed(questions: Iterable[str]) -> tuple[OpenTerm, ...]:
    """OQ1: the terms ``questions`` ask about (a term's own name is read as that term), in the
    table's order, each once."""
    wanted: set[OpenTerm] = set()
    for question in questions:
        if question in _NAMES:
            wanted.add(OpenTerm(question))
        else:
            wanted |= terms_of(question)
    return tuple(term for term in OpenTerm if term in wanted)


def worded(terms: Iterable[OpenTerm]) -> list[str]:
    """OQ2: code's question for each term, from the recipient's side."""
    return [QUESTIONS[term] for term in terms]


def crossing(questions: Iterable[str]) -> dict[str, list[str]]:
    """OQ1/OQ2: what a send from the host's pane carries of its questions, whoever wrote them
    (the persona or the Guard): the typed terms and code's words for them, never the text."""
    terms = typed(questions)
    return {"open_terms": [term.value for term in terms], "open_questions": worded(terms)}
