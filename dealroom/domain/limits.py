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
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

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
