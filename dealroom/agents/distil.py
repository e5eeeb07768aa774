"""Distil, the memory writer: runs beside the persona, never in front of it (seed 000
"Memory is distilled beside the reply"). It records facts as targeted changes, records what
someone says happened elsewhere as a claim, records a principal's chat yes as an instruction,
and flags frustration for operators. Code applies its output under the memory lease."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import Line, Party, dispatch_record, memory_view, transcript
from dealroom.domain import offer_stage
from dealroom.domain.seats import on_host_side


class Change(BaseModel):
    """One targeted change to the room's memory document."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["set", "append", "remove"] = Field(description="set, append or remove.")
    path: str = Field(description="Dotted path, e.g. 'host.rates.sponsored_post.floor'.")
    value: str | None = Field(default=None, description="The text to set or append.")


class PrincipalDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="What the decision is about, e.g. 'fee'.")
    question: str = Field(default="", description="The question the principal was asked.")
    instruction: str = Field(description="What the principal told their agent to do.")


class Frustration(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: Literal["low", "medium", "high"] = Field(description="How impatient.")
    evidence: str = Field(description="The words that show it, quoted.")


class DistilOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    changes: list[Change] = Field(default_factory=list, description="Targeted changes.")
    claims: list[str] = Field(
        default_factory=list,
        description="Things someone says happened elsewhere, recorded as unverified claims.",
    )
    principal_decisions: list[PrincipalDecision] = Field(
        default_factory=list,
        description="A principal's chat instructions (never an approval, never a stage).",
    )
    frustration: Frustration | None = Field(
        default=None, description="Set only when the participant is losing patience."
    )


PROMPT = """You are the memory writer of a deal room. You read one pane's current session and
record durable facts into the room's memory document as targeted changes (set, append or
remove at a dotted path). Never rewrite the document; never touch a path you do not name.

Rules:
- Record only what the conversation states. Write facts about the participant of this pane
  under the paths you are allowed to write (listed below).
- In the host's pane, what the host says is private by default. Only what the host says may
  be shared with visitors goes under `host.public`; never a limit, a private term or any
  contact detail, code or name the host did not say may be shared (such a write is refused).
- Limits are data, not notes. When the host states a floor, minimum, "never below", lowest
  acceptable fee or budget cap for a deliverable, set `host.limits.<deliverable>` (a
  snake_case slug such as `sponsored_post`) to the JSON text
  `{"floor": "<digits>", "currency": "<ISO 4217 code>", "source": "<message id>"}`, the
  message id being the one shown in square brackets before the line that said it. Never
  write a floor anywhere else.
- An exclusion or other private condition ("no alcohol brands", "never mention my agency")
  is appended to `host.private_terms` as the JSON text
  `{"text": "<the condition>", "source": "<message id>"}`.
- Something a participant says happened elsewhere (a contract "sent over", a call) is a claim:
  put it in `claims`, never in a change as fact.
- Never record that a message was sent or delivered: the dispatch record below is the only
  truth about deliveries, and code writes it.
- A principal's yes in chat is an instruction: put it in `principal_decisions`. It is never
  an approval, never a booking and never a stage. Never write a stage into memory.
- Flag frustration (deflected asks, "is this a bot?", asking for a human) with level and the
  quoted evidence. Nobody but operators sees the flag.
- Reply with JSON matching the schema.
"""

SYSTEM = f"{PROMPT}\n{offer_stage.vocabulary()}"


@dataclass(frozen=True, slots=True)
class DistilInput:
    room_kind: str
    pane: str
    represents: Party
    speaking_with: Party
    memory: Mapping[str, Any]
    """Visibility-filtered for this pane: a visitor pane's writer never sees host-private parts."""
    session: Sequence[Line]
    dispatches: Sequence[Mapping[str, Any]]
    writable: Sequence[str]
    stage: offer_stage.Stage


def build(inputs: DistilInput, *, model: str) -> ModelRequest:
    context: dict[str, Any] = {
        "agent": AgentName.DISTIL.value,
        "room_kind": inputs.room_kind,
        "pane": inputs.pane,
        "represents": inputs.represents.to_json(),
        "speaking_with": inputs.speaking_with.to_json(),
        "memory": dict(inputs.memory),
        "session": [line.to_json() for line in inputs.session],
        "dispatches": [dict(d) for d in inputs.dispatches],
        "writable": list(inputs.writable),
        "stage": {"stage": inputs.stage.value, "gloss": offer_stage.GLOSSES[inputs.stage]},
    }
    prompt = "\n\n".join(
        [
            f"ROOM: {inputs.room_kind}. PANE: {inputs.pane}. The agent here represents "
            f"{inputs.represents.name}; the participant of this pane is "
            f"{inputs.speaking_with.name}.",
            "CURRENT SESSION:\n"
            + transcript(inputs.session, participant=inputs.speaking_with.name, agent="agent"),
            f"MEMORY:\n{memory_view(context['memory'])}",
            "DISPATCH RECORD (ground truth of deliveries):\n"
            + dispatch_record(context["dispatches"]),
            f"YOU MAY WRITE UNDER: {', '.join(inputs.writable)}",
            offer_stage.deal_stage_block(inputs.stage),
        ]
    )
    return ModelRequest(
        agent=AgentName.DISTIL,
        model=model,
        system=SYSTEM,
        prompt=prompt,
        context=context,
        output=DistilOutput,
        visitor_facing=not on_host_side(inputs.pane),
    )
