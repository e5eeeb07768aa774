"""The persona's rules, one module per side: the home room and the principal's own pane
(``principal``), the host-side ruling on a proposal (``host``, deciding by the table in
``policy``), and the visitor's pane (``visitor``, reading ``known``). The plan each pane
carries between turns is typed (``plan.Plan``)."""

from __future__ import annotations

from dealroom.agents.models.offline.persona.held import (
    gate_line,
    gate_on_send,
    held_stage_note,
    told,
)
from dealroom.agents.models.offline.persona.host import host_ruling
from dealroom.agents.models.offline.persona.links import honest
from dealroom.agents.models.offline.persona.policy import Judgement, judge
from dealroom.agents.models.offline.persona.principal import home, principal_message
from dealroom.agents.models.offline.persona.turn import read_turn
from dealroom.agents.models.offline.persona.visitor import visitor_delivery, visitor_message
from dealroom.agents.persona import PersonaInput, PersonaOutput

__all__ = ["Judgement", "held_stage_note", "judge", "persona_output"]


def persona_output(inputs: PersonaInput) -> PersonaOutput:
    return honest(_output(inputs), inputs.trigger, inputs.links)


def _output(inputs: PersonaInput) -> PersonaOutput:
    turn = read_turn(inputs)
    kind = turn.trigger.kind
    if kind == "stage" or turn.trigger.origin:
        return told(turn)
    if turn.room_kind == "home":
        return home(turn)
    if kind == "gate":
        return gate_line(turn)
    delivery = kind == "delivery"
    if turn.host_pane:
        return held_stage_note(turn, host_ruling(turn)) if delivery else principal_message(turn)
    if delivery:
        return held_stage_note(turn, visitor_delivery(turn))
    # Any other send from a guest's pane (a yes, a note, an offer button) meets the gate in
    # its own reply too; a proposal has named what waits already.
    return gate_on_send(turn, visitor_message(turn))
