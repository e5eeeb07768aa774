"""Does a host-side text carry one of the host's private values? (issue 12: the Guard's
audit of host-side free text that crossed without a ruling, and the check on its own sends.)

A minimal stand-in for the firewall (issue 10 builds ``domain/firewall.py``): every caller
goes through ``private_values_in``, so swapping in the firewall is one line.

- LK1 A text carries a limit when it states the limit's floor amount in its currency (any
      form ``find_amounts`` reads: ``$6,000``, ``6k USD``, ``6000 USD``).
- LK2 A text carries a private term when it contains the term's text (case-insensitive).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dealroom.domain.limits import limits_of, private_terms_of
from dealroom.domain.terms import find_amounts


def private_values_in(text: str, memory: Mapping[str, Any]) -> list[str]:
    """Which private values ``text`` carries, described for operators (never for an agent)."""
    found: list[str] = []
    limits = limits_of(memory)
    if limits:
        stated = {(m.amount, m.currency) for m in find_amounts(text)}
        for slug, limit in sorted(limits.items()):
            if (limit.floor, limit.currency) in stated:  # LK1
                found.append(f"the floor of {slug}")
    lowered = text.lower()
    for term in private_terms_of(memory):
        if term.lower() in lowered:  # LK2
            found.append("a private term")
    return found
