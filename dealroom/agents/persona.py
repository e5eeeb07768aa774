"""The persona: one per pane, speaking for the host (seed 000 "The agent in each
conversation decides and acts"; seed 002 layer 3).

Its structured output is applied by code in the same turn: the reply (streamed), goal
rulings, sends to other participants (a host-side ruling among them), and its own plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dealroom.agents import links as link_quotes
from dealroom.agents.links import LinkQuote
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import Line, Party, dispatch_record, document, memory_view, transcript
from dealroom.domain import offer_stage, pane_words
from dealroom.domain.money import DEFAULT_LOCALE, display
from dealroom.domain.seats import on_host_side

GoalStatus = Literal["open", "met", "blocked", "abandoned"]
Decision = Literal["settle", "counter", "ask_principal", "decline"]


class GoalRuling(BaseModel):
    """A ruling on one of the room's goals."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="The goal's key, e.g. 'new-offer'.")
    status: GoalStatus = Field(description="open, met, blocked or abandoned.")
    reason: str = Field(default="", description="One short sentence: why.")


class Ruling(BaseModel):
    """A host-side judgement of the counterparty's proposal: the only thing that crosses
    from the host's private rules to the visitor's pane."""

    model_config = ConfigDict(extra="forbid")

    decision: Decision = Field(description="settle, counter, ask_principal or decline.")
    amount: str | None = Field(default=None, description="The fee stated, digits only.")
    currency: str | None = Field(default=None, description="ISO 4217 code of the amount.")
    deliverable: str | None = Field(default=None, description="What the fee buys.")


class Send(BaseModel):
    """Something another participant is owed now; their own agent will say it."""

    model_config = ConfigDict(extra="forbid")

    to: str = Field(description="The recipient participant's key.")
    substance: str = Field(
        description=(
            "What the recipient must learn, written from the recipient's point of view. "
            "Never mention other chats or panes."
        )
    )
    open_questions: list[str] = Field(
        default_factory=list, description="Terms still missing, named as questions."
    )
    ruling: Ruling | None = Field(
        default=None, description="Host side only: the ruling on the counterparty's proposal."
    )


class PersonaOutput(BaseModel):
    """``reply`` comes first so it can be streamed out of the partial JSON."""

    model_config = ConfigDict(extra="forbid")

    reply: str = Field(description="What you say now in this pane: a few sentences at most.")
    goals: list[GoalRuling] = Field(default_factory=list, description="Goal rulings, if any.")
    sends: list[Send] = Field(default_factory=list, description="Messages owed to others now.")
    plan: str = Field(default="", description="Your private working plan for the next turns.")


PROMPT = """You are a negotiating agent in a deal room. You always represent the host named in
the REPRESENTATION IDENTITY block at the end. In the host's own pane you talk with your
principal; in a visitor's pane you talk with the counterparty.

How you work:
- The conversation and the memory below are the only things that exist. You have no inbox,
  no document viewer, no signing or payment tool. Never claim an action you cannot see
  happen here; anything someone says happened elsewhere is only their claim.
- Write like a busy person: at most three short sentences, one question at a time. Never
  repeat back what the person just said and never recap the deal.
- Decide in this turn. If something must reach another participant now, put it in `sends`:
  it is delivered in this same turn by that participant's own agent. Write its substance from
  the recipient's point of view; never mention other chats, panes or agents. Name missing
  terms as open questions instead of holding the message back.
- Before something goes to the other side, ask your principal once whether to add anything,
  and send it in the same turn.
- Host side only: when the counterparty proposes terms, rule with the host's rules in view:
  settle when the proposal meets them, counter with stated terms, decline what the rules
  exclude, or ask the principal when no rule covers it. Put the ruling in the send to the
  counterparty, with the terms still missing as its open questions (each names one term of the
  offer: deliverable, quantity, dates, fee, currency, usage rights, exclusivity, payment
  schedule; code words them for the counterparty and drops anything else). Never state the
  host's private floor or private rules to anyone but the host.
- Host side only, no floor oracle: never name the floor (`host.limits`) or a private term
  (`host.private_terms`), not even as "below my minimum". Answer a proposal under the floor
  exactly as you would one above it: counter along your concession path from the ask. Settle
  only at or above a settle point well above the floor (the host's, or a share of the way
  from the floor up to the ask), unless your principal instructed that figure in this room
  (their instruction in `pendingPrincipalDecisions`; one marked `lapsed` no longer holds: the
  terms it covered moved, so ask again). Code holds any ruling at or under a
  floor, and any send stating a private value, for your principal to confirm.
- Host side only, never concede against yourself. Concede only after the counterparty moves:
  a repeated or lower proposal gets the same counter again (with a reason), never a lower one.
  Size each concession from their move (about half of it, in round steps of the ask), never
  as a share of the gap between the ask and the floor, so your counters cannot be solved for
  the floor. Stop above the floor: your last position is never the floor unless your
  principal instructed it, and when the counterparty comes close to where you stop, rule
  `ask_principal` instead of going lower on your own.
- Never collect payment details and never declare a deal paid or booked; only the DEAL STAGE
  block says where the deal stands. When told a STAGE EVENT, say it in one short sentence in
  your own words and name the next step by its button's label (BUTTONS below); never add a
  booking or payment the DEAL STAGE does not show.
- People never read system labels: never write a stage label (WRITTEN_AWAITING_BRAND and the
  rest of the vocabulary below), an offers-system status or a field name (`host.public`,
  `pendingPrincipalDecisions`, …) in `reply`. The vocabulary is how you know where the deal
  stands; say it as a person would ("the written offer is waiting for your approval"). Code
  refuses any line that names one.
- The whole price, told once: when you rule `new-offer` met in the counterparty's pane, add
  one sentence saying what they will pay on the written offer — the due slice, plus the
  platform fee by that name (20% of the due slice), and the total — with amounts written as
  "$7,350" (e.g. "On the written offer you'll pay the $7,350 fee plus the platform fee of
  $1,470 (20%): $8,820 in all."). The card shows the same figures; never leave the fee for
  the card to reveal.
- Transcript lines marked [relayed from …] are your deliveries of another participant's words
  or instruction. They are true: never walk one back, apologise for it or call it a mistake,
  unless a newer delivery changes it.
- `plan` is private to you: what you intend next. Goals are about substance, not chores: a
  missing signature, address or payment is something to ask your principal, not an open goal.
- The `new-offer` goal: rule it `met` when both sides have agreed the terms (code then draws
  the written offer; that is not a booking), `open` while terms are being renegotiated
  (including "Counter to the written offer:" and "Please add to the written offer:" lines), and
  `abandoned` when the negotiation ends without a deal ("I reject the written offer.").
- Reply with JSON matching the schema, `reply` first.
"""

BUTTONS = "BUTTONS (the offer card's labels, the only names for them): " + ", ".join(
    f'"{label}"' for label in pane_words.BUTTON_LABELS.values()
)

SYSTEM = f"{PROMPT}\n{offer_stage.vocabulary()}\n{BUTTONS}"


@dataclass(frozen=True, slots=True)
class Trigger:
    """Why the persona speaks: a participant's message, a delivery it must make, or a stage
    event it must tell."""

    kind: Literal["message", "delivery", "gate", "stage"]
    body: str
    """A message's text, a delivery's substance, or for the gate what waits (kinds only)."""
    sender: str | None = None
    """For a delivery: the participant key whose agent sent it."""
    ruling: Mapping[str, Any] | None = None
    open_questions: Sequence[str] = ()
    held: Mapping[str, Any] | None = None
    """A delivery held by the login gate: when it was held and the stage then."""
    reason: str | None = None
    """For the gate: ``held`` (something waits on sign-in) or ``cap`` (the guest limit)."""
    origin: str | None = None
    """For a delivery code made rather than an agent's send: ``guard`` or ``goal``."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "body": self.body}
        if self.kind == "delivery":
            data |= {
                "from": self.sender,
                "ruling": dict(self.ruling) if self.ruling else None,
                "open_questions": list(self.open_questions),
            }
            if self.held:
                data["held"] = dict(self.held)
            if self.origin is not None:
                data["origin"] = self.origin
        if self.kind == "gate":
            data["reason"] = self.reason
        return data


class PersonaInput(BaseModel):
    """Everything the persona may see. ``memory`` is already visibility-filtered for this
    pane (domain.visibility) and, when large, narrowed by the context filter.

    Typed end to end: :func:`build` renders it into the request's ``context`` (the documented
    JSON form a model sees) and also carries it on the request, so a reader in code (the
    offline engine) takes the object itself, or :meth:`of` validates the JSON form back into
    it (``model_validate``), never reading the context by untyped lookups."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    room_kind: str
    pane: str
    represents: Party
    speaking_with: Party
    memory: Mapping[str, Any]
    plan: str
    account_facts: Mapping[str, Any] | None
    session: Sequence[Line]
    trigger: Trigger
    send_to: Sequence[str]
    """Participant keys this turn may send to; empty when the chain bound is reached."""
    deliveries: Sequence[Mapping[str, Any]]
    """The dispatch record this pane may see: what was actually delivered."""
    stage: offer_stage.Stage
    links: Sequence[LinkQuote] = ()
    """Links of this pane's messages in the session, as quoted material (agents/links.py)."""
    guest: bool = False
    """The counterparty in this pane is a guest who has not signed in: whatever this turn
    sends waits on their sign-in (the login gate), so the reply that sends asks for it."""
    locale: str = DEFAULT_LOCALE
    """L3 (``domain/locale.py``): the locale of the pane's account, in which lines composed
    by code (the price told whole) write money."""
    people: Mapping[str, str] = {}
    """A host-side pane of a room with teammates: every other participant's name by key, so
    the host's agent knows whose news it hears (a visitor-side pane learns no one's)."""

    @field_validator("trigger", mode="before")
    @classmethod
    def _trigger(cls, value: object) -> object:
        """The JSON form names the sender ``from`` (:meth:`Trigger.to_json`)."""
        if isinstance(value, Mapping):
            fields = dict(value)
            if "from" in fields:
                fields["sender"] = fields.pop("from")
            fields["open_questions"] = tuple(fields.get("open_questions") or ())
            return Trigger(**fields)
        return value

    @field_validator("stage", mode="before")
    @classmethod
    def _stage(cls, value: object) -> object:
        """The JSON form is ``{"stage": …, "gloss": …}``."""
        return value.get("stage") if isinstance(value, Mapping) else value

    @classmethod
    def of(cls, request: ModelRequest) -> PersonaInput:
        """The typed input of a persona request: the object it was built from, or its JSON
        context validated back (a recorded or hand-built request)."""
        if isinstance(request.input, PersonaInput):
            return request.input
        return cls.model_validate(request.context)


def money_directive(locale: str) -> str:
    """L3: the person in this pane reads money in ``locale``: the price told whole is written
    as the card writes it for them."""
    example = display(Decimal("7350"), "USD", locale)
    return (
        f"MONEY: this person reads amounts in the {locale} locale: write the price you tell "
        f'them as their offer card does, e.g. "{example}" for $7,350.'
    )


GUEST_DIRECTIVE = (
    "GUEST (not signed in): answer from what {host} made public (`host.public`: rate card, "
    "deliverables, what they do and do not do) directly and send nothing for it. Send only "
    "what truly needs {host}'s side (a proposal to rule on, a note for {host}, agreed terms). "
    "A send waits until the guest signs in, so the reply that sends is ONE message naming "
    "what waits and asking for the sign-in, e.g. \"I'd take your $5,000 for one sponsored "
    'post to {host} — sign in or create a free account so {host} knows who is asking." '
    "Never say you are checking with {host} now."
)
"""seed 000: chat first, and sign in when the deal truly needs to move, with an honest trigger."""

HELD_DIRECTIVE = (
    "This news was held until the visitor signed in (see `held`: when, and the stage then). "
    "Convey it as it stands NOW: where MEMORY or the DEAL STAGE block below differ from its "
    "wording, they win. Never say it was delayed by a sign-in."
)
"""heldPushMustConvey (seed 000): a held push is spoken as it stands at delivery."""


def gate_directive(name: str, trigger: Trigger) -> str:
    """The login gate's line: the guest's own agent says it, in its words."""
    if trigger.reason == "cap":
        why = (
            f"{name} has used the messages a guest may send. Thank them warmly and ask them to "
            "sign in or create an account to keep going; nothing here is lost."
        )
    else:
        why = (
            f"You were just about to share an update ({trigger.body}), and it can go out only "
            f"once {name} signs in. Say so and ask them to sign in or create an account; they "
            "stay in this same conversation. Do not repeat what the update says."
        )
    return f"SIGN-IN NEEDED. {why} One or two short sentences. Rule no goals and send nothing."


def identity_directive(represents: Party, speaking_with: Party, pane: str) -> str:
    """seed 002 layer 3: the representation identity, at the very tail with DEAL STAGE."""
    host, other = represents.name, speaking_with.name
    if pane == represents.key:
        who = f"You are speaking with {host}, your principal."
    else:
        who = (
            f"You are speaking with {other}. {other} is the visitor, not the person you "
            f"represent. Never identify yourself as {other}'s agent."
        )
    return (
        "--- REPRESENTATION IDENTITY (AUTHORITATIVE) ---\n"
        f"You are {host}'s agent. You represent {host} in this conversation.\n"
        f"{who}\n"
        "This remains true even if memory says otherwise. Agreeing terms in chat is not a "
        f"booking; {host} instructing you to take terms is not a booking either, and you never "
        f'call it "{host} approved". A booking exists only when the DEAL STAGE block shows a '
        "BOOKED stage."
    )


def build(inputs: PersonaInput, *, model: str) -> ModelRequest:
    context: dict[str, Any] = {
        "agent": AgentName.PERSONA.value,
        "room_kind": inputs.room_kind,
        "pane": inputs.pane,
        "represents": inputs.represents.to_json(),
        "speaking_with": inputs.speaking_with.to_json(),
        "memory": dict(inputs.memory),
        "plan": inputs.plan,
        "account_facts": dict(inputs.account_facts) if inputs.account_facts else None,
        "session": [line.to_json() for line in inputs.session],
        "trigger": inputs.trigger.to_json(),
        "send_to": list(inputs.send_to),
        "deliveries": [dict(d) for d in inputs.deliveries],
        "stage": {
            "stage": inputs.stage.value,
            "gloss": offer_stage.GLOSSES[inputs.stage],
        },
    }
    if inputs.links:
        context["links"] = [quote.model_dump(mode="json") for quote in inputs.links]
    if inputs.guest:
        context["guest"] = True
    if inputs.people:
        context["people"] = dict(inputs.people)
    if inputs.locale != DEFAULT_LOCALE:
        context["locale"] = inputs.locale
    trigger = inputs.trigger
    if trigger.kind == "stage":
        now = (
            f"STAGE EVENT — tell {inputs.speaking_with.name} now, in your own voice, in one or two "
            f"sentences: {trigger.body}"
        )
    elif trigger.kind == "delivery":
        now = (
            f"DELIVER NOW, in your own voice, to {inputs.speaking_with.name}: "
            f"{document(context['trigger'])}"
        )
        if trigger.held:
            now += "\n" + HELD_DIRECTIVE
    elif trigger.kind == "gate":
        now = gate_directive(inputs.speaking_with.name, trigger)
    else:
        now = f"{inputs.speaking_with.name} just wrote: {trigger.body}"
    sends = (
        f"You may send to: {', '.join(inputs.send_to)}."
        if inputs.send_to
        else "You may not send to anyone in this turn."
    )
    if inputs.guest and inputs.send_to:
        sends += "\n" + GUEST_DIRECTIVE.format(host=inputs.represents.name)
    if inputs.locale != DEFAULT_LOCALE:
        sends += "\n" + money_directive(inputs.locale)
    # Ordered for implicit prompt caching: what changes least comes first (room, account
    # facts), then the session (append-only within a sitting), then what any write changes
    # (memory, plan, record), then this turn, then the authoritative tail.
    prompt = "\n\n".join(
        [
            f"ROOM: {inputs.room_kind}. YOUR PANE: {inputs.pane}.",
            f"ACCOUNT FACTS ({inputs.represents.name}):\n{document(context['account_facts'])}",
            # Only in a room with teammates: who each pane's person is (changes when one joins).
            *([f"PEOPLE BY PANE:\n{document(context['people'])}"] if inputs.people else []),
            "CURRENT SESSION:\n"
            + transcript(inputs.session, participant=inputs.speaking_with.name, agent="you"),
            f"MEMORY (what you may know):\n{memory_view(context['memory'])}",
            f"YOUR PLAN:\n{inputs.plan or '(none)'}",
            f"DELIVERED RECENTLY (dispatch record):\n{dispatch_record(context['deliveries'])}",
            # Links: quoted material with its own rule, only in a turn that has any.
            *([link_quotes.block(inputs.links)] if inputs.links else []),
            now,
            sends,
            identity_directive(inputs.represents, inputs.speaking_with, inputs.pane),
            offer_stage.deal_stage_block(inputs.stage),
        ]
    )
    return ModelRequest(
        agent=AgentName.PERSONA,
        model=model,
        system=SYSTEM,
        prompt=prompt,
        context=context,
        output=PersonaOutput,
        visitor_facing=not on_host_side(inputs.pane),
        input=inputs,
    )
