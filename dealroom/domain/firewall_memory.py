"""Where the private-value firewall (``domain/firewall.py``) reads room memory besides the limits
and the private terms (``domain/limits.py``): which of the host's strings are private, which
figures it spares and which it holds (rules F4, F5, F6 and F10's spared figures).

- F4  ``host.public`` is what the host said may be shared: ``host_strings`` walks the rest of
      the host's branch. The figures the principal instructed in this room
      (``instructed_amounts``: ``pendingPrincipalDecisions.*.principalInstruction``) are spared
      while the instruction stands (``instructions`` PI3: a lapsed one spares nothing).
- F5  Keys called ``source`` (the id of the message a value was stated in) are metadata:
      ``host_strings`` skips them.
- F6  The figures of the rulings of held sends (``withheld_amounts``) are held.
- F10 The figures no band holds, besides the instructed ones: the host's asks (``asks``:
      ``host.rates.<slug>.ask``, the price the host states) and the figures on the visitor's
      side of memory (``visitor_side_amounts``: ``deal``, the rulings that crossed and every
      visitor's own branch; only visitor-side writers write those, memory M3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any, Final

from dealroom.domain import instructions
from dealroom.domain.amounts_in_text import digit_amounts, stated_amounts
from dealroom.domain.limits import RATES
from dealroom.domain.seats import on_host_side

PUBLIC: Final = "public"
SOURCE: Final = "source"
VISITOR_SIDE: Final = frozenset({"deal", "rulings"})
"""F10: the parts of memory on the visitor's side besides the visitors' own branches: the
shared deal (written by visitor-side writers only, memory M3) and the rulings that crossed."""
NOT_A_VISITOR_BRANCH: Final = frozenset(
    {"host", "goals", "plans", "pendingPrincipalDecisions", "offers", "sent", "deliveries"}
)
"""F10: top-level parts that are not a visitor's branch: the host's, and memory's reserved
parts (``memory.RESERVED``, a test keeps the two in step) other than the rulings."""
_BRANCH_KEY: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")


def instructed_amounts(memory: Mapping[str, Any], side: str = "host") -> set[Decimal]:
    """F4: the figures ``side``'s principal instructed in this room
    (``pendingPrincipalDecisions.*.principalInstruction``), of the instructions still in force
    (instructions PI3: one whose terms moved has lapsed and spares nothing)."""
    figures: set[Decimal] = set()
    for _key, instruction in instructions.standing(memory, side):
        figures |= stated_amounts(instruction)
    return figures


def withheld_amounts(held_payloads: Iterable[Mapping[str, Any]]) -> set[Decimal]:
    """F6: the figures of the rulings in held sends' payloads."""
    figures: set[Decimal] = set()
    for payload in held_payloads:
        ruling = payload.get("ruling")
        amount = ruling.get("amount") if isinstance(ruling, Mapping) else None
        if isinstance(amount, str):
            figures |= stated_amounts(amount)
    return figures


def host_strings(host: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, str]]:
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


def all_strings(value: object) -> Iterator[str]:
    """Every string of a JSON-like value, its keys included (other scalars as text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, child in value.items():
            yield str(key)
            yield from all_strings(child)
    elif isinstance(value, list | tuple | set | frozenset):
        for child in value:
            yield from all_strings(child)
    elif value is not None:
        yield str(value)


def asks(host: object) -> set[Decimal]:
    """F10: the host's asks (``host.rates.<slug>.ask``): the price it states."""
    rates = host.get(RATES) if isinstance(host, Mapping) else None
    found: set[Decimal] = set()
    if isinstance(rates, Mapping):
        for rate in rates.values():
            ask = rate.get("ask") if isinstance(rate, Mapping) else None
            if isinstance(ask, str | int):
                found |= digit_amounts(str(ask))
    return found


def visitor_side_amounts(memory: Mapping[str, Any]) -> set[Decimal]:
    """F10: the figures in the visitor's side of memory: ``deal``, the rulings that crossed
    and every visitor's own branch (what the visitor proposed, its budget)."""
    figures: set[Decimal] = set()
    for key, part in memory.items():
        if key in VISITOR_SIDE or (
            isinstance(key, str)
            and _BRANCH_KEY.fullmatch(key)
            and key not in NOT_A_VISITOR_BRANCH
            and not on_host_side(key)  # a host's teammate's branch (host_2) is the host's side
        ):
            for text in all_strings(part):
                figures |= digit_amounts(text)
    return figures
