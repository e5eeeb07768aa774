"""The Guard: audits a room that went quiet (seed 000 "A guard audits quiet rooms").

It reads the whole room — every pane's current session, the memory, the dispatch record,
goal statuses, pending principal decisions, the plans and the live DEAL STAGE — and names
what is wrong: a promise of a delivery with no dispatch, someone waiting on an undelivered
message, a goal status no transcript supports, a claim of a booking the stage does not show,
a stale plan. It repairs with the smallest edits, which code applies through the existing
write paths; it never makes strategy. Its expected verdict is "healthy — no action".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import Line, Party, document, transcript
from dealroom.domain import offer_stage


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pane: str = Field(description="The pane the problem is in.")
    problem: str = Field(description="One sentence: what is false or owed, with the evidence.")


class GuardSend(BaseModel):
    """A delivery that is owed: code sends it as if the agent of ``from_pane`` had."""

    model_config = ConfigDict(extra="forbid")

    from_pane: str = Field(description="The pane whose agent promised or owes it.")
    to: str = Field(
        description=(
            "The recipient participant's key; the same pane as from_pane for a correction "
            "of a false statement made there."
        )
    )
    substance: str = Field(
        description="What the recipient must learn, from the recipient's point of view."
    )
    open_questions: list[str] = Field(default_factory=list, description="Terms still missing.")


class GoalFix(BaseModel):
    """A goal whose status no transcript supports goes back to open (the Guard only ever
    reopens a goal, so there is no status to choose)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="The goal's key.")
    reason: str = Field(description="One sentence: why the recorded status is not supported.")


class MemoryFix(BaseModel):
    """A targeted change to false state in memory (never a rewrite)."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["set", "remove"] = Field(description="set or remove.")
    path: str = Field(description="Dotted path of the false value.")
    value: str | None = Field(default=None, description="The corrected value, for set.")


class GuardOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    findings: list[Finding] = Field(
        default_factory=list, description="Problems found; empty when the room is healthy."
    )
    sends: list[GuardSend] = Field(default_factory=list, description="Owed deliveries.")
    goals: list[GoalFix] = Field(
        default_factory=list, description="Goals to reopen (set back to open)."
    )
    memory: list[MemoryFix] = Field(default_factory=list, description="False state to fix.")
    clear_plans: list[str] = Field(
        default_factory=list, description="Panes whose plan is stale and must be cleared."
    )


PROMPT = """You are the Guard of a deal room: a proofreader with a red pen, not a co-author.
The room has gone quiet. Audit it and repair only what is false or owed.

Check, with evidence from the transcripts and the dispatch record:
- Nothing claimed done that never happened. An agent reply that promised a delivery ("I'll
  take this to them now") must have a dispatch from its turn; the DISPATCH RECORD is the only
  truth about deliveries, never an agent's or the memory's own account.
- Nobody waiting on an undelivered message: if a participant was told something would reach
  them, or is owed an answer another participant gave, deliver it with a send.
- Goal statuses match the transcripts: a goal ruled met with no agreement in any transcript
  goes back to open. You never rule a goal met, blocked or abandoned.
- No agent called anything booked or paid that the DEAL STAGE does not show: correct it with a
  send to that same pane, in the stage vocabulary.
- Stale plans (about something already done or no longer true) are cleared.

Rules:
- Lines marked [relayed from …] are deliveries of another participant's words or
  instruction, not the agent's own claims. Never treat a relay as unsupported, and never walk
  one back.
- Repair with the smallest edits: a send, a goal reopened, a targeted memory fix, a plan
  cleared. Never change strategy, terms, prices or tone; never second-guess a judgement call.
- A send's substance is written from the recipient's point of view and never mentions other
  chats, panes, agents or the audit. Never put the host's private rules, floors or limits in a
  send to anyone but the host.
- When everything is consistent, return empty lists: "healthy — no action" is the usual
  verdict.
- Reply with JSON matching the schema.
"""

SYSTEM = f"{PROMPT}\n{offer_stage.vocabulary()}"


@dataclass(frozen=True, slots=True)
class PaneAudit:
    """One pane as the Guard reads it."""

    key: str
    name: str
    session: Sequence[Line]
    plan: str
    last_reply: str | None
    """The agent's last reply in this pane, if any."""
    last_reply_sent_to: Sequence[str]
    """Who that reply's own turn sent to (the dispatch record), empty when it sent nothing."""

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "session": [line.to_json() for line in self.session],
            "plan": self.plan,
            "last_reply": self.last_reply,
            "last_reply_sent_to": list(self.last_reply_sent_to),
        }


@dataclass(frozen=True, slots=True)
class GuardInput:
    room_kind: str
    represents: Party
    panes: Sequence[PaneAudit]
    memory: Mapping[str, Any]
    """The room memory without plans (each pane's plan is on its pane)."""
    dispatches: Sequence[Mapping[str, Any]]
    stage: offer_stage.Stage


def build(inputs: GuardInput, *, model: str) -> ModelRequest:
    memory = dict(inputs.memory)
    context: dict[str, Any] = {
        "agent": AgentName.GUARD.value,
        "room_kind": inputs.room_kind,
        "represents": inputs.represents.to_json(),
        "panes": [pane.to_json() for pane in inputs.panes],
        "memory": memory,
        "goals": memory.get("goals", {}),
        "decisions": memory.get("pendingPrincipalDecisions", {}),
        "dispatches": [dict(d) for d in inputs.dispatches],
        "stage": {"stage": inputs.stage.value, "gloss": offer_stage.GLOSSES[inputs.stage]},
    }
    panes = "\n\n".join(
        f"PANE {p.key} — {p.name} (the agent represents {inputs.represents.name}):\n"
        + transcript(p.session, participant=p.name, agent="agent")
        + f"\nPLAN: {p.plan or '(none)'}\n"
        + f"LAST REPLY'S TURN SENT TO: {', '.join(p.last_reply_sent_to) or '(nobody)'}"
        for p in inputs.panes
    )
    prompt = "\n\n".join(
        [
            f"ROOM: {inputs.room_kind}. The agents represent {inputs.represents.name}.",
            panes,
            f"MEMORY:\n{document(memory)}",
            f"DISPATCH RECORD (ground truth of deliveries):\n{document(context['dispatches'])}",
            offer_stage.deal_stage_block(inputs.stage),
        ]
    )
    return ModelRequest(
        agent=AgentName.GUARD,
        model=model,
        system=SYSTEM,
        prompt=prompt,
        context=context,
        output=GuardOutput,
        visitor_facing=False,
    )
