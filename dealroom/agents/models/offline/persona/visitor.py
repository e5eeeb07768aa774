"""The visitor's pane: the visitor's own messages, and what the host's side sends there, said
in the agent's own voice. Everything here reads only the visitor-visible context."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import assert_never

from dealroom.agents.models.offline.common import (
    _a,
    _at,
    _is_probe,
    _map,
    _money_from,
    _str,
    _the,
)
from dealroom.agents.models.offline.offer_talk import (
    Notice,
    Shortcut,
    ShortcutKind,
    is_payment_claim,
    is_status_ask,
    notice,
    read_notice,
    read_shortcut,
    request_notice,
)
from dealroom.agents.models.offline.persona.held import gate_on_send
from dealroom.agents.models.offline.persona.known import (
    known_date,
    known_deliverable,
    public_answer,
    standing_counter,
    unit_priced,
)
from dealroom.agents.models.offline.persona.turn import (
    GREETING,
    NEW_OFFER,
    Turn,
    goal_status,
    is_question,
    last_dispatch,
    pane_rulings,
    reopen,
)
from dealroom.agents.persona import GoalRuling, PersonaOutput, Send
from dealroom.domain.errors import DomainError
from dealroom.domain.money import pay_now_line, quote
from dealroom.domain.offer_stage import Stage
from dealroom.domain.reader import read_schedule
from dealroom.domain.terms import DateMention, Intent, Money, find_amounts, format_money, intent_of

_BOT = re.compile(r"\b(?:bot|robot|an ai|a human|real person|human being|chatgpt)\b", re.I)


def _cannot_share(turn: Turn) -> str:
    return f"I can't share {turn.host}'s private terms. What budget do you have in mind?"


def visitor_message(turn: Turn) -> PersonaOutput:
    body = turn.body
    shortcut = read_shortcut(body)
    if shortcut is not None:
        return _visitor_shortcut(turn, shortcut)
    if _is_probe(body):
        return turn.out(_cannot_share(turn))
    if is_payment_claim(body):
        # Never take card details or a claimed payment in chat: only the stage says it.
        return turn.out(turn.about_stage(body))
    amounts = find_amounts(body, default_currency=turn.currency)
    if amounts:
        return _visitor_proposal(turn, amounts[-1])
    said = intent_of(body)
    if turn.plan.change and said is not None and "?" not in body:
        return _visitor_on_change(turn, said)
    standing = standing_counter(turn)
    if standing is None and said is Intent.YES and "?" not in body:
        return turn.out(_nothing_to_agree(turn))
    if standing is not None and said is Intent.YES and "?" not in body:
        money, slug = standing
        quantity = max(turn.plan.quantity, 1)
        reason = f"{turn.other} agreed to {format_money(money)} for {_the(slug, quantity)}."
        goals = [GoalRuling(key=NEW_OFFER, status="met", reason=reason)]
        sends = []
        if turn.host_key in turn.send_to:
            substance = f"{turn.other} agrees to {_the(slug, quantity)} at {format_money(money)}."
            sends.append(Send(to=turn.host_key, substance=substance))
            reply = f"Great, I'll let {turn.host} know."
        else:
            reply = "Great — noted."
        plan = turn.plan.but(agreed=money, deliverable=slug or "")
        return turn.out(_with_price(turn, reply, money), plan, goals=goals, sends=sends)
    if is_status_ask(body):
        return turn.out(turn.about_stage(body))
    if _BOT.search(body):
        reply = f"I'm {turn.host}'s agent and I handle these conversations for {turn.host}. "
        return turn.out(reply + _next_question(turn))
    if is_question(body):
        public = public_answer(turn, body)
        return turn.out(
            f"{public} What budget do you have in mind?" if public else _cannot_share(turn)
        )
    greeting = f"{turn.hello()} " if GREETING.match(body) else ""
    if standing is not None and said is Intent.NO:
        return turn.out("Understood. What budget would work for you?")
    return turn.out(greeting + _next_question(turn))


def _nothing_to_agree(turn: Turn) -> str:
    """A yes with no counter standing: point to the written offer and its next step when one
    exists, else say what the yes is to, else ask for the one missing term by name."""
    if turn.stage is not Stage.NO_WRITTEN_OFFER:
        return f"The written offer is above. {turn.about_stage('where does it stand?')}"
    # A yes is never answered with "what would you like to propose": it is a yes to terms
    # already on the table (being drawn, or awaiting the host's answer), else the one term
    # still missing is asked for by name.
    wanted = known_deliverable(turn)
    what = _the(wanted.slug, wanted.quantity) if wanted is not None else None
    if turn.plan.proposal is not None and turn.plan.seen_ruling == last_dispatch(turn):
        asked = format_money(turn.plan.proposal)
        return (
            f"Glad to hear it — {turn.host} hasn't answered your {asked} yet; "
            "I'll come back to you here as soon as they do."
        )
    agreed = turn.plan.settled or turn.plan.agreed
    if agreed is not None:
        terms = f"{format_money(agreed)} for {what}" if what else format_money(agreed)
        return f"Glad we agree on {terms} — the written offer comes next, here."
    if what is None:
        return "Glad to hear it — which deliverable are we agreeing on?"
    return f"Glad to hear it — what fee are we agreeing on for {what}?"


def _visitor_on_change(turn: Turn, said: Intent) -> PersonaOutput:
    """The visitor answers the host's change to the written offer: a yes settles the goal
    again (code draws the new version), a no leaves the written offer as it is."""
    plan = turn.plan.but(change="")
    can_send = turn.host_key in turn.send_to
    goals = []
    if said is Intent.YES:
        reason = f"{turn.other} agreed to the change to the written offer."
        goals.append(GoalRuling(key=NEW_OFFER, status="met", reason=reason))
        substance = notice(Notice.AGREES, turn.other)
        reply = f"Great, I'll let {turn.host} know." if can_send else "Great — noted."
    else:
        substance = notice(Notice.REFUSES, turn.other)
        reply = "Understood — the written offer stays as it is" + (
            f", and I'll let {turn.host} know." if can_send else "."
        )
    sends = [Send(to=turn.host_key, substance=substance)] if can_send else []
    return turn.out(reply, plan, goals=goals, sends=sends)


def _visitor_shortcut(turn: Turn, shortcut: Shortcut) -> PersonaOutput:
    """The visitor pressed Counter, Reject or Add on the written offer (ARCHITECTURE
    "Offers"): the line goes to the host's side like any proposal; the row stays until an
    agent's ruling updates or closes it."""
    # Whatever counter stood here, this line answers it: a later "ok" does not take it.
    plan = turn.plan.but(counter=None, change="", seen_ruling=last_dispatch(turn))
    can_send = turn.host_key in turn.send_to
    amounts = (
        find_amounts(shortcut.text, default_currency=turn.currency)
        if shortcut.kind is ShortcutKind.COUNTER
        else []
    )
    other, host = turn.other, turn.host
    goals: list[GoalRuling]
    sends: list[Send] = []
    match shortcut.kind:
        case ShortcutKind.REJECT:
            # Abandoned of a live new-offer closes the written offer (code does it).
            reason = f"{other} rejected the written offer."
            goals = [GoalRuling(key=NEW_OFFER, status="abandoned", reason=reason)]
            if can_send:
                substance = notice(Notice.REJECTED, other, shortcut.text)
                sends.append(Send(to=turn.host_key, substance=substance))
            reply = "Understood — the written offer will be closed" + (
                f", and I'll let {host} know." if can_send else "."
            )
        case ShortcutKind.COUNTER if amounts:
            return _visitor_proposal(turn, amounts[-1])
        case ShortcutKind.COUNTER | ShortcutKind.ADD:
            if not shortcut.text:
                return turn.out("What would you like changed in the written offer?", plan)
            verb = "add to" if shortcut.kind is ShortcutKind.ADD else "change"
            goals = reopen(turn, f"{other} asked to {verb} the written offer.")
            if can_send:
                sends.append(Send(to=turn.host_key, substance=request_notice(shortcut, other)))
                reply = f"Thanks — I'm checking that with {host} now and will come back to you."
            else:
                reply = f"Thanks — noted; I'll put it to {host}."
        case _:
            assert_never(shortcut.kind)
    return turn.out(reply, plan, goals=goals, sends=sends)


def _next_question(turn: Turn) -> str:
    """One short question that moves the deal: what, then budget, then when."""
    wanted = known_deliverable(turn)
    slug = wanted.slug if wanted is not None else None
    if slug is None:
        return "What deliverable do you have in mind?"
    proposals = _map(_map(turn.memory.get("deal")).get("proposals")).values()
    has_amount = any(_map(proposal).get("amount") for proposal in proposals)
    if not (has_amount or turn.plan.proposal is not None):
        return (
            f"What budget do you have in mind for {_the(slug, wanted.quantity if wanted else 1)}?"
        )
    if known_date(turn) is None:
        return "Which date are you planning for?"
    return f"Anything else {turn.host} should know?"


def _visitor_proposal(turn: Turn, amount: Money) -> PersonaOutput:
    """The visitor names an amount: carry it to the host's side, name the missing terms."""
    wanted = known_deliverable(turn)
    slug = wanted.slug if wanted is not None else None
    quantity = wanted.quantity if wanted is not None else 1
    if quantity > 1 and unit_priced(turn.body):
        amount = Money(amount.amount * quantity, amount.currency)  # "$7,000 per post"
    date = known_date(turn)
    shown = format_money(amount)
    what = f"proposes {_a(slug, quantity)} for {shown}" if slug else f"offers {shown}"
    when = f" on {date.label() if isinstance(date, DateMention) else date}" if date else ""
    open_questions = []
    if slug is None:
        open_questions.append("Which deliverable?")
    if date is None:
        open_questions.append("Which date?")
    plan = turn.plan.but(
        proposal=amount,
        deliverable=slug or "",
        quantity=quantity if quantity > 1 else 0,
        # A counter already here is answered by this proposal: a later yes is not to it.
        seen_ruling=last_dispatch(turn),
        counter=None,
        change="",
    )
    goals = []
    if goal_status(turn.memory, NEW_OFFER) != "open":
        goals.append(
            GoalRuling(key=NEW_OFFER, status="open", reason=f"{turn.other} proposed terms.")
        )
    sends = []
    if turn.host_key in turn.send_to:
        substance = f"{turn.other} {what}{when}."
        sends.append(Send(to=turn.host_key, substance=substance, open_questions=open_questions))
        reply = f"Thanks — I'm checking that with {turn.host} now and will come back to you here."
    else:
        reply = "Thanks — noted. " + (
            "Which deliverable is that for?" if slug is None else "Which date are you planning for?"
        )
    offered = f"your {shown} for {_a(slug, quantity)}" if slug else f"your {shown}"
    output = turn.out(reply, plan, goals=goals, sends=sends)
    return gate_on_send(turn, output, f"{offered}{when} to {turn.host}")


def visitor_delivery(turn: Turn) -> PersonaOutput:
    """The host's side sent something to this pane: say it in our own voice."""
    ruling = turn.trigger.ruling or {}
    decision = _str(ruling.get("decision"))
    slug = _str(ruling.get("deliverable")) or None
    money = _money_from(ruling.get("amount"), ruling.get("currency"))
    plan = turn.plan
    goals: list[GoalRuling] = []
    host = turn.host
    body = turn.trigger.body.strip()
    said = read_notice(body)
    if decision:
        plan = plan.but(change="")  # a ruling answers whatever change was standing
    quantity = max(plan.quantity, 1) if plan.deliverable == (slug or "") else 1
    if decision == "counter" and money is not None:
        shown = f"{_the(slug, quantity)} at {format_money(money)}"
        reply = f"{host} can do {shown}. Does that work for you?"
        if _repeats_the_standing_counter(turn, money, slug):
            # policy NP5/NP6: the counter did not move because the proposal did not
            reply = f"{host} is staying at {format_money(money)} — that stands unless your budget "
            reply += "moves. Does that work for you?"
        plan = plan.but(counter=money, deliverable=slug or "")
    elif decision == "settle" and money is not None:
        reply = f"Good news: {format_money(money)} for {_the(slug, quantity)} works for {host}."
        if said is Notice.AGREES:
            reply = f"Good news: {body}"
        reason = f"{format_money(money)} for {_the(slug, quantity)} settled with {turn.other}."
        goals.append(GoalRuling(key=NEW_OFFER, status="met", reason=reason))
        if plan.agreed != money:  # told once: the brand's own yes already carried the price
            reply = _with_price(turn, reply, money)
        plan = plan.but(counter=None, settled=money, deliverable=slug or "")
    elif decision == "decline":
        reply = f"{host} won't be able to take this one on."
        goals.append(GoalRuling(key=NEW_OFFER, status="abandoned", reason=f"{host} declined."))
        plan = plan.but(counter=None)
    elif decision == "ask_principal":
        reply = f"I'm checking this with {host} and will come back to you."
    elif said in (Notice.ADD, Notice.CHANGE):
        # The host asks to change the written offer: the visitor's yes or no answers it.
        reply = f"{body} Does that work for you?"
        plan = plan.but(change="asked")
    else:
        if said is not None:
            plan = plan.but(change="")
        reply = body or f"{host} has nothing new yet."
    # Missing terms are worth asking about only while the deal is alive, and one question at a
    # time: a reply that already asks one (a counter's "Does that work for you?") keeps it.
    questions = list(turn.trigger.open_questions) if decision != "decline" else []
    if questions and "?" not in reply and reply.count(".") < 3:
        reply = f"{reply} {questions[0]}"
    return turn.out(reply, plan, goals=goals)


def _with_price(turn: Turn, reply: str, fee: Money) -> str:
    """P11: terms are agreed and the written offer is about to be drawn, so the brand hears
    the whole price now — the due slice and the platform fee by name — never first on the
    card. The schedule is the newest one the brand stated (this session, else as the deal
    records it; the whole fee when none is)."""
    percent = _str(_at(turn.memory, "deal.due_at_booking_percent")) or "100"
    for author, body in reversed([*turn.session, ("participant", turn.body)]):
        stated = read_schedule(body) if author == "participant" else None
        if stated is not None:
            percent = stated
            break
    try:
        told = pay_now_line(quote(fee.amount, fee.currency, Decimal(percent)), turn.locale)
        return f"{reply} {told}"
    except DomainError:
        return reply  # no payable quote (an unknown currency): the card says nothing either


def _repeats_the_standing_counter(turn: Turn, money: Money, slug: str | None) -> bool:
    """Whether the last ruling that crossed here was a counter at this same figure."""
    rulings = pane_rulings(turn)
    if not rulings:
        return False
    last = _map(rulings[-1])
    return (
        last.get("decision") == "counter"
        and (_str(last.get("deliverable")) or None) == slug
        and _money_from(last.get("amount"), last.get("currency")) == money
    )
