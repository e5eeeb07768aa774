"""The host-side ruling: a delivery from the visitor's side reaches the host's pane, the agent
rules on it with the host's private rules in view, tells the principal, and sends only the
ruling across (seed 000 "Firewalled conversations in a room")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, assert_never

from dealroom.agents.models.offline.common import (
    _EXCLUSION_RULE,
    _a,
    _at,
    _category,
    _leaves,
    _map,
    _ruling,
    _str,
    _strings,
    _the,
)
from dealroom.agents.models.offline.offer_talk import Notice, read_notice
from dealroom.agents.models.offline.persona.policy import Judgement, Rate, rule
from dealroom.agents.models.offline.persona.principal import counter_history
from dealroom.agents.models.offline.persona.turn import Turn, party_name
from dealroom.agents.persona import PersonaOutput, Send
from dealroom.domain import instructions
from dealroom.domain.deliverables import Deliverable, parse_slug, rate_slug, read_deliverables
from dealroom.domain.limits import limits_of
from dealroom.domain.terms import (
    Intent,
    Money,
    find_amounts,
    format_money,
    intent_of,
    parse_money,
)

GENERIC_DECISION_KEYS: Final = frozenset({"proposal", "fee", "offer", "price", "rate", "deal"})
LAST_STRETCH_ASK: Final = "under the lowest I go without you"
"""How a proposal near the hold point is put to the principal (policy NP7)."""
GENERIC_RATE_KEYS: Final = ("standard", "general", "default", "any")
"""Rate entries recorded without a deliverable (Distil writes ``standard``)."""


def _exclusions(memory: Mapping[str, Any]) -> list[str]:
    host = _map(memory.get("host"))
    words = [w.strip().lower() for w in _strings(host.get("exclusions")) if w.strip()]
    for line in _strings(host.get("rules")):
        match = _EXCLUSION_RULE.search(line)
        if match:
            words.append(_category(match.group(1)))
    return list(dict.fromkeys(w for w in words if w))


def _excluded(turn: Turn, sender: str) -> str | None:
    """The exclusion a proposal touches: in what it says, the sender's branch or the deal."""
    texts = [turn.body]
    texts += [text for _path, text in _leaves(turn.memory.get(sender))]
    texts += [text for _path, text in _leaves(turn.memory.get("deal"))]
    joined = " ".join(texts)
    for word in _exclusions(turn.memory):
        if re.search(rf"\b{re.escape(word)}", joined, re.IGNORECASE):
            return word
    return None


def rate_for(memory: Mapping[str, Any], wanted: Deliverable | None, currency: str) -> Rate:
    """The host's rate covering ``wanted`` (DV1-DV3 in ``domain.deliverables``). A proposal
    naming no deliverable takes the single recorded rate; any proposal falls back to a rate
    recorded without a deliverable. Floors are read only through ``limits_of``."""
    rates = {
        k: _map(v) for k, v in _map(_at(memory, "host.rates")).items() if isinstance(v, Mapping)
    }
    limits = limits_of(memory)
    keys = list(dict.fromkeys([*rates, *limits]))
    slug = wanted.slug if wanted is not None else None
    key = rate_slug(wanted, keys) if wanted is not None else (keys[0] if len(keys) == 1 else None)
    if key is None:
        key = next((k for k in GENERIC_RATE_KEYS if k in keys), None)
    else:
        slug = key if wanted is None else slug
    if key is None:
        return Rate(slug, None, None)
    ask = parse_money(_str(rates.get(key, {}).get("ask")), default_currency=currency)
    limit = limits.get(key)
    floor = Money(limit.floor, limit.currency) if limit is not None else None
    return Rate(slug, ask, floor)


def _instruction(turn: Turn, slug: str | None, offer: Money) -> Intent | None:
    """A host-side principal instruction that covers this proposal (pendingPrincipalDecisions,
    side host). One given on a question about a higher amount does not cover a lower one."""
    decisions = _map(turn.memory.get("pendingPrincipalDecisions"))
    for key in sorted(decisions):
        entry = _map(decisions[key])
        if _str(entry.get("side") or turn.host_key) != turn.host_key:
            continue
        if entry.get(instructions.LAPSED) or instructions.moved(entry, turn.memory):
            continue  # PI2: the terms it covered moved; it is no longer the principal's word
        if key != slug and key not in GENERIC_DECISION_KEYS:
            continue
        said = intent_of(_str(entry.get("principalInstruction")))
        if said is None:
            continue
        question = _str(entry.get("question"))
        if said is Intent.NO and LAST_STRETCH_ASK in question:
            continue  # a no to a proposal near our hold point kept our counter (NP7), no more
        asked = find_amounts(question, default_currency=offer.currency)
        if (
            said is Intent.YES
            and asked
            and any(a.currency == offer.currency and a.amount > offer.amount for a in asked)
        ):
            continue
        return said
    return None


def _strip_names(text: str, memory: Mapping[str, Any], key: str) -> str:
    # A company called "Reel Studios" must not read as a deliverable or an amount.
    branch = _map(memory.get(key))
    for field in ("name", "company"):
        name = _str(branch.get(field)).strip()
        if name:
            text = text.replace(name, " ")
    return text


def host_ruling(turn: Turn) -> PersonaOutput:
    """A delivery from the visitor's side reaches the host pane: rule on it with the host's
    private rules in view, tell the principal, and send only the ruling across."""
    sender = turn.trigger.sender or "visitor"
    visitor = party_name(turn.memory, sender, turn.people)
    text = _strip_names(turn.body, turn.memory, sender)
    amounts = find_amounts(text, default_currency=turn.currency)
    stated = amounts  # as the note says them: a replay's note names every figure, in order
    about_offer = read_notice(text)
    if about_offer is not None:
        return _host_notice(turn, about_offer, sender)
    named = read_deliverables(text)
    wanted = named[-1] if named else None
    proposals = _map(_at(turn.memory, "deal.proposals"))
    if wanted is None and len(proposals) == 1:
        wanted = parse_slug(str(next(iter(proposals))))
    held = bool(turn.trigger.held)
    if (held or not amounts) and wanted is not None:
        # A held note is ruled on as the terms stand now (heldPushMustConvey): what memory
        # records for the deliverable wins over the note's older wording.
        recorded = parse_money(_str(_at(proposals, f"{wanted.slug}.amount")))
        amounts = [recorded] if recorded else amounts
    excluded = _excluded(turn, sender)
    if not amounts and excluded is None:
        # Not a proposal: tell the principal what came in (it is already from their side).
        return turn.out(turn.body.strip() or "Nothing new.")
    offer = amounts[-1] if amounts else None
    rate = rate_for(turn.memory, wanted, turn.currency)
    slug, quantity = rate.slug, (wanted.quantity if wanted is not None else 1)
    plan = turn.plan.but(with_=sender)
    if plan.deliverable != (slug or "") or max(plan.quantity, 1) != quantity:
        # Counters belong to one deliverable: a new one starts from the ask again.
        plan = plan.but(last_counter=None, counters=0, offered=None)
    plan = plan.but(deliverable=slug or "", quantity=quantity if quantity > 1 else 0)
    last, count = counter_history(plan, turn.memory, sender, slug)
    judgement: Judgement
    if excluded is not None:
        judgement = Judgement("decline", None, f"exclusion:{excluded}")
    else:
        assert offer is not None
        said = _instruction(turn, slug, offer)
        if said is Intent.YES:
            judgement = Judgement("settle", offer, "instruction")
        elif said is Intent.NO:
            judgement = Judgement("decline", None, "instruction")
        elif last is not None and last.currency == offer.currency and offer.amount >= last.amount:
            judgement = Judgement("settle", offer, "rate")  # our standing counter is taken
        else:
            judgement = rule(
                turn.memory, offer, rate, quantity, count, standing=last, previous=plan.offered
            )
            # The brand's own proposal (not its yes to our counter): its next one's move is
            # read against it (NP5, NP6).
            plan = plan.but(offered=offer)
    if judgement.decision == "ask_principal":
        assert offer is not None
        why = {
            "currency": f"your rates are in {turn.currency}",
            # NP7: no figure named here, so a yes covers this proposal and nothing lower.
            "last_stretch": f"that's close, but {LAST_STRETCH_ASK}",
        }.get(judgement.why, "I have no rate recorded for that")
        what = _a(slug, quantity)
        reply = f"{visitor} offers {format_money(offer)} for {what}; {why}. Should I take it?"
        hold = judgement.why == "last_stretch"
        # The visitor's side already said it is being checked: nothing is owed there yet.
        return turn.out(
            reply, plan.but(pending=offer, pending_deliverable=slug or "", pending_hold=hold)
        )
    plan = plan.but(pending=None, pending_deliverable="", pending_hold=False)
    can_send = sender in turn.send_to
    # Ask once whether to add anything, and still send in this same turn.
    tail = " — anything you want to add?" if can_send else "."
    asked = (
        f"{visitor} asked for {_a(slug, quantity)} at {format_money(offer)}"
        if offer
        else f"{visitor}'s request"
    )
    if held and offer and len({m.amount for m in stated}) > 1:
        figures = ", then ".join(dict.fromkeys(format_money(m) for m in stated))
        asked = f"{visitor} offered {figures} for {_a(slug, quantity)}"
    money = judgement.amount
    match judgement.decision:
        case "decline":
            act = "I'm declining" if can_send else "I'd decline"
            if judgement.why == "instruction":
                reply = f"{asked}. As you instructed, {act}{tail}"
            else:
                word = judgement.why.partition(":")[2]
                reply = f"{asked}, which touches your exclusions ({word}), so {act}{tail}"
            substance = f"{turn.host} won't be able to take this one on."
        case "settle":
            assert money is not None
            act = "I'm settling" if can_send else "I'd settle"
            reason = (
                "As you instructed,"
                if judgement.why == "instruction"
                else "That meets your terms, so"
            )
            reply = f"{asked}. {reason} {act} at {format_money(money)}{tail}"
            substance = f"{format_money(money)} for {_the(slug, quantity)} works for {turn.host}."
            plan = plan.but(settled=money)
        case "counter":
            assert money is not None
            reply = f"{asked}. {_counter_reason(judgement.why, can_send)} {format_money(money)}"
            the = _the(slug, quantity)
            if rate.floor is None:  # nothing to concede against: the host is asked (crossing C7)
                reply += (
                    f". I have no floor of yours recorded for {the}, so I won't go under your "
                    "rate. What is the least you would take?"
                )
            else:
                reply += tail
            if judgement.why in _HOLDING:
                substance = f"{turn.host} is staying at {format_money(money)} for {the}."
            else:
                substance = f"{turn.host} can do {the} at {format_money(money)}."
            plan = plan.but(last_counter=money, counters=count + 1)
        case "ask_principal":
            raise AssertionError("answered above")
        case _:
            assert_never(judgement.decision)
    sends = []
    if can_send:
        sends.append(
            Send(
                to=sender,
                substance=substance,
                open_questions=[] if judgement.decision == "decline" else _open_questions(turn),
                ruling=_ruling(judgement.decision, money, slug),
            )
        )
    return turn.out(reply, plan, sends=sends)


_HOLDING: Final = frozenset({"unmoved", "small_move"})
"""Counters that repeat the standing one (policy NP5, NP6)."""


def _counter_reason(why: str, can_send: bool) -> str:
    """How the principal is told the counter, with the policy's reason (never a figure but the
    counter itself)."""
    match why:
        case "unmoved":
            act = "I'm holding" if can_send else "I'd hold"
            return f"Their offer hasn't moved, so {act} at"
        case "small_move":
            act = "I'm holding" if can_send else "I'd hold"
            return f"That's barely a move, so {act} at"
        case "hold":
            act = "I'm countering" if can_send else "I'd counter"
            return f"{act}, as low as I go without you, at"
        case _:
            return "I'm countering at" if can_send else "I'd counter at"


def _host_notice(turn: Turn, said: Notice, sender: str) -> PersonaOutput:
    """The visitor's side says something about the written offer: never rule on it as a
    proposal (that would settle terms the principal has not seen). A change is put to the
    principal with the standing amount; anything else is only told."""
    body = turn.body.strip()
    plan = turn.plan.without_pending()
    match said:
        case Notice.ADD | Notice.CHANGE:
            proposals = _map(_at(turn.memory, "deal.proposals"))
            slug = plan.deliverable or (next(iter(proposals)) if len(proposals) == 1 else "")
            standing = plan.settled or (
                parse_money(_str(_at(proposals, f"{slug}.amount"))) if slug else None
            )
            plan = plan.but(
                with_=sender, pending_change=True, pending=standing, pending_deliverable=slug
            )
            # Naming the amount keeps the principal's yes to this one amount (see _instruction).
            stands = (
                f" The written offer stands at {format_money(standing)} for {_the(slug or None)}."
                if standing
                else ""
            )
            reply = f"{body}{stands} Should I take it?"
        case Notice.REJECTED:
            reply = f"{body} It will be closed."
        case Notice.AGREES | Notice.REFUSES | Notice.CANNOT:
            reply = body
        case _:
            assert_never(said)
    return turn.out(reply, plan)


def _open_questions(turn: Turn) -> list[str]:
    """The terms the visitor's side said are missing, passed back for the visitor to answer."""
    return list(turn.trigger.open_questions)
