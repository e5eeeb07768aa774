"""Does a host-side text carry one of the host's private values? (G4: the Guard's audit of
host-side free text that crossed without a ruling.)

This is the private-value firewall (``domain/firewall.py``: limits in any written form,
private terms, the distinctive values of the private branch), less the figures the principal
instructed in this room. The Guard's own sends are not checked here: they are
screened like a persona's (``services/gate/held_sends.screen``, which adds F6 and the payload).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dealroom.domain import firewall


def private_values_in(text: str, memory: Mapping[str, Any]) -> list[str]:
    """Which private values ``text`` carries, described for operators (never for an agent)."""
    allowed = firewall.instructed_amounts(memory)
    return firewall.describe(firewall.check(memory, text, allowed_amounts=allowed))
