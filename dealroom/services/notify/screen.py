"""The private-value screen for visitor-bound notification text: the one exit screen
(``domain/leaks.screen``: the firewall's F1-F10 against the room's memory with the deployment's
closeness band, the principal's instructed amounts spared, the room's held figures private too).
A text that would reveal something is never sent: a fixed line that says only that there is news
replaces it, and operators get a flag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from dealroom.domain import firewall, leaks
from dealroom.persistence.dispatches import DispatchLine
from dealroom.persistence.models import Dispatch

HELD = "held"

FALLBACK_TITLE = "News in your deal room"
FALLBACK_BODY = "There is news in your conversation. Open the room to read it."


def reveals(
    memory: Mapping[str, Any],
    texts: Sequence[str],
    held: Sequence[Dispatch | DispatchLine] = (),
    *,
    band_percent: Decimal | None = None,
) -> list[str]:
    """What the texts would reveal to a visitor (empty: they may go); ``band_percent`` is the
    firewall's F10 band."""
    return leaks.screen(
        memory,
        *texts,
        withheld=firewall.withheld_amounts(d.payload or {} for d in held if d.status == HELD),
        band_percent=band_percent,
    )


def visitor_text(
    memory: Mapping[str, Any],
    title: str,
    body: str,
    held: Sequence[Dispatch | DispatchLine] = (),
    *,
    band_percent: Decimal | None = None,
) -> tuple[str, str, list[str]]:
    """The title and body a visitor may be sent, and what was withheld (for the flag)."""
    found = reveals(memory, [title, body], held, band_percent=band_percent)
    if not found:
        return title, body, []
    return FALLBACK_TITLE, FALLBACK_BODY, found
