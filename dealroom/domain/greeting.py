"""The visitor's welcome: the first line of a new deal room's visitor pane,
in the host's agent's voice, from what the host said may be shared (``host.public``) only.

Code writes it when the room opens, so a visitor who opens a link is greeted at once and the
same way on every engine; no model call is spent on a visit that may never say anything. It
passes the private-value firewall like every host→visitor path: a public note that states a
private value is left out, and the welcome falls back to its bare form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from dealroom.domain import firewall

MAX_ITEMS: Final = 3
"""Public rate-card lines and notes named in the welcome, at most, each."""
MAX_ITEM_CHARS: Final = 160
KEY: Final = "greeting"
"""The welcome's ``client_message_id``: one per pane."""


def welcome(
    host: str,
    visitor: str | None,
    memory: Mapping[str, Any],
    *,
    band_percent: Decimal | None = None,
) -> str:
    """The welcome for ``visitor`` (a signed-in visitor's name, or None for a guest) to
    ``host``'s room whose seeded memory is ``memory``; ``band_percent`` is the firewall's F10
    band (the deployment's ``firewall_band_percent``)."""
    hello = f"Hi {visitor}!" if visitor else "Hi!"
    lines = [
        f"{hello} I'm the agent for {host}: I can talk through a collaboration with you "
        f"and take it to {host}."
    ]
    public = _public(memory)
    rates = [item.replace("_", " ") for item in _items(public.get("rate_card"))]
    if rates:
        lines.append(f"{host}'s rate card: {'; '.join(rates)}.")
    notes = _items(public.get("notes"))
    if notes:
        lines.append(" ".join(_sentence(note) for note in notes))
    lines.append("What do you have in mind: the deliverable, your dates and your budget?")
    text = " ".join(lines)
    if firewall.check(memory, text, band_percent=band_percent):
        return " ".join([lines[0], lines[-1]])
    return text


def _public(memory: Mapping[str, Any]) -> Mapping[str, Any]:
    branch = memory.get("host")
    public = branch.get("public") if isinstance(branch, Mapping) else None
    return public if isinstance(public, Mapping) else {}


def _items(value: object) -> list[str]:
    values: Sequence[object]
    if isinstance(value, str):
        values = [value]
    elif isinstance(value, Sequence):
        values = value
    else:
        return []
    items = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    return [item[:MAX_ITEM_CHARS] for item in items[-MAX_ITEMS:]]


def _sentence(text: str) -> str:
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."
