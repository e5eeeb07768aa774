"""One persona turn as the offline rules read it: who speaks, in which pane, with what memory
and plan, and the small readings every handler shares."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from dealroom.agents.models.offline.common import _at, _house_currency, _list, _map, _str
from dealroom.agents.models.offline.offer_talk import (
    is_payment_ask,
    payment_answer,
    stage_answer,
)
from dealroom.agents.models.offline.persona.links import with_links
from dealroom.agents.models.offline.persona.plan import Plan
from dealroom.agents.persona import GoalRuling, PersonaInput, PersonaOutput, Send, Trigger
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import GUEST_NAME, on_host_side

NEW_OFFER: Final = "new-offer"
_NO_NAME: Final = "the visitor"


@dataclass(frozen=True, slots=True)
class Turn:
    room_kind: str
    pane: str
    host_key: str
    host: str
    other: str
    memory: Mapping[str, Any]
    plan: Plan
    session: list[tuple[str, str]]
    trigger: Trigger
    send_to: list[str]
    currency: str
    stage: Stage
    guest: bool = False
    """This pane's counterparty has not signed in: a send waits on the login gate."""
    locale: str = "en_US"
    """The pane's reader's locale: the price line is written in it (L3)."""
    people: Mapping[str, str] = field(default_factory=dict)
    """A host-side pane's view of who each other pane's person is (a room with teammates)."""

    @property
    def body(self) -> str:
        return self.trigger.body

    @property
    def other_name(self) -> str | None:
        """The name of whoever this pane speaks with; None for a guest, whose only name is the
        placeholder ("A visitor"), which is no way to address a person."""
        return None if self.other in (GUEST_NAME, _NO_NAME) else self.other

    def hello(self) -> str:
        """A greeting back: "Hi Dana!", or "Hi there!" when the person has no name."""
        name = self.other_name
        return f"Hi {name}!" if name else "Hi there!"

    @property
    def host_pane(self) -> bool:
        """The host's pane, or a teammate's on the host side (who instructs like the host)."""
        return self.pane == self.host_key or on_host_side(self.pane)

    def participant_lines(self) -> list[str]:
        return [body for author, body in self.session if author == "participant"]

    def about_stage(self, body: str) -> str:
        """seed 000 (the Sophie Bell reversal): where the deal stands comes from the DEAL
        STAGE alone, never from memory, the plan or what someone claims."""
        if is_payment_ask(body):
            return payment_answer(self.stage, host_pane=self.host_pane, host=self.host)
        return stage_answer(self.stage, host_pane=self.host_pane, host=self.host)

    def out(
        self,
        reply: str,
        plan: Plan | None = None,
        *,
        goals: Sequence[GoalRuling] = (),
        sends: Sequence[Send] = (),
    ) -> PersonaOutput:
        """The turn's output; the plan is this turn's unless another is given."""
        written = (plan if plan is not None else self.plan).write()
        return PersonaOutput(reply=reply, goals=list(goals), sends=list(sends), plan=written)


def read_turn(inputs: PersonaInput) -> Turn:
    """The turn from the persona's typed input: attribute reads, no lookups in a dict."""
    return Turn(
        room_kind=inputs.room_kind,
        pane=inputs.pane,
        host_key=inputs.represents.key or "host",
        host=inputs.represents.name or "the host",
        other=inputs.speaking_with.name or _NO_NAME,
        memory=inputs.memory,
        plan=Plan.read(inputs.plan),
        session=[(line.author, line.body) for line in inputs.session],
        trigger=with_links(inputs.trigger, inputs.links),  # a read link's text, as typed
        send_to=list(inputs.send_to),
        currency=_house_currency(inputs.memory),
        stage=inputs.stage,
        guest=inputs.guest,
        locale=inputs.locale,
        people=dict(inputs.people),
    )


# Greeting-only lines get a greeting back, not an acknowledgement of rules.
GREETING: Final = re.compile(
    r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening))\b[\w\s,!.]*$", re.I
)
_QUESTION_START = re.compile(
    r"^\s*(?:what|whats|what's|how|which|who|when|where|why|do|does|did|is|are|can|could|"
    r"would|will|should|have|has)\b",
    re.I,
)


def is_question(text: str) -> bool:
    return "?" in text or bool(_QUESTION_START.match(text))


def goal_status(memory: Mapping[str, Any], key: str) -> str:
    return _str(_map(_map(memory.get("goals")).get(key)).get("status"))


def reopen(turn: Turn, reason: str) -> list[GoalRuling]:
    """new-offer back to open when the written terms are to change (an open goal is not
    reopened): the next met is a flip, and code draws the new version on it."""
    if goal_status(turn.memory, NEW_OFFER) == "open":
        return []
    return [GoalRuling(key=NEW_OFFER, status="open", reason=reason)]


def party_name(memory: Mapping[str, Any], key: str, people: Mapping[str, str] = {}) -> str:
    branch = _map(memory.get(key))
    for name in ("name", "company"):
        value = _str(branch.get(name)).strip()
        if value:
            return value
    known = people.get(key)
    return known if known and known != GUEST_NAME else "The visitor"


def visitor_key(turn: Turn) -> str:
    return turn.plan.with_ or next((key for key in turn.send_to if key != turn.host_key), "visitor")


def pane_rulings(turn: Turn) -> list[Any]:
    """The rulings that crossed into this pane, oldest first."""
    return _list(_at(turn.memory, f"rulings.{turn.pane}"))


def last_dispatch(turn: Turn) -> str:
    """The dispatch of the last ruling that crossed into this pane ("" when none has)."""
    rulings = pane_rulings(turn)
    last = _str(_map(rulings[-1]).get("dispatchId")) if rulings else ""
    return re.sub(r"[;=]", "_", last)  # the plan's own separators
