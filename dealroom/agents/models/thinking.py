"""Thinking budgets per agent (``DEALROOM_THINKING_<AGENT>``) and the range each Gemini model
accepts.

A thinking budget caps the tokens a 2.5 model may spend reasoning before it answers; they are
billed as output and delay the first streamed word. Models differ in what they accept: 2.5 Pro
cannot turn thinking off (a budget of 0 fails every call), 2.5 Flash can, 2.5 Flash-Lite is off
unless given at least 512, and 2.0 Flash does not think at all. ``-1`` asks for dynamic
thinking (the model decides). A setting a model would refuse is refused at start-up instead of
failing each call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from dealroom.agents.models.base import AgentName

DYNAMIC: Final = -1


@dataclass(frozen=True, slots=True)
class ThinkingRange:
    low: int
    high: int
    can_turn_off: bool

    def describe(self) -> str:
        off = "0 (off), " if self.can_turn_off else ""
        return f"{off}-1 (dynamic) or {self.low}..{self.high}"


RANGES: Mapping[str, ThinkingRange | None] = {
    "gemini-2.5-pro": ThinkingRange(128, 32768, can_turn_off=False),
    "gemini-2.5-flash": ThinkingRange(1, 24576, can_turn_off=True),
    "gemini-2.5-flash-lite": ThinkingRange(512, 24576, can_turn_off=True),
    "gemini-2.0-flash": None,
}
"""Google's documented budgets per model (None: the model does not think)."""

AGENTS: Final = (
    AgentName.PERSONA,
    AgentName.DISTIL,
    AgentName.CONTEXT_FILTER,
    AgentName.OFFER_GEN,
    AgentName.AGREEMENT,
    AgentName.GUARD,
    AgentName.ARVIST,
    AgentName.ACC_UPDATE,
)
"""The agents whose calls carry a budget of their own (``DEALROOM_THINKING_<AGENT>``)."""


def problem(model: str, budget: int | None) -> str | None:
    """Why ``model`` would refuse ``budget`` (None: it accepts it; an unset budget keeps the
    model's default; a model not listed here is not second-guessed)."""
    if budget is None:
        return None
    name = model.removeprefix("models/")
    if name not in RANGES:
        return None
    found = RANGES[name]
    if found is None:
        return f"{name} does not think; leave it unset"
    if budget == DYNAMIC or found.low <= budget <= found.high:
        return None
    if budget == 0 and found.can_turn_off:
        return None
    if budget == 0:
        return f"{name} cannot turn thinking off (valid: {found.describe()})"
    return f"{budget} is outside {name}'s range (valid: {found.describe()})"
