"""The persona's rules, one module per side: the home room and the principal's own pane
(``principal``), the host-side ruling on a proposal (``host``, deciding by the table in
``policy``), and the visitor's pane (``visitor``, reading ``known``). The plan each pane
carries between turns is typed (``plan.Plan``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dealroom.agents.models.offline.common import _str
from dealroom.agents.models.offline.persona.held import gate_line, held_stage_note, told
from dealroom.agents.models.offline.persona.host import host_ruling
from dealroom.agents.models.offline.persona.policy import Judgement, judge
from dealroom.agents.models.offline.persona.principal import home, principal_message
from dealroom.agents.models.offline.persona.turn import read_turn
from dealroom.agents.models.offline.persona.visitor import visitor_delivery, visitor_message
from dealroom.agents.persona import PersonaOutput

__all__ = ["Judgement", "held_stage_note", "judge", "persona_output"]


def persona_output(context: Mapping[str, Any]) -> PersonaOutput:
    turn = read_turn(context)
    kind = _str(turn.trigger.get("kind"))
    if kind == "stage" or _str(turn.trigger.get("origin")):
        return told(turn)
    if turn.room_kind == "home":
        return home(turn)
    if kind == "gate":
        return gate_line(turn)
    delivery = kind == "delivery"
    if turn.host_pane:
        return held_stage_note(turn, host_ruling(turn)) if delivery else principal_message(turn)
    return held_stage_note(turn, visitor_delivery(turn)) if delivery else visitor_message(turn)
