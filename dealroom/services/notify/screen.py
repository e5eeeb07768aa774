"""The private-value screen for visitor-bound notification text: the same screen as a pane
delivery (``gate/held_sends.screen`` without a ruling: the firewall's F1-F6 against the room's
memory, the principal's instructed amounts spared, the room's held figures private too). A text
that would reveal something is never sent: a fixed line that says only that there is news
replaces it, and operators get a flag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dealroom.domain import firewall
from dealroom.persistence.dispatches import DispatchLine
from dealroom.persistence.models import Dispatch

HELD = "held"

FALLBACK_TITLE = "News in your deal room"
FALLBACK_BODY = "There is news in your conversation. Open the room to read it."


def reveals(
    memory: Mapping[str, Any],
    texts: Sequence[str],
    held: Sequence[Dispatch | DispatchLine] = (),
) -> list[str]:
    """What the texts would reveal to a visitor (empty: they may go)."""
    matches = firewall.check(
        memory,
        *texts,
        allowed_amounts=firewall.instructed_amounts(memory),
        withheld=firewall.withheld_amounts(d.payload or {} for d in held if d.status == HELD),
    )
    return firewall.describe(matches)


def visitor_text(
    memory: Mapping[str, Any],
    title: str,
    body: str,
    held: Sequence[Dispatch | DispatchLine] = (),
) -> tuple[str, str, list[str]]:
    """The title and body a visitor may be sent, and what was withheld (for the flag)."""
    found = reveals(memory, [title, body], held)
    if not found:
        return title, body, []
    return FALLBACK_TITLE, FALLBACK_BODY, found
