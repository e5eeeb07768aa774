"""The persona's rules: the home room, the principal's own pane, the host-side ruling on a
proposal (``judge``), and the visitor's pane."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, assert_never

from dealroom.agents.models.offline.common import (
    _EXCLUSION_RULE,
    _a,
    _at,
    _category,
    _house_currency,
    _humanise,
    _is_probe,
    _leaves,
    _list,
    _map,
    _money_from,
    _overlaps,
    _read_plan,
    _ruling,
    _str,
    _strings,
    _the,
    _words,
    _write_plan,
)
from dealroom.agents.models.offline.offer_talk import (
    Notice,
    Shortcut,
    ShortcutKind,
    is_payment_ask,
    is_payment_claim,
    is_status_ask,
    notice,
    payment_answer,
    read_notice,
    read_shortcut,
    request_notice,
    stage_answer,
    stage_of,
)
from dealroom.agents.persona import Decision, GoalRuling, PersonaOutput, Send
from dealroom.domain.offer_stage import Stage
from dealroom.domain.terms import (
    DateMention,
    Intent,
    Money,
    deliverable_label,
    find_amounts,
    find_dates,
    find_deliverables,
    format_money,
    intent_of,
    money_code,
    parse_money,
    round_up,
)

NEW_OFFER: Final = "new-offer"
GENERIC_DECISION_KEYS: Final = frozenset({"proposal", "fee", "offer", "price", "rate", "deal"})


@dataclass(frozen=True, slots=True)
class _Turn:
    room_kind: str
    pane: str
    host_key: str
    host: str
    other: str
    memory: Mapping[str, Any]
    plan: dict[str, str]
    session: list[tuple[str, str]]
    trigger: Mapping[str, Any]
    send_to: list[str]
    currency: str
    stage: Stage

    @property
    def body(self) -> str:
        return _str(self.trigger.get("body"))

    @property
    def host_pane(self) -> bool:
        return self.pane == self.host_key

    def participant_lines(self) -> list[str]:
        return [body for author, body in self.session if author == "participant"]

    def about_stage(self, body: str) -> str:
        """seed 000 (the Sophie Bell reversal): where the deal stands comes from the DEAL
        STAGE alone, never from memory, the plan or what someone claims."""
        if is_payment_ask(body):
            return payment_answer(self.stage, host_pane=self.host_pane, host=self.host)
        return stage_answer(self.stage, host_pane=self.host_pane, host=self.host)


def _turn(context: Mapping[str, Any]) -> _Turn:
    represents = _map(context.get("represents"))
    speaking_with = _map(context.get("speaking_with"))
    memory = _map(context.get("memory"))
    session = [
        (_str(line.get("author")), _str(line.get("body")))
        for line in _list(context.get("session"))
        if isinstance(line, Mapping)
    ]
    return _Turn(
        room_kind=_str(context.get("room_kind")),
        pane=_str(context.get("pane")),
        host_key=_str(represents.get("key")) or "host",
        host=_str(represents.get("name")) or "the host",
        other=_str(speaking_with.get("name")) or "the visitor",
        memory=memory,
        plan=_read_plan(_str(context.get("plan"))),
        session=session,
        trigger=_map(context.get("trigger")),
        send_to=[key for key in _list(context.get("send_to")) if isinstance(key, str)],
        currency=_house_currency(memory),
        stage=stage_of(_map(context.get("stage")).get("stage")),
    )


def persona_output(context: Mapping[str, Any]) -> PersonaOutput:
    turn = _turn(context)
    kind = _str(turn.trigger.get("kind"))
    if kind == "stage" or _str(turn.trigger.get("origin")):
        return _told(turn)
    if turn.room_kind == "home":
        return _home(turn)
    delivery = kind == "delivery"
    if turn.host_pane:
        return _host_ruling(turn) if delivery else _principal_message(turn)
    return _visitor_delivery(turn) if delivery else _visitor_message(turn)


def _told(turn: _Turn) -> PersonaOutput:
    """A stage event, or a delivery code made (the Guard's repair, a goal's notice): say it
    as it was written — code composed it in the stage vocabulary, or the audit from the
    recipient's point of view — and keep the plan. Nothing is sent on from here."""
    body = turn.body.strip()
    return PersonaOutput(reply=f"Update: {body}" if body else "…", plan=_write_plan(turn.plan))


# Greeting-only lines get a greeting back, not an acknowledgement of rules.
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening))\b[\w\s,!.]*$", re.I
)
_QUESTION_START = re.compile(
    r"^\s*(?:what|whats|what's|how|which|who|when|where|why|do|does|did|is|are|can|could|"
    r"would|will|should|have|has)\b",
    re.I,
)


def _is_question(text: str) -> bool:
    return "?" in text or bool(_QUESTION_START.match(text))


# --- home room and the principal's own pane ---


def _home(turn: _Turn) -> PersonaOutput:
    body = turn.body
    if _GREETING.match(body):
        reply = (
            f"Hi {turn.host} — tell me your rates and rules and I'll hold to them with visitors."
        )
    elif _is_question(body):
        reply = _answer_from_memory(turn.memory, body)
    else:
        reply = "Noted — I'll hold to that with visitors."
    return PersonaOutput(reply=reply, plan=_write_plan(turn.plan))


_MEMORY_ANSWER_SKIP: Final = frozenset({"goals", "rulings", "offers", "pendingPrincipalDecisions"})


def _answer_from_memory(memory: Mapping[str, Any], question: str) -> str:
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


def _principal_message(turn: _Turn) -> PersonaOutput:
    """The principal writes in the host pane: a button on the written offer, an instruction
    on a question put to them, a question, or a rule to hold to."""
    body = turn.body
    plan = dict(turn.plan)
    shortcut = read_shortcut(body)
    if shortcut is not None:
        return _principal_shortcut(turn, shortcut)
    if is_payment_claim(body):
        return PersonaOutput(reply=turn.about_stage(body), plan=_write_plan(plan))
    pending = _pending_ask(turn)
    said = intent_of(body)
    amounts = find_amounts(body, default_currency=turn.currency)
    if pending is not None and (said is not None or amounts):
        return _instruct(turn, pending, said, amounts[-1] if amounts else None)
    if not amounts and is_status_ask(body):
        reply = turn.about_stage(body)
    elif _GREETING.match(body):
        reply = f"Hi {turn.host} — nothing needs you right now."
    elif _is_question(body):
        reply = _answer_from_memory(turn.memory, body)
    elif said is not None and len(body.split()) <= 4:
        reply = "Okay."
    else:
        reply = "Noted — I'll hold to that with visitors."
    return PersonaOutput(reply=reply, plan=_write_plan(plan))


@dataclass(frozen=True, slots=True)
class _Asked:
    """What the principal is answering: a proposal put to them, or a change to the written
    offer (whose standing amount, if any, is ``amount``)."""

    amount: Money | None
    slug: str | None
    visitor_key: str
    change: bool = False


_PENDING_KEYS: Final = ("pending", "pending_deliverable", "pending_change")


def _instruct(
    turn: _Turn, pending: _Asked, said: Intent | None, told: Money | None
) -> PersonaOutput:
    """The principal's instruction, carried to the visitor's side in this same turn. A chat
    yes lets the agent settle terms; it is never a booking (seed 000)."""
    plan = {key: value for key, value in turn.plan.items() if key not in _PENDING_KEYS}
    asked, slug, visitor_key, host = pending.amount, pending.slug, pending.visitor_key, turn.host
    decision: Decision | None
    money: Money | None = None
    if told is not None and told != asked:
        decision, money = "counter", told
        reply = f"Understood — I'll offer them {format_money(told)}."
        substance = f"{host} can do {_the(slug)} at {format_money(told)}."
        same = plan.get("deliverable", "") == (slug or "")
        _last, count = _counter_history(plan if same else {}, turn.memory, visitor_key, slug)
        plan |= {"last_counter": money_code(told), "counters": str(count + 1)}
    elif said is Intent.NO and pending.change:
        # Refusing a change keeps the written offer; a decline would close it.
        decision = None
        reply = "Understood — I'll tell them the written offer stays as it is."
        substance = notice(Notice.CANNOT, host)
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
        plan["settled"] = money_code(asked)
    if slug:
        plan["deliverable"] = slug
    sends = []
    if visitor_key in turn.send_to:
        ruling = _ruling(decision, money, slug) if decision is not None else None
        sends.append(Send(to=visitor_key, substance=substance, ruling=ruling))
    else:
        reply = "Understood — noted for when they're back."
    return PersonaOutput(reply=reply, sends=sends, plan=_write_plan(plan))


def _visitor_key(turn: _Turn) -> str:
    return turn.plan.get("with") or next(
        (key for key in turn.send_to if key != turn.host_key), "visitor"
    )


def _pending_ask(turn: _Turn) -> _Asked | None:
    """The proposal or change put to the principal (``ask_principal``), from the plan or else
    from the last question in this session."""
    visitor_key = _visitor_key(turn)
    asked = parse_money(turn.plan.get("pending", ""))
    change = turn.plan.get("pending_change") == "1"
    if asked is not None or change:
        return _Asked(asked, turn.plan.get("pending_deliverable") or None, visitor_key, change)
    agent_lines = [body for author, body in turn.session if author == "agent"]
    if agent_lines and agent_lines[-1].rstrip().endswith("Should I take it?"):
        amounts = find_amounts(agent_lines[-1], default_currency=turn.currency)
        slugs = find_deliverables(agent_lines[-1])
        if amounts:
            return _Asked(amounts[0], (slugs[-1] if slugs else None), visitor_key)
    return None


def _reopen(turn: _Turn, reason: str) -> list[GoalRuling]:
    """new-offer back to open when the written terms are to change (an open goal is not
    reopened): the next met is a flip, and code draws the new version on it."""
    if _goal_status(turn.memory, NEW_OFFER) == "open":
        return []
    return [GoalRuling(key=NEW_OFFER, status="open", reason=reason)]


def _principal_shortcut(turn: _Turn, shortcut: Shortcut) -> PersonaOutput:
    """The host pressed Counter, Reject or Add on the written offer (ARCHITECTURE "Offers"):
    the line is their instruction about the written offer."""
    plan = {key: value for key, value in turn.plan.items() if key not in _PENDING_KEYS}
    visitor_key = _visitor_key(turn)
    can_send = visitor_key in turn.send_to
    slugs = find_deliverables(shortcut.text)
    slug = slugs[-1] if slugs else (plan.get("deliverable") or None)
    amounts = (
        find_amounts(shortcut.text, default_currency=turn.currency)
        if shortcut.kind is ShortcutKind.COUNTER
        else []
    )
    host = turn.host
    match shortcut.kind:
        case ShortcutKind.REJECT:
            # Abandoned of a live new-offer closes the written offer (code does it).
            goals = [
                GoalRuling(
                    key=NEW_OFFER, status="abandoned", reason=f"{host} rejected the written offer."
                )
            ]
            sends = []
            reply = "Understood — the written offer will be closed."
            if can_send:
                substance = f"{host} won't be able to take this one on."
                ruling = _ruling("decline", None, slug)
                sends.append(Send(to=visitor_key, substance=substance, ruling=ruling))
                reply = "Understood — the written offer will be closed, and I'll let them know."
            return PersonaOutput(reply=reply, goals=goals, sends=sends, plan=_write_plan(plan))
        case ShortcutKind.COUNTER if amounts:
            said = _instruct(turn, _Asked(None, slug, visitor_key), None, amounts[-1])
            goals = _reopen(turn, f"{host} countered the written offer.")
            return said.model_copy(update={"goals": goals})
        case ShortcutKind.COUNTER | ShortcutKind.ADD:
            if not shortcut.text:
                reply = "What should change in the written offer?"
                return PersonaOutput(reply=reply, plan=_write_plan(plan))
            goals = _reopen(turn, f"{host} asked to change the written offer.")
            sends = []
            if can_send:
                substance = request_notice(shortcut, host)
                sends.append(Send(to=visitor_key, substance=substance))
                name = _party_name(turn.memory, visitor_key)
                who = "them" if name == "The visitor" else name
                reply = f"Understood — I'll put that change to {who}."
            else:
                reply = "Understood — I'll put that change to them when they're back."
            return PersonaOutput(reply=reply, goals=goals, sends=sends, plan=_write_plan(plan))
        case _:
            assert_never(shortcut.kind)


# --- the host-side ruling ---


@dataclass(frozen=True, slots=True)
class _Judgement:
    decision: Decision
    amount: Money | None
    why: str
    """``rate``, ``instruction``, ``no_rate``, ``currency``, ``minimum`` or ``exclusion:<word>``."""


def judge(
    offer: Money,
    ask: Money | None,
    floor: Money | None,
    last_counter: Money | None,
    counters: int,
) -> _Judgement:
    """The ruling table between the host's ask and floor.

    R1 no ask and no floor → ask the principal. R2 another currency → ask the principal.
    R3 offer ≥ ask, or ≥ our last counter → settle at the offer. R4 floor ≤ offer < ask:
    first time counter at the midpoint rounded up to 50, after that settle. R5 offer < floor:
    first time counter at the ask, after that concede halfway from the last counter toward
    the floor, never reaching it (the floor is never stated). R6 only a floor: settle at or
    above it, else ask the principal.
    """
    if ask is None and floor is None:
        return _Judgement("ask_principal", None, "no_rate")  # R1
    reference = ask or floor
    assert reference is not None
    if offer.currency != reference.currency:
        return _Judgement("ask_principal", None, "currency")  # R2
    if floor is not None and floor.currency != offer.currency:
        floor = None
    if last_counter is not None and last_counter.currency != offer.currency:
        last_counter = None
    if ask is None:
        assert floor is not None
        if offer.amount >= floor.amount:
            return _Judgement("settle", offer, "rate")  # R6
        return _Judgement("ask_principal", None, "minimum")
    if floor is None or floor.amount > ask.amount:
        floor = ask
    if offer.amount >= ask.amount or (
        last_counter is not None and offer.amount >= last_counter.amount
    ):
        return _Judgement("settle", offer, "rate")  # R3
    if offer.amount >= floor.amount:  # R4
        if counters == 0:
            middle = min(round_up((offer.amount + ask.amount) / 2), ask.amount)
            return _Judgement("counter", Money(middle, ask.currency), "rate")
        return _Judgement("settle", offer, "rate")
    if counters == 0 or last_counter is None:  # R5
        return _Judgement("counter", ask, "rate")
    halfway = round_up((last_counter.amount + floor.amount) / 2)
    if halfway >= last_counter.amount or halfway <= floor.amount:
        halfway = last_counter.amount  # nothing left to concede without naming the floor
    return _Judgement("counter", Money(halfway, ask.currency), "rate")


def _party_name(memory: Mapping[str, Any], key: str) -> str:
    branch = _map(memory.get(key))
    for field in ("name", "company"):
        value = _str(branch.get(field)).strip()
        if value:
            return value
    return "The visitor"


def _exclusions(memory: Mapping[str, Any]) -> list[str]:
    host = _map(memory.get("host"))
    words = [w.strip().lower() for w in _strings(host.get("exclusions")) if w.strip()]
    for rule in _strings(host.get("rules")):
        match = _EXCLUSION_RULE.search(rule)
        if match:
            words.append(_category(match.group(1)))
    return list(dict.fromkeys(w for w in words if w))


def _excluded(turn: _Turn, sender: str) -> str | None:
    """The exclusion a proposal touches: in what it says, the sender's branch or the deal."""
    texts = [turn.body]
    texts += [text for _path, text in _leaves(turn.memory.get(sender))]
    texts += [text for _path, text in _leaves(turn.memory.get("deal"))]
    joined = " ".join(texts)
    for word in _exclusions(turn.memory):
        if re.search(rf"\b{re.escape(word)}", joined, re.IGNORECASE):
            return word
    return None


GENERIC_RATE_KEYS: Final = ("standard", "general", "default", "any")
"""Rate entries recorded without a deliverable (Distil writes ``standard``)."""


def _rates(memory: Mapping[str, Any], slug: str | None) -> tuple[str | None, Mapping[str, Any]]:
    """The rate entry for ``slug``. A proposal naming no deliverable falls back to the single
    recorded rate; any proposal falls back to a rate recorded without a deliverable. A named
    deliverable never borrows another deliverable's rate (a reel is not a sponsored post)."""
    rates = _map(_at(memory, "host.rates"))
    if slug is not None and isinstance(rates.get(slug), Mapping):
        return slug, _map(rates[slug])
    entries = [(key, value) for key, value in rates.items() if isinstance(value, Mapping)]
    if slug is None and len(entries) == 1:
        return entries[0][0], entries[0][1]
    for key in GENERIC_RATE_KEYS:
        if isinstance(rates.get(key), Mapping):
            return slug, _map(rates[key])
    return slug, {}


def _instruction(turn: _Turn, slug: str | None, offer: Money) -> Intent | None:
    """A host-side principal instruction that covers this proposal (pendingPrincipalDecisions,
    side host). One given on a question about a higher amount does not cover a lower one."""
    decisions = _map(turn.memory.get("pendingPrincipalDecisions"))
    for key in sorted(decisions):
        entry = _map(decisions[key])
        if _str(entry.get("side") or turn.host_key) != turn.host_key:
            continue
        if key != slug and key not in GENERIC_DECISION_KEYS:
            continue
        said = intent_of(_str(entry.get("principalInstruction")))
        if said is None:
            continue
        asked = find_amounts(_str(entry.get("question")), default_currency=offer.currency)
        if (
            said is Intent.YES
            and asked
            and any(a.currency == offer.currency and a.amount > offer.amount for a in asked)
        ):
            continue
        return said
    return None


def _counter_history(
    plan: Mapping[str, str], memory: Mapping[str, Any], sender: str, slug: str | None
) -> tuple[Money | None, int]:
    """Our last counter and how many we made for this deliverable: from the plan, and from the
    rulings that crossed into the sender's pane (the record wins when it shows more)."""
    last = parse_money(plan.get("last_counter", ""))
    try:
        count = int(plan.get("counters", "0"))
    except ValueError:
        count = 0
    crossed = [
        entry
        for entry in map(_map, _list(_at(memory, f"rulings.{sender}")))
        if entry.get("decision") == "counter" and (entry.get("deliverable") or None) == slug
    ]
    if len(crossed) > count:
        count = len(crossed)
        last = _money_from(crossed[-1].get("amount"), crossed[-1].get("currency")) or last
    return last, count


def _strip_names(text: str, memory: Mapping[str, Any], key: str) -> str:
    # A company called "Reel Studios" must not read as a deliverable or an amount.
    branch = _map(memory.get(key))
    for field in ("name", "company"):
        name = _str(branch.get(field)).strip()
        if name:
            text = text.replace(name, " ")
    return text


def _host_ruling(turn: _Turn) -> PersonaOutput:
    """A delivery from the visitor's side reaches the host pane: rule on it with the host's
    private rules in view, tell the principal, and send only the ruling across."""
    sender = _str(turn.trigger.get("from")) or "visitor"
    visitor = _party_name(turn.memory, sender)
    text = _strip_names(turn.body, turn.memory, sender)
    amounts = find_amounts(text, default_currency=turn.currency)
    about_offer = read_notice(text)
    if about_offer is not None:
        return _host_notice(turn, about_offer, sender)
    slugs = find_deliverables(text)
    slug = slugs[-1] if slugs else None
    proposals = _map(_at(turn.memory, "deal.proposals"))
    if slug is None and len(proposals) == 1:
        slug = next(iter(proposals))
    if not amounts and slug is not None:
        recorded = parse_money(_str(_at(proposals, f"{slug}.amount")))
        amounts = [recorded] if recorded else []
    excluded = _excluded(turn, sender)
    if not amounts and excluded is None:
        # Not a proposal: tell the principal what came in (it is already from their side).
        return PersonaOutput(reply=turn.body.strip() or "Nothing new.", plan=_write_plan(turn.plan))
    offer = amounts[-1] if amounts else None
    slug, rate = _rates(turn.memory, slug)
    plan = dict(turn.plan) | {"with": sender}
    if plan.get("deliverable", "") != (slug or ""):
        # Counters belong to one deliverable: a new one starts from the ask again.
        plan.pop("last_counter", None)
        plan.pop("counters", None)
    plan["deliverable"] = slug or ""
    last, count = _counter_history(plan, turn.memory, sender, slug)
    judgement: _Judgement
    if excluded is not None:
        judgement = _Judgement("decline", None, f"exclusion:{excluded}")
    else:
        assert offer is not None
        said = _instruction(turn, slug, offer)
        if said is Intent.YES:
            judgement = _Judgement("settle", offer, "instruction")
        elif said is Intent.NO:
            judgement = _Judgement("decline", None, "instruction")
        else:
            ask = parse_money(_str(rate.get("ask")), default_currency=turn.currency)
            floor = parse_money(_str(rate.get("floor")), default_currency=turn.currency)
            judgement = judge(offer, ask, floor, last, count)
    if judgement.decision == "ask_principal":
        assert offer is not None
        why = {
            "currency": f"your rates are in {turn.currency}",
            "minimum": "that's under your minimum",
        }.get(judgement.why, "I have no rate recorded for that")
        reply = f"{visitor} offers {format_money(offer)} for {_a(slug)}; {why}. Should I take it?"
        # The visitor's side already said it is being checked: nothing is owed there yet.
        plan |= {"pending": money_code(offer), "pending_deliverable": slug or ""}
        return PersonaOutput(reply=reply, plan=_write_plan(plan))
    plan.pop("pending", None)
    plan.pop("pending_deliverable", None)
    can_send = sender in turn.send_to
    # Ask once whether to add anything, and still send in this same turn.
    tail = " — anything you want to add?" if can_send else "."
    asked = (
        f"{visitor} asked for {_a(slug)} at {format_money(offer)}"
        if offer
        else f"{visitor}'s request"
    )
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
                else ("That meets your terms, so")
            )
            reply = f"{asked}. {reason} {act} at {format_money(money)}{tail}"
            substance = f"{format_money(money)} for {_the(slug)} works for {turn.host}."
            plan["settled"] = money_code(money)
        case "counter":
            assert money is not None
            act = "I'm countering" if can_send else "I'd counter"
            reply = f"{asked}. {act} at {format_money(money)}{tail}"
            substance = f"{turn.host} can do {_the(slug)} at {format_money(money)}."
            plan |= {"last_counter": money_code(money), "counters": str(count + 1)}
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
    return PersonaOutput(reply=reply, sends=sends, plan=_write_plan(plan))


def _host_notice(turn: _Turn, said: Notice, sender: str) -> PersonaOutput:
    """The visitor's side says something about the written offer: never rule on it as a
    proposal (that would settle terms the principal has not seen). A change is put to the
    principal with the standing amount; anything else is only told."""
    body = turn.body.strip()
    plan = {key: value for key, value in turn.plan.items() if key not in _PENDING_KEYS}
    match said:
        case Notice.ADD | Notice.CHANGE:
            proposals = _map(_at(turn.memory, "deal.proposals"))
            slug = plan.get("deliverable") or (next(iter(proposals)) if len(proposals) == 1 else "")
            standing = parse_money(plan.get("settled", "")) or parse_money(
                _str(_at(proposals, f"{slug}.amount")) if slug else ""
            )
            plan |= {
                "with": sender,
                "pending_change": "1",
                "pending": money_code(standing) if standing else "",
                "pending_deliverable": slug,
            }
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
    return PersonaOutput(reply=reply, plan=_write_plan(plan))


def _open_questions(turn: _Turn) -> list[str]:
    """The terms the visitor's side said are missing, passed back for the visitor to answer."""
    return _strings(turn.trigger.get("open_questions"))


# --- the visitor's pane ---

_BOT = re.compile(r"\b(?:bot|robot|an ai|a human|real person|human being|chatgpt)\b", re.I)
_PRICE_WORDS = re.compile(r"\b(?:rates?|price|pricing|cost|charge|fee|much|budget)\b", re.I)


def _public_items(memory: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the host said may be shared, as (section label, humanised text)."""
    public = _at(memory, "host.public")
    items: list[tuple[str, str]] = []
    for path, text in _leaves(public):
        label = deliverable_label(path.split(".")[-1]) if path else "note"
        items.append((label, _humanise(text)))
    return items


def _public_answer(turn: _Turn, question: str) -> str | None:
    """An answer from ``host.public`` alone, when something there matches the question."""
    items = _public_items(turn.memory)
    if not items:
        return None
    words = _words(question) | set(find_deliverables(question))
    pricing = bool(_PRICE_WORDS.search(question)) or bool(find_deliverables(question))
    chosen = [
        (label, text)
        for label, text in items
        if _overlaps(words, _words(f"{label} {text}").union(find_deliverables(text)))
        or (pricing and ("rate" in label or find_amounts(text)))
    ]
    if not chosen:
        return None
    by_label: dict[str, list[str]] = {}
    for label, text in chosen:
        by_label.setdefault(label, []).append(text)
    parts = [f"{turn.host}'s {label}: {'; '.join(texts)}" for label, texts in by_label.items()]
    parts = parts[:2]  # with the budget question, at most three sentences
    return ". ".join(parts) + "."


def _cannot_share(turn: _Turn) -> str:
    return f"I can't share {turn.host}'s private terms. What budget do you have in mind?"


def _known_deliverable(turn: _Turn) -> str | None:
    """What the visitor is after: this message, then earlier lines of the session, then the
    deal as recorded, then our own plan, then the last ruling that crossed here."""
    slugs = find_deliverables(turn.body)
    if slugs:
        return slugs[-1]
    for line in reversed(turn.participant_lines()):
        slugs = find_deliverables(line)
        if slugs:
            return slugs[-1]
    proposals = list(_map(_at(turn.memory, "deal.proposals")))
    if proposals:
        return str(proposals[-1])
    if turn.plan.get("deliverable"):
        return turn.plan["deliverable"]
    rulings = _list(_at(turn.memory, f"rulings.{turn.pane}"))
    if rulings:
        return _str(_map(rulings[-1]).get("deliverable")) or None
    return None


def _known_date(turn: _Turn) -> DateMention | str | None:
    dates = find_dates(turn.body)
    if dates:
        return dates[-1]
    for line in reversed(turn.participant_lines()):
        dates = find_dates(line)
        if dates:
            return dates[-1]
    recorded = [text for _path, text in _leaves(_at(turn.memory, "deal.dates"))]
    return recorded[-1] if recorded else None


def _last_dispatch(turn: _Turn) -> str:
    """The dispatch of the last ruling that crossed into this pane ("" when none has)."""
    rulings = _list(_at(turn.memory, f"rulings.{turn.pane}"))
    last = _str(_map(rulings[-1]).get("dispatchId")) if rulings else ""
    return re.sub(r"[;=]", "_", last)  # the plan's own separators


def _last_counter_here(turn: _Turn) -> tuple[Money, str | None] | None:
    """The host's counter standing in this pane: the last ruling that crossed here, if it was
    a counter, else the plan's."""
    rulings = _list(_at(turn.memory, f"rulings.{turn.pane}"))
    if rulings and turn.plan.get("seen_ruling") == _last_dispatch(turn):
        return None  # the visitor has proposed since the last ruling crossed here
    if rulings:
        last = _map(rulings[-1])
        if last.get("decision") != "counter":
            return None
        money = _money_from(last.get("amount"), last.get("currency"))
        return (money, _str(last.get("deliverable")) or None) if money else None
    money = parse_money(turn.plan.get("counter", ""))
    if money is not None:
        return money, turn.plan.get("deliverable") or None
    return None


def _goal_status(memory: Mapping[str, Any], key: str) -> str:
    return _str(_map(_map(memory.get("goals")).get(key)).get("status"))


def _visitor_message(turn: _Turn) -> PersonaOutput:
    body = turn.body
    plan = dict(turn.plan)
    shortcut = read_shortcut(body)
    if shortcut is not None:
        return _visitor_shortcut(turn, shortcut)
    if _is_probe(body):
        return PersonaOutput(reply=_cannot_share(turn), plan=_write_plan(plan))
    if is_payment_claim(body):
        # Never take card details or a claimed payment in chat: only the stage says it.
        return PersonaOutput(reply=turn.about_stage(body), plan=_write_plan(plan))
    amounts = find_amounts(body, default_currency=turn.currency)
    if amounts:
        return _visitor_proposal(turn, amounts[-1])
    said = intent_of(body)
    if plan.get("change") and said is not None and "?" not in body:
        return _visitor_on_change(turn, said)
    standing = _last_counter_here(turn)
    if standing is not None and said is Intent.YES and "?" not in body:
        money, slug = standing
        goals = [
            GoalRuling(
                key=NEW_OFFER,
                status="met",
                reason=f"{turn.other} agreed to {format_money(money)} for {_the(slug)}.",
            )
        ]
        sends = []
        if turn.host_key in turn.send_to:
            sends.append(
                Send(
                    to=turn.host_key,
                    substance=f"{turn.other} agrees to {_the(slug)} at {format_money(money)}.",
                )
            )
            reply = f"Great, I'll let {turn.host} know."
        else:
            reply = "Great — noted."
        plan |= {"agreed": money_code(money), "deliverable": slug or ""}
        return PersonaOutput(reply=reply, goals=goals, sends=sends, plan=_write_plan(plan))
    if is_status_ask(body):
        return PersonaOutput(reply=turn.about_stage(body), plan=_write_plan(plan))
    if _BOT.search(body):
        reply = f"I'm {turn.host}'s agent and I handle these conversations for {turn.host}. "
        return PersonaOutput(reply=reply + _next_question(turn), plan=_write_plan(plan))
    if _is_question(body):
        public = _public_answer(turn, body)
        reply = f"{public} What budget do you have in mind?" if public else _cannot_share(turn)
        return PersonaOutput(reply=reply, plan=_write_plan(plan))
    greeting = f"Hi {turn.other}! " if _GREETING.match(body) else ""
    if standing is not None and said is Intent.NO:
        return PersonaOutput(
            reply="Understood. What budget would work for you?", plan=_write_plan(plan)
        )
    return PersonaOutput(reply=greeting + _next_question(turn), plan=_write_plan(plan))


def _visitor_on_change(turn: _Turn, said: Intent) -> PersonaOutput:
    """The visitor answers the host's change to the written offer: a yes settles the goal
    again (code draws the new version), a no leaves the written offer as it is."""
    plan = dict(turn.plan)
    plan.pop("change", None)
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
    return PersonaOutput(reply=reply, goals=goals, sends=sends, plan=_write_plan(plan))


def _visitor_shortcut(turn: _Turn, shortcut: Shortcut) -> PersonaOutput:
    """The visitor pressed Counter, Reject or Add on the written offer (ARCHITECTURE
    "Offers"): the line goes to the host's side like any proposal; the row stays until an
    agent's ruling updates or closes it."""
    plan = {key: value for key, value in turn.plan.items() if key not in ("counter", "change")}
    can_send = turn.host_key in turn.send_to
    amounts = (
        find_amounts(shortcut.text, default_currency=turn.currency)
        if shortcut.kind is ShortcutKind.COUNTER
        else []
    )
    other, host = turn.other, turn.host
    goals: list[GoalRuling]
    sends: list[Send] = []
    # Whatever counter stood here, this line answers it: a later "ok" does not take it.
    plan["seen_ruling"] = _last_dispatch(turn)
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
                reply = "What would you like changed in the written offer?"
                return PersonaOutput(reply=reply, plan=_write_plan(plan))
            verb = "add to" if shortcut.kind is ShortcutKind.ADD else "change"
            goals = _reopen(turn, f"{other} asked to {verb} the written offer.")
            if can_send:
                sends.append(Send(to=turn.host_key, substance=request_notice(shortcut, other)))
                reply = f"Thanks — I'm checking that with {host} now and will come back to you."
            else:
                reply = f"Thanks — noted; I'll put it to {host}."
        case _:
            assert_never(shortcut.kind)
    return PersonaOutput(reply=reply, goals=goals, sends=sends, plan=_write_plan(plan))


def _next_question(turn: _Turn) -> str:
    """One short question that moves the deal: what, then budget, then when."""
    slug = _known_deliverable(turn)
    if slug is None:
        return "What deliverable do you have in mind?"
    has_amount = bool(_map(_at(turn.memory, "deal.proposals"))) or "proposal" in turn.plan
    if not has_amount:
        return f"What budget do you have in mind for {_the(slug)}?"
    if _known_date(turn) is None:
        return "Which date are you planning for?"
    return f"Anything else {turn.host} should know?"


def _visitor_proposal(turn: _Turn, amount: Money) -> PersonaOutput:
    """The visitor names an amount: carry it to the host's side, name the missing terms."""
    slug = _known_deliverable(turn)
    date = _known_date(turn)
    shown = format_money(amount)
    what = f"proposes {_a(slug)} for {shown}" if slug else f"offers {shown}"
    when = f" on {date.label() if isinstance(date, DateMention) else date}" if date else ""
    open_questions = []
    if slug is None:
        open_questions.append("Which deliverable?")
    if date is None:
        open_questions.append("Which date?")
    plan = dict(turn.plan) | {
        "proposal": money_code(amount),
        "deliverable": slug or "",
        # A counter already here is answered by this proposal: a later yes is not to it.
        "seen_ruling": _last_dispatch(turn),
    }
    plan.pop("counter", None)
    plan.pop("change", None)
    goals = []
    if _goal_status(turn.memory, NEW_OFFER) != "open":
        goals.append(
            GoalRuling(key=NEW_OFFER, status="open", reason=f"{turn.other} proposed terms.")
        )
    sends = []
    if turn.host_key in turn.send_to:
        sends.append(
            Send(
                to=turn.host_key,
                substance=f"{turn.other} {what}{when}.",
                open_questions=open_questions,
            )
        )
        reply = f"Thanks — I'm checking that with {turn.host} now and will come back to you here."
    else:
        reply = "Thanks — noted. " + (
            "Which deliverable is that for?" if slug is None else "Which date are you planning for?"
        )
    return PersonaOutput(reply=reply, goals=goals, sends=sends, plan=_write_plan(plan))


def _visitor_delivery(turn: _Turn) -> PersonaOutput:
    """The host's side sent something to this pane: say it in our own voice."""
    ruling = _map(turn.trigger.get("ruling"))
    decision = _str(ruling.get("decision"))
    slug = _str(ruling.get("deliverable")) or None
    money = _money_from(ruling.get("amount"), ruling.get("currency"))
    plan = dict(turn.plan)
    goals: list[GoalRuling] = []
    host = turn.host
    body = _str(turn.trigger.get("body")).strip()
    said = read_notice(body)
    if decision:
        plan.pop("change", None)  # a ruling answers whatever change was standing
    if decision == "counter" and money is not None:
        reply = f"{host} can do {_the(slug)} at {format_money(money)}. Does that work for you?"
        plan |= {"counter": money_code(money), "deliverable": slug or ""}
    elif decision == "settle" and money is not None:
        reply = f"Good news: {format_money(money)} for {_the(slug)} works for {host}."
        if said is Notice.AGREES:
            reply = f"Good news: {body}"
        goals.append(
            GoalRuling(
                key=NEW_OFFER,
                status="met",
                reason=f"{format_money(money)} for {_the(slug)} settled with {turn.other}.",
            )
        )
        plan.pop("counter", None)
        plan |= {"settled": money_code(money), "deliverable": slug or ""}
    elif decision == "decline":
        reply = f"{host} won't be able to take this one on."
        goals.append(GoalRuling(key=NEW_OFFER, status="abandoned", reason=f"{host} declined."))
        plan.pop("counter", None)
    elif decision == "ask_principal":
        reply = f"I'm checking this with {host} and will come back to you."
    elif said in (Notice.ADD, Notice.CHANGE):
        # The host asks to change the written offer: the visitor's yes or no answers it.
        reply = f"{body} Does that work for you?"
        plan["change"] = "asked"
    else:
        if said is not None:
            plan.pop("change", None)
        reply = body or f"{host} has nothing new yet."
    # Missing terms are worth asking about only while the deal is alive.
    questions = _strings(turn.trigger.get("open_questions")) if decision != "decline" else []
    if questions and reply.count(".") + reply.count("?") < 3:
        reply = f"{reply} {questions[0]}"
    return PersonaOutput(reply=reply, goals=goals, plan=_write_plan(plan))
