"""Distil's rules: the facts, claims, principal decisions and frustration a session shows,
written only where the pane may write."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dealroom.agents.distil import Change, DistilOutput, Frustration, PrincipalDecision
from dealroom.agents.models.offline.common import (
    _EXCLUSION_RULE,
    _at,
    _category,
    _house_currency,
    _is_probe,
    _list,
    _map,
    _str,
    _strings,
)
from dealroom.agents.models.offline.offer_talk import is_shortcut
from dealroom.agents.models.offline.rates import PUBLIC_WORDS, host_rates, is_rate_question
from dealroom.domain.deliverables import read_deliverables
from dealroom.domain.limits import (
    FLOOR_PHRASES,
    RATE_WORDS,
    StatedRate,
    limit_entry,
    private_terms_of,
)
from dealroom.domain.reader import read_company, read_schedule
from dealroom.domain.terms import (
    Money,
    find_amounts,
    find_dates,
    find_deliverables,
    intent_of,
    money_code,
)

ASK_TO_ADD: Final = "anything you want to add?"

NEVER_WRITTEN: Final = frozenset(
    {"goals", "plans", "rulings", "sent", "deliveries", "offers", "pendingPrincipalDecisions"}
)
"""Reserved parts code writes (memory M2); the writer never names them, whatever it is told."""

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_NO_CATEGORY = re.compile(r"\bno ([a-z][a-z-]+) (?:brands|companies|sponsors|deals)\b", re.I)
_CLAIM = re.compile(
    r"\b(?:(?:i|we)(?:'ve| have)?\s+(?:already\s+)?(?:sent|emailed|e-mailed|shared|signed|"
    r"uploaded|forwarded|attached|mailed|submitted|paid|wired|transferred)\b|"
    r"as (?:agreed|discussed)\b|we (?:already )?agreed\b|(?:on|over) the (?:phone|call)\b)",
    re.I,
)
_INTRO = (
    re.compile(
        r"\b(?:[Ii]'?m|[Ii] am|[Tt]his is|[Mm]y name is)\s+"
        r"(?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)?)\s+"
        r"(?:from|at|with|of)\s+(?P<company>[A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*)*)"
    ),
    re.compile(
        r"\b(?:[Ww]e'?re|[Ww]e are|on behalf of|[Ii] (?:work|am) (?:at|for|with)|"
        r"[Ii]'m (?:at|with))\s+(?P<company>[A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*)*)"
    ),
    re.compile(r"\b(?:[Mm]y name is|[Tt]his is)\s+(?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)?)\b"),
)
_BUSINESS = re.compile(
    r"\b(?:an?|the)\s+(?:[a-z][\w-]*\s+){1,3}(?:brand|company|business|startup|label|agency|"
    r"shop|retailer|maker|producer)\b",
    re.I,
)
_NOT_NAMES: Final = frozenset(
    "Not Just Looking Interested Here Sorry Ok Okay Happy Glad Sure Hoping "  # noqa: SIM905 (a word list reads best as text)
    "Wondering Reaching Writing Still Also Really The A An".split()
)
_FRUSTRATION: Final = (
    (
        re.compile(
            r"\b(?:ridiculous|waste of (?:my )?time|wasting my time|useless|absurd|"
            r"unacceptable)\b",
            re.I,
        ),
        "high",
    ),
    (
        re.compile(
            r"\b(?:is this a bot|are you a bot|a bot\b|a robot|real person|a human|"
            r"human being|speak to (?:someone|somebody|a person)|hello\?+)",
            re.I,
        ),
        "medium",
    ),
    (re.compile(r"\?!|!\?|!!|\?\?\?"), "low"),
)
_LEVELS: Final = ("low", "medium", "high")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _allowed(path: str, writable: Sequence[str]) -> bool:
    segments = path.split(".")
    if segments[0] in NEVER_WRITTEN or any(s in ("stage", "sent", "delivered") for s in segments):
        return False
    return any(path.startswith(f"{prefix}.") for prefix in writable if prefix)


class _Writer:
    """Collects the changes one distil run makes, each once, none that memory already shows."""

    def __init__(self, memory: Mapping[str, Any], writable: Sequence[str]) -> None:
        self.memory = memory
        self.writable = writable
        self.sets: dict[str, str] = {}
        self.appends: list[tuple[str, str]] = []

    def set(self, path: str, value: str) -> None:
        if _allowed(path, self.writable):
            self.sets[path] = value

    def append(self, path: str, value: str) -> None:
        present = [s.lower() for s in _strings(_at(self.memory, path))]
        if value.lower() in present or (path, value) in self.appends:
            return
        if _allowed(path, self.writable):
            self.appends.append((path, value))

    def changes(self) -> list[Change]:
        out = [
            Change(op="set", path=path, value=value)
            for path, value in self.sets.items()
            if _at(self.memory, path) != value
        ]
        out += [Change(op="append", path=path, value=value) for path, value in self.appends]
        return out


def distil_output(context: Mapping[str, Any]) -> DistilOutput:
    represents = _map(context.get("represents"))
    pane = _str(context.get("pane"))
    memory = _map(context.get("memory"))
    writable = [p for p in _list(context.get("writable")) if isinstance(p, str)]
    session = [
        (_str(line.get("author")), _str(line.get("body")))
        for line in _list(context.get("session"))
        if isinstance(line, Mapping)
    ]
    writer = _Writer(memory, writable)
    decisions: list[PrincipalDecision] = []
    host_pane = pane == (_str(represents.get("key")) or "host")
    currency = _house_currency(memory)
    if host_pane:
        sources = [
            _str(line.get("id"))
            for line in _list(context.get("session"))
            if isinstance(line, Mapping)
        ]
        decisions = _host_facts(writer, session, memory, currency, sources)
    else:
        _visitor_facts(writer, session, pane, memory, currency)
    lines = [body for author, body in session if author == "participant"]
    return DistilOutput(
        changes=writer.changes(),
        claims=_claims(lines, memory, pane),
        principal_decisions=decisions,
        frustration=_frustration(session),
    )


def _host_facts(
    writer: _Writer,
    session: Sequence[tuple[str, str]],
    memory: Mapping[str, Any],
    currency: str,
    sources: Sequence[str] = (),
) -> list[PrincipalDecision]:
    """The principal's own pane: rates, floors, rules, what may be shared, instructions."""
    rates = list(_map(_at(memory, "host.rates")))
    last_slug: str | None = rates[0] if len(rates) == 1 else None
    decisions: list[PrincipalDecision] = []
    previous_agent = ""
    for index, (author, body) in enumerate(session):
        source = sources[index] if index < len(sources) else ""
        if author == "agent":
            previous_agent = body
            continue
        if author != "participant":
            continue
        if is_shortcut(body):
            continue  # a button on the written offer: a move in this deal, not a standing rate
        # Our own question about the host's rates is answered with a rate, never an instruction.
        answering = (
            previous_agent.rstrip().endswith("?")
            and ASK_TO_ADD not in previous_agent
            and not is_rate_question(previous_agent)
        )
        # "X, never below Y" is a rate to record wherever it is said, not a yes or a no.
        reading = host_rates(body, memory, previous_agent, currency, last_slug)
        stated = reading.floors
        said = None if stated else intent_of(body)
        # An answer is an instruction when it says yes or no, or names the figure to use
        # ("Offer them $2,000."): the firewall's F4 reads the principal's figures from it. A
        # figure in rate or floor words ("my rate is …", "never below …") stays a rate.
        names_figure = (
            not stated
            and not RATE_WORDS.search(body)
            and not FLOOR_PHRASES.search(body)
            and bool(find_amounts(body, default_currency=currency))
        )
        instructs = answering and (said is not None or names_figure)
        if instructs:
            decision = _decision(previous_agent, body, memory)
            if decision is not None:
                decisions.append(decision)
        else:
            for rate in reading.rates:
                _rate_facts(writer, rate, source)
        for sentence in _sentences(body):
            slugs = [named.slug for named in read_deliverables(sentence)]
            if PUBLIC_WORDS.search(sentence):
                amounts = find_amounts(sentence, default_currency=currency)
                _public_fact(writer, sentence, amounts, slugs)
            _rule_fact(writer, sentence, source)
            if slugs:
                last_slug = slugs[-1]
        previous_agent = ""
    return decisions


def _rate_facts(writer: _Writer, rate: StatedRate, source: str = "") -> None:
    """``my fee for a sponsored post is $8,000, never below $6,000`` as read by
    ``domain.limits`` (L3–L6): the ask on the rate card, the floor as a limit, recorded as data
    with the message it was stated in (memory M12)."""
    slug = rate.deliverable or "standard"
    if rate.ask is not None:
        writer.set(f"host.rates.{slug}.ask", money_code(rate.ask))
    if rate.floor is not None:
        entry = limit_entry(rate.floor.amount, rate.floor.currency, source or None)
        path = f"host.limits.{slug}"
        if _map(_at(writer.memory, path)).get("floor") != entry["floor"]:
            writer.set(path, json.dumps(entry, sort_keys=True))


def _decision(
    question: str, instruction: str, memory: Mapping[str, Any]
) -> PrincipalDecision | None:
    slugs = find_deliverables(question) or find_deliverables(instruction)
    key = slugs[-1] if slugs else "proposal"
    recorded = _str(_at(memory, f"pendingPrincipalDecisions.{key}.principalInstruction"))
    if recorded.strip() == instruction.strip():
        return None
    return PrincipalDecision(key=key, question=question, instruction=instruction.strip())


def _public_fact(writer: _Writer, sentence: str, amounts: list[Money], slugs: list[str]) -> None:
    if amounts and slugs:
        for slug, money in zip(slugs, amounts, strict=False):
            writer.append("host.public.rate_card", f"{slug} from {money_code(money)}")
        return
    if amounts:
        writer.append("host.public.rate_card", f"from {money_code(amounts[0])}")
        return
    shared = PUBLIC_WORDS.split(sentence, maxsplit=1)[-1]
    shared = re.sub(r"^\W*(?:that|visitors|them|people)?\W*", "", shared).rstrip(" .!")
    if shared:
        writer.append("host.public.notes", shared)


def _rule_fact(writer: _Writer, sentence: str, source: str = "") -> None:
    match = _EXCLUSION_RULE.search(sentence) or _NO_CATEGORY.search(sentence)
    if match is None:
        return
    # The rule is the clause that states it, not the rest of the sentence (a fee, say).
    rule = re.split(r"[,;.!]", sentence[match.start() :], maxsplit=1)[0].strip()
    if rule:
        rule = rule[0].lower() + rule[1:]
        writer.append("host.rules", rule)
        # An exclusion is a private term too (memory M12), with the message it came from.
        if rule not in private_terms_of(writer.memory):
            term = {"text": rule, "source": source or None}
            writer.append("host.private_terms", json.dumps(term, sort_keys=True))
    category = _category(match.group(1))
    if category:
        writer.append("host.exclusions", category)


def _visitor_facts(
    writer: _Writer,
    session: Sequence[tuple[str, str]],
    pane: str,
    memory: Mapping[str, Any],
    currency: str,
) -> None:
    """A counterparty's pane: who they are, what they propose, when. An amount naming no
    deliverable is for the one already under discussion."""
    discussed = [key for key in _map(_at(memory, "deal.proposals")) if key != "general"]
    last_slug: str | None = discussed[-1] if discussed else None
    for author, body in session:
        if author != "participant":
            continue
        for sentence in _sentences(body):
            named = read_deliverables(sentence)
            slugs = [item.slug for item in named]
            slug = slugs[-1] if slugs else last_slug
            if named and named[-1].quantity > 1:
                # How many is part of what they want ("four TikTok videos").
                writer.set(f"deal.proposals.{slug}.quantity", str(named[-1].quantity))
            amounts = find_amounts(sentence, default_currency=currency)
            if amounts and not _is_probe(sentence):
                writer.set(f"deal.proposals.{slug or 'general'}.amount", money_code(amounts[-1]))
            dates = find_dates(sentence)
            if dates:
                writer.set(f"deal.dates.{slug or 'date'}", dates[-1].label())
            schedule = read_schedule(sentence)
            if schedule is not None:
                # The share due at booking, so the price told before the offer (P11) is right
                # in a later session too.
                writer.set("deal.due_at_booking_percent", schedule)
            company = read_company(sentence)
            business = _BUSINESS.search(sentence)
            if business is not None:
                # What they are matters to the host's exclusions ("an alcohol brand").
                writer.set(f"{pane}.business", business.group(0).strip())
            for pattern in _INTRO:
                found = pattern.search(sentence)
                if found is None:
                    continue
                groups = found.groupdict()
                name = groups.get("name")
                if name and name.split()[0] not in _NOT_NAMES:
                    writer.set(f"{pane}.name", name)
                intro = groups.get("company")
                if company is None and intro and intro.split()[0] not in _NOT_NAMES:
                    writer.set(f"{pane}.company", intro.rstrip(".'"))
                break
            if company is not None:
                writer.set(f"{pane}.company", company)
            if slugs:
                last_slug = slugs[-1]


def _claims(lines: Sequence[str], memory: Mapping[str, Any], pane: str) -> list[str]:
    """What someone says happened elsewhere, in their words, once (memory ``<pane>.claims``)."""
    recorded = set(_strings(_at(memory, f"{pane}.claims")))
    claims: list[str] = []
    for line in lines:
        for sentence in _sentences(line):
            if _CLAIM.search(sentence) and sentence not in recorded and sentence not in claims:
                claims.append(sentence)
    return claims


def _frustration(session: Sequence[tuple[str, str]]) -> Frustration | None:
    """Impatience in the participant's latest lines (those after the last agent line)."""
    latest: list[str] = []
    for author, body in reversed(session):
        if author != "participant":
            if latest:
                break
            continue
        latest.insert(0, body)
    level = -1
    evidence: list[str] = []
    for line in latest:
        for pattern, name in _FRUSTRATION:
            if pattern.search(line):
                level = max(level, _LEVELS.index(name))
                if line.strip() not in evidence:
                    evidence.append(line.strip())
        shouting = [w for w in re.findall(r"\b[A-Z]{3,}\b", line) if w not in ("USD", "EUR", "GBP")]
        if len(shouting) >= 2:
            level = max(level, 0)
            if line.strip() not in evidence:
                evidence.append(line.strip())
    if level < 0:
        return None
    marks = sum(1 for line in latest for pattern, _name in _FRUSTRATION if pattern.search(line))
    if marks >= 2:
        level = min(level + 1, len(_LEVELS) - 1)
    quoted = " / ".join(f'"{line[:200]}"' for line in evidence)
    return Frustration(level=_LEVELS[level], evidence=quoted)
