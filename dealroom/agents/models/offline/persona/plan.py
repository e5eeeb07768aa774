"""The offline persona's plan: what one pane's agent carries from turn to turn, typed.

It is stored as the persona's ``plan`` string (``key=value; key=value``, keys sorted, empty
values left out) so a stored plan stays readable by people and by every engine version; the
typed form is what the rules work with.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Self

from dealroom.domain.terms import Money, money_code, parse_money

_MONEY = frozenset(
    {"proposal", "counter", "last_counter", "offered", "settled", "agreed", "pending"}
)
_FLAGS = frozenset({"pending_change", "pending_hold"})
_KEYS = {"with_": "with"}
"""Field names that differ from their stored key (``with`` is a Python keyword)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """One pane's state. Money fields are amounts in the currency they were said in."""

    with_: str = ""
    """Host pane: the participant key whose proposal is being ruled on."""
    deliverable: str = ""
    """The deliverable slug under discussion."""
    proposal: Money | None = None
    """Visitor pane: the visitor's last proposal."""
    counter: Money | None = None
    """Visitor pane: the host's counter standing here (until the visitor answers it)."""
    last_counter: Money | None = None
    """Host pane: our last counter for ``deliverable``."""
    counters: int = 0
    """Host pane: how many counters we made for ``deliverable``."""
    offered: Money | None = None
    """Host pane: the counterparty's last proposal for ``deliverable`` (whether it moved is
    read against it: policy NP5, NP6)."""
    settled: Money | None = None
    agreed: Money | None = None
    pending: Money | None = None
    """Host pane: the amount put to the principal (``Should I take it?``)."""
    pending_deliverable: str = ""
    pending_change: bool = False
    """Host pane: what is put to the principal is a change to the written offer."""
    pending_hold: bool = False
    """Host pane: what is put to the principal is a proposal under our last counter, which
    stands unless they say otherwise (policy NP7)."""
    seen_ruling: str = ""
    """Visitor pane: the dispatch of the last ruling the visitor has answered since."""
    change: str = ""
    """Visitor pane: the host asked to change the written offer and awaits a yes or no."""
    quantity: int = 0
    """How many of ``deliverable`` are under discussion (0: not said)."""

    def but(self, **changes: Any) -> Plan:
        return replace(self, **changes)

    def without_pending(self) -> Plan:
        return replace(
            self, pending=None, pending_deliverable="", pending_change=False, pending_hold=False
        )

    @classmethod
    def read(cls, text: str) -> Self:
        raw: dict[str, str] = {}
        for part in text.split(";"):
            key, sep, value = part.partition("=")
            if sep and key.strip():
                raw[key.strip()] = value.strip()
        values: dict[str, Any] = {}
        for field in fields(cls):
            stored = raw.get(_KEYS.get(field.name, field.name), "")
            if not stored:
                continue
            if field.name in _MONEY:
                values[field.name] = parse_money(stored)
            elif field.name in ("counters", "quantity"):
                values[field.name] = int(stored) if stored.isdigit() else 0
            elif field.name in _FLAGS:
                values[field.name] = stored == "1"
            else:
                values[field.name] = stored
        return cls(**values)

    def write(self) -> str:
        stored: dict[str, str] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Money):
                text = money_code(value)
            elif isinstance(value, bool):
                text = "1" if value else ""
            elif isinstance(value, int):
                text = str(value) if value else ""
            else:
                text = str(value or "")
            if text:
                stored[_KEYS.get(field.name, field.name)] = text.replace(";", "_")
        return "; ".join(f"{key}={stored[key]}" for key in sorted(stored))
