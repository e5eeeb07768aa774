"""Provenance: "the host said so", checked by code.

A model writing memory can claim anything in the principal's name: a public note, an
instruction naming the floor, a lower floor. Those claims change what may cross to a visitor,
so code accepts one only with a pointer to a message the principal wrote (never a relay, never
an agent's line) that states it. Numbered rules, cited by the code and tests that depend on them:

- P1  A value stated by a message: every amount the value states (any written form, the
      firewall's F1/F8) is stated by the message, every distinctive value (e-mail, phone,
      code-like token: F2, F9) is in it, and every word of three or more letters of the value
      appears in the message, folded (F7), bar a few joining words (``JOINING``) and ISO
      currency codes (``USD``: how code writes an amount the message states). So a model's
      paraphrase ("Zyglorb-type companies are a no for them") has no source, while the host's
      own sentence, cut down, does.
- P2  A public value (``host.public``, a durable ``public`` note) is accepted only from a
      principal message that states it (P1) and says it may be shared (``SHARING``: "share",
      "public", "quote", "tell brands", "rate card", ...). A writer with no such message cannot
      publish.
- P3  A principal instruction is accepted only when every figure it names is stated by a
      principal message of the pane (amounts only: an instruction's figures are what the
      firewall spares, F4). An instruction naming no figure spares nothing and needs none.
- P4  A writer cannot lower a limit or switch a check off on its own: setting a floor below
      the one held (or in another currency), removing a limit, or removing the private terms is
      accepted only when a principal message states the new floor (a set) or the limit's
      floor / the terms' words (a removal).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from dealroom.domain import distinctive, normalise
from dealroom.domain.amounts_in_text import forms, stated_amounts

JOINING: Final = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "from",
        "per",
        "each",
        "are",
        "is",
        "was",
        "our",
        "your",
        "their",
        "they",
        "them",
        "any",
        "all",
        "can",
        "will",
        "may",
        "not",
        "but",
        "that",
        "this",
        "has",
        "have",
        "who",
        "its",
        "via",
        "also",
        "one",
        "only",
    }
)
"""P1: words a cut-down or reordered statement may add without changing what it states."""
SHARING: Final = re.compile(
    r"\b(?:share|shareable|sharing|public|publicly|publish|quote|advertise|rate card|"
    r"tell (?:them|brands|anyone|everyone|visitors)|let (?:them|brands|anyone) know|"
    r"you (?:can|may) (?:say|mention|tell|share|quote)|feel free|ok to (?:say|share|tell))\b",
    re.I,
)
"""P2: how a principal says a value may be shared."""
_WORD: Final = re.compile(r"[^\W\d_]{3,}")
_CODE: Final = re.compile(r"\b[A-Z]{3}\b")


@dataclass(frozen=True, slots=True)
class Said:
    """One message the principal wrote in the pane (not a relay, not an agent's line)."""

    id: str
    text: str


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(normalise.fold(text))}


def states(message: str, value: str) -> bool:
    """P1: ``message`` states ``value`` (its amounts, distinctive values and words)."""
    if not value.strip():
        return False
    if not stated_amounts(value) <= stated_amounts(message):
        return False
    plain, read, folded, _tokens = forms(message)
    haystack = distinctive.Haystacks.of(plain, read, folded, normalise.joined_numbers(read))
    for kind, key, _stated in distinctive.literals(normalise.fold(value)):
        if not haystack.hold(kind, key):
            return False
    # An ISO currency code beside an amount the message states is how code writes money.
    return _words(_CODE.sub(" ", value)) - JOINING <= _words(message)


def source_of(value: str, said: Iterable[Said], *, public: bool = False) -> str | None:
    """P1, P2: the id of the principal's message that states ``value`` (and, for a ``public``
    value, says it may be shared), or None: the value has no provenance."""
    for message in said:
        if states(message.text, value) and (not public or SHARING.search(message.text)):
            return message.id
    return None


def instruction_source(instruction: str, said: Sequence[Said]) -> str | None:
    """P3: the principal message stating every figure ``instruction`` names; "" when it names
    none (nothing to prove); None when a figure has no source."""
    figures = stated_amounts(instruction)
    if not figures:
        return ""
    for message in said:
        if figures <= stated_amounts(message.text):
            return message.id
    return None


def figure_source(figure: str, said: Sequence[Said]) -> str | None:
    """P4: the principal message stating ``figure`` (a floor), or None."""
    wanted = stated_amounts(figure)
    if not wanted:
        return None
    return next((m.id for m in said if wanted <= stated_amounts(m.text)), None)
