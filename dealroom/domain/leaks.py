"""Does a host-side text carry one of the host's private values? The one screen of every exit
that is not a pane send: the Guard's audit of host-side free text that crossed without a ruling
(G4), the welcome's public notes, notifications, webhook payloads and a payment provider's words.

This is the private-value firewall (``domain/firewall.py``: limits in any written form and the
closeness band F10, private terms, the distinctive values of the private branch), less the
figures the principal instructed in this room. Every caller passes the deployment's band
(``Settings.firewall_band_percent``), so an exit is held exactly where a pane send is. Pane
sends themselves are screened like a persona's (``services/gate/held_sends.screen``, which adds
the ruling checks).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from dealroom.domain import firewall


def screen(
    memory: Mapping[str, Any],
    *values: object,
    withheld: Iterable[Decimal] = (),
    band_percent: Decimal | None = None,
) -> list[str]:
    """What ``values`` (texts or JSON-like values) would reveal of ``memory``'s host branch,
    described for the host and operators (empty: they may cross); ``band_percent`` is F10's."""
    matches = firewall.check(
        memory,
        *values,
        allowed_amounts=firewall.instructed_amounts(memory),
        withheld=withheld,
        band_percent=band_percent,
    )
    return firewall.describe(matches)


def private_values_in(
    text: str, memory: Mapping[str, Any], *, band_percent: Decimal | None = None
) -> list[str]:
    """Which private values ``text`` carries, described for operators (never for an agent)."""
    return screen(memory, text, band_percent=band_percent)
