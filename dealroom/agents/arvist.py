"""Arvist, the curator of one account's durable document (seed 000 "Two memory layers, with a
gatekeeper"; seed 002 layer 4 "Promotion & Archival Isolation").

It runs once per bound participant of a room and promotes what is durable about *that*
participant's account: standing rates, limits, rules, what may be shared and, for the host,
the deals it has closed. Its input is a pure function of what that participant may see:

- the host: its own branch of the room (private parts included: it is the host's own
  document) and the closed deals code derived from the room's offers rows;
- any other bound participant: only its own pane and its own branch — the host's branch,
  every other participant's branch and every private part are never in its input, so it
  cannot write another party's profile into this account's document.

It answers with targeted changes to the durable document; code checks them (D2, D3) and
writes them under the account row lock. Leaf dates are shown to it, never written by it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import Line, document, transcript


class DurableChange(BaseModel):
    """One targeted change to the account's durable document."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["set", "append", "remove"] = Field(description="set, append or remove.")
    path: str = Field(
        description="Dotted path in the durable document, e.g. 'rates.sponsored_post.ask' "
        "or 'deals.<key>.fee'. Never 'host.', 'visitor.', goals, plans or claims."
    )
    value: str | None = Field(default=None, description="The text to set or append.")
    part: Literal["shared", "service"] = Field(
        default="service",
        description="'service' when the fact holds for this room's service only (its rates, "
        "floors, deliverables, deals); 'shared' when it holds for every service the account "
        "offers (contact, style, general rules).",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The default part is left out, so a change reads as it did before parts existed.
        dumped: dict[str, Any] = handler(self)
        if dumped.get("part") == "service":
            del dumped["part"]
        return dumped


class ArvistOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    changes: list[DurableChange] = Field(
        default_factory=list,
        description="Targeted changes; empty when nothing durable is new (the usual verdict).",
    )


PROMPT = """You are Arvist, the curator of one account's long-term memory document. Rooms keep
a generous working memory for one negotiation; you decide what outlives the room. Most of a
negotiation's detail is noise a month later: promote only what is durable about the account
whose document this is — standing rates and asks, floors and limits, hard rules and
exclusions, what may be shared publicly, standing preferences, and (for a host) the deals it
has closed (fee, deliverables, date, counterparty handle).

Rules:
- Answer with targeted changes (set, append or remove at a dotted path of the durable
  document). Never rewrite the document; never touch a path you do not name.
- A change that repeats what the document already holds is not a change: leave it out. A run
  that finds nothing durable returns no changes.
- Never record a goal, plan, stage, delivery, claim or anything someone says happened
  elsewhere. Never record that a message was sent.
- Limits are data, not notes: a floor, minimum or budget cap is set whole at
  `limits.<deliverable>` (a snake_case slug) to the JSON text
  `{"floor": "<digits>", "currency": "<ISO 4217 code>"}`; an exclusion or other private
  condition is appended to `private_terms`. Never write a floor anywhere else.
- `public` holds only what may be shared with visitors: never a limit, a private term or a
  contact detail or code that is not already public (such a write is refused).
- A room may be about one SERVICE of the account. Name paths as the document shows them here
  (never 'services.'); mark each change `part`: `service` for what holds for this service only
  (its rates, floors, deliverables, deals), `shared` for what holds for every service.
- The LEAF DATES say when each fact last changed. A fact the room states differently from a
  newer fact in the document is stale in the room: keep the document's.
- Reply with JSON matching the schema.
"""

BOUNDARY = """IMPORTANT PERSPECTIVE BOUNDARY:
Only record enduring facts, accepted terms, and preferences from the perspective of {name}.
Do NOT adopt the identity or record the private rules/strategy of the counterparty, and never
write another party's profile into this document."""

SYSTEM = PROMPT


@dataclass(frozen=True, slots=True)
class ClosedDeal:
    """A booked deal, derived by code from the offers row (never from a model)."""

    key: str
    fee: str
    deliverables: Sequence[str]
    date: str
    counterparty: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fee": self.fee,
            "deliverables": list(self.deliverables),
            "date": self.date,
            "counterparty": self.counterparty,
        }


@dataclass(frozen=True, slots=True)
class ArvistInput:
    perspective: Literal["host", "participant"]
    room_kind: str
    account_name: str
    pane: str
    durable: Mapping[str, Any]
    leaf_dates: Mapping[str, date]
    branch: Mapping[str, Any]
    """The participant's own branch of room memory, and nothing else of it."""
    session: Sequence[Line]
    """The participant's own pane, recent lines."""
    closed_deals: Sequence[ClosedDeal]
    """Host only; always empty for another participant."""
    service: str | None = None
    """The key of the service the room is about (S4); None for none."""


def build(inputs: ArvistInput, *, model: str) -> ModelRequest:
    deals = [deal.to_json() for deal in inputs.closed_deals] if inputs.perspective == "host" else []
    context: dict[str, Any] = {
        "agent": AgentName.ARVIST.value,
        "perspective": inputs.perspective,
        "room_kind": inputs.room_kind,
        "pane": inputs.pane,
        "account_name": inputs.account_name,
        "durable": dict(inputs.durable),
        "leaf_dates": {path: day.isoformat() for path, day in sorted(inputs.leaf_dates.items())},
        "branch": dict(inputs.branch),
        "session": [line.to_json() for line in inputs.session],
        "closed_deals": deals,
        "service": inputs.service,
    }
    parts = [
        f"ROOM: {inputs.room_kind}. THE DOCUMENT BELONGS TO: {inputs.account_name} "
        f"(participant '{inputs.pane}' of this room). "
        f"SERVICE: {inputs.service or 'none (every change is shared)'}.",
        f"DURABLE DOCUMENT (now):\n{document(context['durable'])}",
        f"LEAF DATES (when each fact last changed):\n{document(context['leaf_dates'])}",
        f"{inputs.account_name.upper()}'S BRANCH OF THIS ROOM'S MEMORY:\n"
        f"{document(context['branch'])}",
        f"{inputs.account_name.upper()}'S OWN CONVERSATION (recent):\n"
        + transcript(inputs.session, participant=inputs.account_name, agent="agent"),
    ]
    if inputs.perspective == "host":
        parts.append(f"CLOSED DEALS OF THIS ROOM (from the offers system):\n{document(deals)}")
    parts.append(BOUNDARY.format(name=inputs.account_name))
    return ModelRequest(
        agent=AgentName.ARVIST,
        model=model,
        system=SYSTEM,
        prompt="\n\n".join(parts),
        context=context,
        output=ArvistOutput,
        visitor_facing=inputs.perspective != "host",
    )
