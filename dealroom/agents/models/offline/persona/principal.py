"""The principal speaks: the home room, and the host's own pane of a deal room (an answer to
a question put to them, a button on the written offer, a question, or a rule to hold to)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, assert_never

from dealroom.agents.models.offline.common import (
    _humanise,
    _leaves,
    _list,
    _map,
    _money_from,
    _overlaps,
    _ruling,
    _the,
    _words,
)
from dealroom.agents.models.offline.offer_talk import (
    Notice,
    Shortcut,
    ShortcutKind,
    is_payment_claim,
    is_status_ask,
    notice,
    read_shortcut,
    request_notice,
)
from dealroom.agents.models.offline.persona.plan import Plan
from dealroom.agents.models.offline.persona.policy import Rate, rule
from dealroom.agents.models.offline.persona.turn import (
    GREETING,
    NEW_OFFER,
    Turn,
    is_question,
    party_name,
    reopen,
    visitor_key,
)
from dealroom.agents.models.offline.rates import CONFIRMATION, confirmation, host_rates
from dealroom.agents.persona import Decision, GoalRuling, PersonaOutput, Send
from dealroom.domain.deliverables import read_deliverables
from dealroom.domain.limits import StatedRate
from dealroom.domain.terms import (
    Intent,
    Money,
    deliverable_label,
    find_amounts,
    find_deliverables,
    format_money,
    intent_of,
)


def home(turn: Turn) -> PersonaOutput:
    body = turn.body
    if GREETING.match(body):
        reply = (
            f"Hi {turn.host} — tell me your rates and rules and I'll hold to them with visitors."
        )
    elif "?" not in body and (heard := _rates_heard(turn)):
        reply = heard  # "Do not go under 4k for reels" is a rule, not a question
    elif is_question(body):
        reply = answer_from_memory(turn.memory, body)
    else:
        reply = _after_confirmation(turn)
    return turn.out(reply)


def _previous_agent_line(turn: Turn) -> str:
    """The agent's last line before this message in the session ("" when none)."""
    lines = list(turn.session)
    if lines and lines[-1] == ("participant", turn.body):
        lines = lines[:-1]
    agent = [body for author, body in lines if author == "agent"]
    return agent[-1] if agent else ""


def _discussed(turn: Turn) -> str | None:
    """The deliverable the principal named last in this session before this message."""
    for author, body in reversed(turn.session):
        if author == "participant" and body != turn.body:
            named = read_deliverables(body)
            if named:
                return named[-1].slug
    return None


def _rates_heard(turn: Turn) -> str | None:
    """A rate rule the principal stated, confirmed back, or what of it could not be read asked
    about (domain.limits L3-L6; Distil records the same reading)."""
    reading = host_rates(
        turn.body, turn.memory, _previous_agent_line(turn), turn.currency, _discussed(turn)
    )
    return confirmation(reading)


def _after_confirmation(turn: Turn) -> str:
    """Anything else: a rule to hold to, or the principal's answer to our confirmation."""
    if CONFIRMATION in _previous_agent_line(turn) and intent_of(turn.body) is Intent.NO:
        return "Sorry about that — what should they be?"
    return "Noted — I'll hold to that with visitors."


_MEMORY_ANSWER_SKIP: Final = frozenset({"goals", "rulings", "offers", "pendingPrincipalDecisions"})


def answer_from_memory(memory: Mapping[str, Any], question: str) -> str:
    """Answer the principal from memory: the leaves about the deliverable the question names,
    else those whose path shares a word with it; otherwise say it is not recorded."""
    slugs = find_deliverables(question)
    words = _words(question)
    found: list[str] = []
    for path, value in _leaves(memory):
        segments = path.split(".")
        if segments[0] in _MEMORY_ANSWER_SKIP:
            continue
        if slugs:
            # A named deliverable narrows the answer to what is recorded about it.
            related = any(slug in segments or slug in find_deliverables(value) for slug in slugs)
        else:
            related = _overlaps(words, _words(" ".join(segments).replace("_", " ")))
        if related:
            label = " ".join(s for s in segments if s not in ("host", "rates", "public"))
            found.append(f"{deliverable_label(label) or path}: {_humanise(value)}")
    if not found:
        return "That's not recorded yet."
    return f"On record — {'; '.join(found[:4])}."


def principal_message(turn: Turn) -> PersonaOutput:
    body = turn.body
    shortcut = read_shortcut(body)
    if shortcut is not None:
        return _principal_shortcut(turn, shortcut)
    if is_payment_claim(body):
        return turn.out(turn.about_stage(body))
    pending = pending_ask(turn)
    previous = _previous_agent_line(turn)
    reading = host_rates(body, turn.memory, previous, turn.currency, _discussed(turn))
    if reading.floors:
        # "X, never below Y" is a rate to hold to (Distil records it), never an offer of Y.
        stated = reading.rates[-1]
        if pending is not None and pending.amount is not None and stated.ask is not None:
            return _rerule(turn, pending, stated)
        return turn.out(confirmation(reading) or "Noted — I'll hold to that with visitors.")
    said = intent_of(body)
    amounts = find_amounts(body, default_currency=turn.currency)
    if pending is not None and (said is not None or amounts):
        return instruct(turn, pending, said, amounts[-1] if amounts else None)
    if not amounts and is_status_ask(body):
        reply = turn.about_stage(body)
    elif GREETING.match(body):
        reply = f"Hi {turn.host} — nothing needs you right now."
    elif is_question(body):
        reply = answer_from_memory(turn.memory, body)
    elif said is not None and len(body.split()) <= 4:
        reply = "Okay."
    else:
        reply = confirmation(reading) or "Noted — I'll hold to that with visitors."
    return turn.out(reply)


@dataclass(frozen=True, slots=True)
class Asked:
    """What the principal is answering: a proposal put to them, or a change to the written
    offer (whose standing amount, if any, is ``amount``)."""

    amount: Money | None
    slug: str | None
    visitor_key: str
    change: bool = False
    hold: bool = False
    """A proposal under our last counter (policy NP7): a no keeps that counter standing."""


def counter_history(
    plan: Plan, memory: Mapping[str, Any], sender: str, slug: str | None
) -> tuple[Money | None, int]:
    """Our last counter and how many we made for this deliverable: from the plan, and from the
    rulings that crossed into the sender's pane (the record wins when it shows more)."""
    last, count = plan.last_counter, plan.counters
    rulings = _list(_map(memory.get("rulings")).get(sender))
    crossed = [
        entry
        for entry in map(_map, rulings)
        if entry.get("decision") == "counter" and (entry.get("deliverable") or None) == slug
    ]
    if len(crossed) > count:
        count = len(crossed)
        last = _money_from(crossed[-1].get("amount"), crossed[-1].get("currency")) or last
    return last, count


def instruct(turn: Turn, pending: Asked, said: Intent | None, told: Money | None) -> PersonaOutput:
    """The principal's instruction, carried to the visitor's side in this same turn. A chat
    yes lets the agent settle terms; it is never a booking (seed 000)."""
    plan = turn.plan.without_pending()
    asked, slug, to, host = pending.amount, pending.slug, pending.visitor_key, turn.host
    decision: Decision | None
    money: Money | None = None
    if told is not None and told != asked:
        decision, money = "counter", told
        reply = f"Understood — I'll offer them {format_money(told)}."
        substance = f"{host} can do {_the(slug)} at {format_money(told)}."
        same = plan.deliverable == (slug or "")
        _last, count = counter_history(plan if same else Plan(), turn.memory, to, slug)
        plan = plan.but(last_counter=told, counters=count + 1)
    elif said is Intent.NO and pending.change:
        # Refusing a change keeps the written offer; a decline would close it.
        decision = None
        reply = "Understood — I'll tell them the written offer stays as it is."
        substance = notice(Notice.CANNOT, host)
    elif said is Intent.NO and pending.hold and plan.last_counter is not None:
        # NP7: a no to a proposal under our last counter keeps that counter, not the deal off.
        decision, money = "counter", plan.last_counter
        reply = f"Understood — I'll stay at {format_money(money)}."
        substance = f"{host} is staying at {format_money(money)} for {_the(slug)}."
    elif said is Intent.NO:
        decision = "decline"
        reply = "Understood — I'll let them know you'll pass."
        substance = f"{host} won't be able to take this one on."
    elif asked is None:
        decision = None
        reply = "Understood — I'll tell them you agree to the change."
        substance = notice(Notice.AGREES, host)
    else:
        decision, money = "settle", asked
        reply = f"Understood — I'll tell them you'll take {format_money(asked)}."
        terms = f"{format_money(asked)} for {_the(slug)}"
        substance = (
            notice(Notice.AGREES, host, terms) if pending.change else f"{terms} works for {host}."
        )
        plan = plan.but(settled=asked)
    if slug:
        plan = plan.but(deliverable=slug)
    sends = []
    if to in turn.send_to:
        ruling = _ruling(decision, money, slug) if decision is not None else None
        sends.append(Send(to=to, substance=substance, ruling=ruling))
    else:
        reply = "Understood — noted for when they're back."
    return turn.out(reply, plan, sends=sends)


def _rerule(turn: Turn, pending: Asked, stated: StatedRate) -> PersonaOutput:
    """The principal answered a proposal put to them with a rate: rule on it by that rate."""
    assert pending.amount is not None
    plan = turn.plan.without_pending()
    slug, to = pending.slug, pending.visitor_key
    quantity = max(plan.quantity, 1) if plan.deliverable == (slug or "") else 1
    _last, count = counter_history(plan, turn.memory, to, slug)
    rate = Rate(slug, stated.ask, stated.floor)
    judgement = rule(turn.memory, pending.amount, rate, quantity, count)
    money = judgement.amount
    assert money is not None
    if judgement.decision == "settle":
        reply = f"Noted — that meets your rate, so I'll settle at {format_money(money)}."
        substance = f"{format_money(money)} for {_the(slug, quantity)} works for {turn.host}."
        plan = plan.but(settled=money)
    else:
        reply = f"Noted — I'll counter at {format_money(money)}."
        substance = f"{turn.host} can do {_the(slug, quantity)} at {format_money(money)}."
        plan = plan.but(last_counter=money, counters=count + 1)
    plan = plan.but(deliverable=slug or "")
    sends = []
    if to in turn.send_to:
        ruling = _ruling(judgement.decision, money, slug)
        sends.append(Send(to=to, substance=substance, ruling=ruling))
    else:
        reply = "Noted — I'll hold to that when they're back."
    return turn.out(reply, plan, sends=sends)


def pending_ask(turn: Turn) -> Asked | None:
    """The proposal or change put to the principal (``ask_principal``), from the plan or else
    from the last question in this session."""
    key = visitor_key(turn)
    plan = turn.plan
    if plan.pending is not None or plan.pending_change:
        return Asked(
            plan.pending,
            plan.pending_deliverable or None,
            key,
            plan.pending_change,
            plan.pending_hold,
        )
    agent_lines = [body for author, body in turn.session if author == "agent"]
    if agent_lines and agent_lines[-1].rstrip().endswith("Should I take it?"):
        amounts = find_amounts(agent_lines[-1], default_currency=turn.currency)
        slugs = find_deliverables(agent_lines[-1])
        if amounts:
            return Asked(amounts[0], (slugs[-1] if slugs else None), key)
    return None


def _principal_shortcut(turn: Turn, shortcut: Shortcut) -> PersonaOutput:
    """The host pressed Counter, Reject or Add on the written offer (ARCHITECTURE "Offers"):
    the line is their instruction about the written offer."""
    plan = turn.plan.without_pending()
    to = visitor_key(turn)
    can_send = to in turn.send_to
    slugs = find_deliverables(shortcut.text)
    slug = slugs[-1] if slugs else (plan.deliverable or None)
    amounts = (
        find_amounts(shortcut.text, default_currency=turn.currency)
        if shortcut.kind is ShortcutKind.COUNTER
        else []
    )
    host = turn.host
    match shortcut.kind:
        case ShortcutKind.REJECT:
            # Abandoned of a live new-offer closes the written offer (code does it).
            reason = f"{host} rejected the written offer."
            goals = [GoalRuling(key=NEW_OFFER, status="abandoned", reason=reason)]
            sends = []
            reply = "Understood — the written offer will be closed."
            if can_send:
                substance = f"{host} won't be able to take this one on."
                ruling = _ruling("decline", None, slug)
                sends.append(Send(to=to, substance=substance, ruling=ruling))
                reply = "Understood — the written offer will be closed, and I'll let them know."
            return turn.out(reply, plan, goals=goals, sends=sends)
        case ShortcutKind.COUNTER if amounts:
            said = instruct(turn, Asked(None, slug, to), None, amounts[-1])
            goals = reopen(turn, f"{host} countered the written offer.")
            return said.model_copy(update={"goals": goals})
        case ShortcutKind.COUNTER | ShortcutKind.ADD:
            if not shortcut.text:
                return turn.out("What should change in the written offer?", plan)
            goals = reopen(turn, f"{host} asked to change the written offer.")
            sends = []
            if can_send:
                sends.append(Send(to=to, substance=request_notice(shortcut, host)))
                name = party_name(turn.memory, to, turn.people)
                who = "them" if name == "The visitor" else name
                reply = f"Understood — I'll put that change to {who}."
            else:
                reply = "Understood — I'll put that change to them when they're back."
            return turn.out(reply, plan, goals=goals, sends=sends)
        case _:
            assert_never(shortcut.kind)
