"""Lines about what is held for a guest by the login gate, and held deliveries spoken after
the stage moved."""

from __future__ import annotations

from dealroom.agents.models.offline.common import _str
from dealroom.agents.models.offline.offer_talk import stage_answer
from dealroom.agents.models.offline.persona.turn import Turn
from dealroom.agents.persona import PersonaOutput
from dealroom.domain.pane_words import asks_sign_in


def gate_line(turn: Turn) -> PersonaOutput:
    """The login gate: this pane's guest must sign in before anything more goes out. Said from
    what waits (kinds only, never its substance) and who is being spoken with."""
    host, name = turn.host, turn.other_name
    if turn.trigger.reason == "cap":
        enjoyed = f"I've enjoyed this, {name}" if name else "I've enjoyed this"
        reply = (
            f"{enjoyed} — to keep going with {host}, please sign in or create a free account. "
            "Everything we've said stays right here."
        )
    else:
        waiting = turn.body or "an update"
        reply = (
            f"I was just about to share an update with {host} ({waiting}) — sign in or create "
            "an account and it goes out straight away, right here in this conversation."
        )
    return turn.out(reply)


def gate_on_send(turn: Turn, output: PersonaOutput, waiting: str = "") -> PersonaOutput:
    """seed 000: a guest's turn that sends meets the login gate in this one reply, which names
    what waits ("I'd take your $5,000 for a sponsored post to Maya Lin — sign in …") instead
    of "I'm checking now" followed by the gate's own line."""
    if not (turn.guest and output.sends) or asks_sign_in(output.reply):
        return output
    host = turn.host
    what = waiting or f"this to {host}"
    reply = (
        f"I'd take {what} — sign in or create a free account so {host} knows who is asking, "
        "and it goes straight over, right here in this conversation."
    )
    return output.model_copy(update={"reply": reply})


def told(turn: Turn) -> PersonaOutput:
    """A stage event, or a delivery code made (the Guard's repair, a goal's notice): say it
    as it was written — code composed it in people's words (SN2), or the audit from the
    recipient's point of view — and keep the plan. Nothing is sent on from here."""
    body = turn.body.strip()
    return turn.out(body or "…")


def held_stage_note(turn: Turn, output: PersonaOutput) -> PersonaOutput:
    """A held delivery spoken after the stage moved: the reply says where the deal stands now
    (the DEAL STAGE block, never the stage it was held at)."""
    held = turn.trigger.held or {}
    then = _str(held.get("stage"))
    if not held or not then or then == turn.stage.value:
        return output
    now = stage_answer(turn.stage, host_pane=turn.host_pane, host=turn.host)
    return output.model_copy(update={"reply": f"{output.reply} {now}".strip()})
