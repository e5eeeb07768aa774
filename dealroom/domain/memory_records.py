"""Room memory's code-written parts (M2): the plans, goal rulings, principal decisions, offer
references, claims and rulings that only code records, each as a new document. The document,
its rules and the writer's changes are ``memory``.

These are code's own records, so they are not held to the writer's document limit (M9): a
ruling that crossed, or a principal's instruction, must never be lost because the model
writer filled memory. Their texts are still bounded (M5) so the models' output is.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dealroom.domain import instructions
from dealroom.domain.errors import bad_input
from dealroom.domain.memory import (
    GOALS,
    KEPT_RULINGS,
    MAX_VALUE_CHARS,
    OFFERS,
    PENDING_DECISIONS,
    PLANS,
    RULING_FIELDS,
    RULINGS,
    SEGMENT,
    GoalStatus,
    Op,
    code_place,
    is_participant_key,
    value_at,
)

_GOAL_STATUSES: Final = frozenset(GoalStatus)


def _text(value: str | None, field: str) -> None:
    if value is not None and len(value) > MAX_VALUE_CHARS:
        raise bad_input(f"{field} is longer than {MAX_VALUE_CHARS} characters.", field)


def _segment(value: str, field: str) -> None:
    if not SEGMENT.fullmatch(value):
        raise bad_input(f"{field} is not a memory key: {value!r}.", field)


def _participant(value: str, field: str) -> None:
    if not is_participant_key(value):
        raise bad_input(f"{field} is not a participant key: {value!r}.", field)


def set_plan(document: Mapping[str, Any], pane: str, text: str) -> dict[str, Any]:
    """Record the persona's own plan for ``pane`` (visibility V1 hides every plan; code
    re-attaches only the pane's own via ``own_plan``)."""
    _participant(pane, "pane")
    _text(text, "plan")
    doc = copy.deepcopy(dict(document))
    code_place(doc, (PLANS, pane), Op.SET, text)
    return doc


def own_plan(document: Mapping[str, Any], pane: str) -> str:
    """The plan the persona of ``pane`` wrote last turn, or "" (each persona sees only its
    own plan: ARCHITECTURE "Room memory")."""
    plan = value_at(document, (PLANS, pane))
    return plan if isinstance(plan, str) else ""


def rule_goals(
    document: Mapping[str, Any], rulings: Sequence[tuple[str, str, str]], by: str
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Record goal rulings ``(key, status, reason)`` made by the persona of pane ``by``.

    Each ruling replaces the goal's entry whole, so a reason another side wrote never lingers
    under a new ``by`` (visibility V6 shows a reason only to the side that wrote it). Rulings
    with a bad key, an unknown status or an overlong reason are skipped and their keys
    returned, so one bad ruling does not cost the turn the others."""
    _participant(by, "by")
    doc = copy.deepcopy(dict(document))
    skipped: list[str] = []
    for key, status, reason in rulings:
        if (
            not SEGMENT.fullmatch(key)
            or status not in _GOAL_STATUSES
            or len(reason) > MAX_VALUE_CHARS
        ):
            skipped.append(key)
            continue
        entry = {"status": GoalStatus(status).value, "reason": reason, "by": by}
        code_place(doc, (GOALS, key), Op.SET, entry)
    return doc, tuple(skipped)


def record_principal_decision(
    document: Mapping[str, Any],
    key: str,
    side: str,
    question: str,
    instruction: str | None,
    source: str | None = None,
) -> dict[str, Any]:
    """Record a question put to a principal and, once given, their instruction (and the id of
    the principal's message it came from, ``source``).

    ARCHITECTURE "Offers": a principal's chat "yes" lives here as ``principalInstruction``; it
    lets the agent settle terms and never moves the stage. ``side`` is the pane whose
    principal was asked; only that side sees the entry (visibility V2, V7). An instruction is
    recorded with the terms it covers (instructions PI1), and lapses when they move."""
    _segment(key, "key")
    _participant(side, "side")
    _text(question, "question")
    _text(instruction, "principalInstruction")
    doc = copy.deepcopy(dict(document))
    entry = {"side": side, "question": question, "principalInstruction": instruction}
    if source is not None:
        _text(source, "source")
        entry["source"] = source
    code_place(doc, (PENDING_DECISIONS, key), Op.SET, instructions.given(entry, document))
    return doc


def record_offer(document: Mapping[str, Any], key: str, offer_id: str) -> dict[str, Any]:
    """Memory keeps only a reference to a written offer, ``offers.<key>.offerId``: its terms
    and stage live in the offers row and are projected at call time, never copied (seed 000
    "Records are made by a specialist")."""
    _segment(key, "key")
    _text(offer_id, "offerId")
    doc = copy.deepcopy(dict(document))
    code_place(doc, (OFFERS, key), Op.SET, {"offerId": offer_id})
    return doc


def goal_statuses(document: Mapping[str, Any]) -> dict[str, str]:
    """Each goal's status, for telling which rulings flipped one."""
    goals = document.get(GOALS)
    if not isinstance(goals, Mapping):
        return {}
    return {
        key: entry["status"]
        for key, entry in goals.items()
        if isinstance(entry, Mapping) and isinstance(entry.get("status"), str)
    }


def record_claims(document: Mapping[str, Any], pane: str, claims: Sequence[str]) -> dict[str, Any]:
    """Append what the participant of ``pane`` claimed to ``<pane>.claims``, once each: a
    claim restated in every turn is still one claim."""
    _participant(pane, "pane")
    for claim in claims:
        _text(claim, "claim")
    doc = copy.deepcopy(dict(document))
    existing = value_at(doc, (pane, "claims"))
    seen: set[object] = set()
    if isinstance(existing, list):
        seen.update(item for item in existing if isinstance(item, str))
    elif isinstance(existing, str):
        seen.add(existing)
    for claim in claims:
        text = claim.strip()
        if not text or text in seen:
            continue
        seen.add(text)
        code_place(doc, (pane, "claims"), Op.APPEND, text)
    return doc


def record_ruling(
    document: Mapping[str, Any],
    pane: str,
    ruling: Mapping[str, str | None],
    dispatch_id: str,
) -> dict[str, Any]:
    """Record, on delivery, a ruling that crossed into ``pane``.

    ARCHITECTURE "Room memory": only the ruling crosses, never the judgement behind it, so
    only ``RULING_FIELDS`` are kept; any other field (a reason, say) could carry the host's
    private rules into a visitor's view. Idempotent on ``dispatch_id``: a redelivered
    dispatch is recorded once, as the dispatch record shows it delivered once."""
    _participant(pane, "pane")
    entry: dict[str, str | None] = {}
    for field in RULING_FIELDS:
        value = ruling.get(field)
        _text(value, field)
        entry[field] = value
    entry["dispatchId"] = dispatch_id
    existing = value_at(document, (RULINGS, pane))
    if isinstance(existing, list) and any(
        isinstance(item, Mapping) and item.get("dispatchId") == dispatch_id for item in existing
    ):
        return copy.deepcopy(dict(document))
    doc = copy.deepcopy(dict(document))
    code_place(doc, (RULINGS, pane), Op.APPEND, entry)
    kept = doc[RULINGS][pane]
    if len(kept) > KEPT_RULINGS:
        doc[RULINGS][pane] = kept[-KEPT_RULINGS:]  # M11
    return doc
