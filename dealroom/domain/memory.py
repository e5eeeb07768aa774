"""Room memory: one JSON document per room, changed only by targeted changes.

ARCHITECTURE "Room memory": writers send set/append/remove at a path, never a rewrite, so a
change that names no path cannot touch it; the parts code reads and enforces (goals, plans,
pending principal decisions, offer references, rulings, and the dispatch record) are written
by code alone. Who may *see* which part is dealroom.domain.visibility.

Numbered rules, cited by the code and tests that depend on them:

- M1  A path is 1-8 dotted segments, each ``[A-Za-z0-9_-]{1,64}``; a change that names no
      valid path is rejected.
- M2  The reserved parts (``RESERVED``) are written only by code (``allowed=None`` and the
      helpers below), never by the memory writer: memory may never claim a delivery the
      dispatch record does not show, nor a goal, plan, ruling or offer code did not record.
- M3  The memory writer on the host pane writes the host's branch; on a visitor-side pane
      of a deal room it writes that participant's branch and the shared ``deal``. Anywhere
      else it writes nothing.
- M4  The writer writes strictly under an allowed prefix (``host.x``), never the whole
      branch, so one change cannot replace everything a branch holds.
- M5  set and append carry a value of at most ``MAX_VALUE_CHARS`` characters.
- M6  set creates missing sections on the way; a value (not a section) in the way rejects
      the change.
- M7  append to a missing target makes ``[value]``, to a list appends, to a single value
      makes ``[old, value]``; a section cannot be appended to.
- M8  remove deletes what the path names and is a no-op when nothing is there.
- M9  A set or append that would make ``json.dumps(document)`` exceed
      ``MAX_DOCUMENT_BYTES`` is rejected; remove is always allowed (it only shrinks).
- M10 Changes apply in order to a new document; the input is never mutated, and one
      rejected change neither stops the others nor leaves a trace.
- M12 A writer's limits are structured (dealroom.domain.limits): under ``host.limits`` it
      may only ``set host.limits.<slug>`` to a JSON object ``{"floor", "currency",
      "source"}`` with a positive floor and an ISO currency (stored as that object, never as
      text), or remove one; under ``host.private_terms`` it may only append a term (a JSON
      object ``{"text", "source"}``, or plain text) or remove them all. Anything else there
      is refused, so code always finds a limit where it enforces one.
- M13 A writer's ``host.public`` changes apply after its other changes, each checked by
      the private-value firewall (dealroom.domain.firewall) against the private values the
      document then holds (and the figures of sends held for the principal); one that
      states any is refused (and recorded as rejected).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final, assert_never

from dealroom.domain import firewall, limits
from dealroom.domain.errors import bad_input
from dealroom.domain.seats import RoomKind, Seat

MAX_DEPTH: Final = 8
MAX_VALUE_CHARS: Final = 4000
MAX_DOCUMENT_BYTES: Final = 256 * 1024

HOST: Final = Seat.HOST.value
DEAL: Final = "deal"
GOALS: Final = "goals"
PLANS: Final = "plans"
PENDING_DECISIONS: Final = "pendingPrincipalDecisions"
OFFERS: Final = "offers"
RULINGS: Final = "rulings"
SENT: Final = "sent"
DELIVERIES: Final = "deliveries"

RESERVED: Final = frozenset({GOALS, PLANS, PENDING_DECISIONS, OFFERS, RULINGS, SENT, DELIVERIES})
"""M2: top-level parts written only by code."""

RULING_FIELDS: Final = ("decision", "amount", "currency", "deliverable")
KEPT_RULINGS: Final = 5
"""M11: memory keeps the latest rulings per pane (the standing ones); the dispatch record
keeps them all. A turn's input must not grow with the length of the negotiation."""
"""The fields of a ruling that cross into another pane; nothing else of the judgement does."""

_SEGMENT = re.compile(r"[A-Za-z0-9_\-]{1,64}")
_PARTICIPANT_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")


class Op(StrEnum):
    SET = "set"
    APPEND = "append"
    REMOVE = "remove"


_OPS: Final = frozenset(Op)


class GoalStatus(StrEnum):
    OPEN = "open"
    MET = "met"
    BLOCKED = "blocked"
    ABANDONED = "abandoned"


_GOAL_STATUSES: Final = frozenset(GoalStatus)


@dataclass(frozen=True, slots=True)
class Change:
    """One targeted change; it can touch only what ``path`` names (ARCHITECTURE "Room
    memory": never a rewrite)."""

    op: Op
    path: str
    value: str | None = None


@dataclass(frozen=True)
class Rejected:
    change: Change
    reason: str


@dataclass(frozen=True)
class Applied:
    """The new document, and which changes took effect and which did not (and why)."""

    document: dict[str, Any]
    applied: tuple[Change, ...]
    rejected: tuple[Rejected, ...]


def parse_path(path: str) -> tuple[str, ...] | None:
    """M1: the segments of a dotted path, or None when it is not a memory path."""
    segments = tuple(path.split("."))
    if not 1 <= len(segments) <= MAX_DEPTH:
        return None
    if not all(_SEGMENT.fullmatch(segment) for segment in segments):
        return None
    return segments


def is_participant_key(key: str) -> bool:
    """A participant key names a branch describing that participant ("host", "visitor", …):
    a lowercase identifier that is neither a reserved part nor the shared ``deal``."""
    return bool(_PARTICIPANT_KEY.fullmatch(key)) and key not in RESERVED and key != DEAL


def writable_prefixes(pane: str, room_kind: RoomKind) -> tuple[str, ...]:
    """M3: the branches the memory writer (Distil) running on ``pane`` may write under.

    seed 002 layer 1: a visitor's side records what it learns about that participant and the
    shared deal, never the host's branch; the host side records into the host's branch only.
    """
    if pane == HOST:
        return (HOST,)
    match room_kind:
        case RoomKind.DEAL:
            return (pane, DEAL) if is_participant_key(pane) else ()
        case RoomKind.HOME:
            # A home room has only the host's pane; any other pane writes nothing.
            return ()
        case _:
            assert_never(room_kind)


# --- applying changes ---


class _Refusal(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_MISSING: Final = object()


@dataclass(slots=True)
class _Undo:
    """The one place a change touched: restoring ``parent[key]`` to ``old`` reverts it."""

    parent: dict[str, Any]
    key: str
    old: object

    def revert(self) -> None:
        if self.old is _MISSING:
            del self.parent[self.key]
        else:
            self.parent[self.key] = self.old


def _place(doc: dict[str, Any], segments: Sequence[str], op: Op, value: object) -> _Undo | None:
    """Apply one change in place (M6-M8); None when nothing changed.

    A refusal happens before anything is touched: sections are only created once the walk has
    left the existing document, and no value can be in the way below a new section. Every
    change replaces or deletes exactly one key (lists are copied, never extended in place), so
    one ``_Undo`` reverts it (M9, M10)."""
    parent = doc
    undo: _Undo | None = None
    for depth, segment in enumerate(segments[:-1]):
        child = parent.get(segment, _MISSING)
        if isinstance(child, dict):
            parent = child
            continue
        if op == Op.REMOVE:
            return None  # M8: nothing is there to remove
        if child is not _MISSING:
            where = ".".join(segments[: depth + 1])
            raise _Refusal(f"{where} holds a value, not a section")  # M6
        created: dict[str, Any] = {}
        parent[segment] = created
        if undo is None:
            undo = _Undo(parent, segment, _MISSING)
        parent = created
    last = segments[-1]
    old = parent.get(last, _MISSING)
    if undo is None:
        undo = _Undo(parent, last, old)
    match op:
        case Op.SET:
            parent[last] = value
        case Op.APPEND:  # M7
            if old is _MISSING:
                parent[last] = [value]
            elif isinstance(old, list):
                parent[last] = [*old, value]
            elif isinstance(old, dict):
                raise _Refusal(f"{'.'.join(segments)} is a section; append needs a list")
            else:
                parent[last] = [old, value]
        case Op.REMOVE:  # M8
            if old is _MISSING:
                return None
            del parent[last]
        case _:
            assert_never(op)
    return undo


def _under(segments: tuple[str, ...], prefix: str) -> bool:
    """M4: strictly under the prefix; the prefix itself is not."""
    head = parse_path(prefix)
    return head is not None and len(segments) > len(head) and segments[: len(head)] == head


def _checked(change: Change, allowed: Sequence[str] | None) -> tuple[str, ...]:
    """The change's path segments, or a refusal before anything is tried (M1, M2, M4, M5)."""
    if change.op not in _OPS:
        raise _Refusal(f"unknown op {change.op!r}")
    segments = parse_path(change.path)
    if segments is None:  # M1
        raise _Refusal(f"not a memory path: {change.path!r}")
    if allowed is not None:
        if segments[0] in RESERVED:  # M2
            raise _Refusal(f"{segments[0]} is written by code only")
        if not any(_under(segments, prefix) for prefix in allowed):  # M4
            raise _Refusal(f"{change.path} is outside the branches this writer may write")
    if change.op != Op.REMOVE:  # M5
        if change.value is None:
            raise _Refusal(f"{change.op} needs a value")
        if len(change.value) > MAX_VALUE_CHARS:
            raise _Refusal(f"value longer than {MAX_VALUE_CHARS} characters")
    return segments


def document_size(document: Mapping[str, Any]) -> int:
    """M9: the size the document limit is measured in (ASCII JSON, so bytes == chars)."""
    return len(json.dumps(document))


def apply_changes(
    document: Mapping[str, Any],
    changes: Sequence[Change],
    *,
    allowed: Sequence[str] | None,
    withheld: Iterable[Decimal] = (),
) -> Applied:
    """Apply targeted changes in order to a copy of ``document`` (M10).

    ``allowed`` is the writer's prefixes (``writable_prefixes``); None means code is writing,
    which may write any valid path, reserved parts included (M2)."""
    doc: dict[str, Any] = copy.deepcopy(dict(document))
    applied: list[Change] = []
    rejected: list[Rejected] = []
    public = [c for c in changes if allowed is not None and _is_public(c)]
    for change in [*(c for c in changes if c not in public), *public]:  # M13: public last
        try:
            segments = _checked(change, allowed)
            value: object = change.value
            if allowed is not None:
                value = _structured(segments, change)  # M12
                if change in public:
                    _firewalled(doc, change, withheld)  # M13
            undo = _place(doc, segments, change.op, value)
        except _Refusal as refusal:
            rejected.append(Rejected(change, refusal.reason))
            continue
        if undo is not None and change.op != Op.REMOVE and document_size(doc) > MAX_DOCUMENT_BYTES:
            undo.revert()  # M9
            rejected.append(Rejected(change, f"memory would exceed {MAX_DOCUMENT_BYTES} bytes"))
            continue
        applied.append(change)
    return Applied(doc, tuple(applied), tuple(rejected))


PUBLIC_PATH: Final = (HOST, "public")
PUBLIC_REFUSAL: Final = "host.public would reveal private values"
LIMITS_PATH: Final = (HOST, limits.LIMITS)
PRIVATE_TERMS_PATH: Final = (HOST, limits.PRIVATE_TERMS)


def _is_public(change: Change) -> bool:
    segments = parse_path(change.path)
    return segments is not None and segments[:2] == PUBLIC_PATH and change.op != Op.REMOVE


def _structured(segments: tuple[str, ...], change: Change) -> object:
    """M12: the value a writer's change stores; limits and private terms only as data."""
    if segments[:2] == LIMITS_PATH:
        if len(segments) != 3 or change.op == Op.APPEND:
            raise _Refusal("a limit is set or removed whole, at host.limits.<deliverable>")
        if change.op == Op.REMOVE:
            return None
        entry = limits.parse_limit(change.value or "")
        if entry is None:
            raise _Refusal('a limit is {"floor": positive amount, "currency": ISO code}')
        return entry
    if segments[:2] == PRIVATE_TERMS_PATH:
        if len(segments) != 2 or change.op == Op.SET:
            raise _Refusal("a private term is appended to host.private_terms, or all removed")
        if change.op == Op.REMOVE:
            return None
        term = limits.parse_private_term(change.value or "")
        if term is None:
            raise _Refusal('a private term is {"text": ..., "source": message id}')
        return term
    return change.value


def _firewalled(document: Mapping[str, Any], change: Change, withheld: Iterable[Decimal]) -> None:
    """M13: a host.public write that states a private value the document holds (or a held
    send's figure, firewall F6) is refused."""
    matches = firewall.check(document, change.path, change.value or "", withheld=withheld)
    if matches:
        kinds = ", ".join(sorted({m.private.where for m in matches}))
        raise _Refusal(f"{PUBLIC_REFUSAL} ({kinds})")


# --- code-written parts (M2): each returns a new document ---
#
# These are code's own records, so they are not held to the writer's document limit (M9): a
# ruling that crossed, or a principal's instruction, must never be lost because the model
# writer filled memory. Their texts are still bounded (M5) so the models' output is.


def _text(value: str | None, field: str) -> None:
    if value is not None and len(value) > MAX_VALUE_CHARS:
        raise bad_input(f"{field} is longer than {MAX_VALUE_CHARS} characters.", field)


def _segment(value: str, field: str) -> None:
    if not _SEGMENT.fullmatch(value):
        raise bad_input(f"{field} is not a memory key: {value!r}.", field)


def _participant(value: str, field: str) -> None:
    if not is_participant_key(value):
        raise bad_input(f"{field} is not a participant key: {value!r}.", field)


def _code_place(doc: dict[str, Any], segments: Sequence[str], op: Op, value: object) -> None:
    try:
        _place(doc, segments, op, value)
    except _Refusal as refusal:
        raise bad_input(f"Memory cannot hold this: {refusal.reason}.") from None


def _get(document: Mapping[str, Any], segments: Sequence[str]) -> object:
    node: object = document
    for segment in segments:
        if not isinstance(node, Mapping) or segment not in node:
            return _MISSING
        node = node[segment]
    return node


def set_plan(document: Mapping[str, Any], pane: str, text: str) -> dict[str, Any]:
    """Record the persona's own plan for ``pane`` (visibility V1 hides every plan; code
    re-attaches only the pane's own via ``own_plan``)."""
    _participant(pane, "pane")
    _text(text, "plan")
    doc = copy.deepcopy(dict(document))
    _code_place(doc, (PLANS, pane), Op.SET, text)
    return doc


def own_plan(document: Mapping[str, Any], pane: str) -> str:
    """The plan the persona of ``pane`` wrote last turn, or "" (each persona sees only its
    own plan: ARCHITECTURE "Room memory")."""
    plan = _get(document, (PLANS, pane))
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
            not _SEGMENT.fullmatch(key)
            or status not in _GOAL_STATUSES
            or len(reason) > MAX_VALUE_CHARS
        ):
            skipped.append(key)
            continue
        entry = {"status": GoalStatus(status).value, "reason": reason, "by": by}
        _code_place(doc, (GOALS, key), Op.SET, entry)
    return doc, tuple(skipped)


def record_principal_decision(
    document: Mapping[str, Any],
    key: str,
    side: str,
    question: str,
    instruction: str | None,
) -> dict[str, Any]:
    """Record a question put to a principal and, once given, their instruction.

    ARCHITECTURE "Offers": a principal's chat "yes" lives here as ``principalInstruction``; it
    lets the agent settle terms and never moves the stage. ``side`` is the pane whose
    principal was asked; only that side sees the entry (visibility V2, V7)."""
    _segment(key, "key")
    _participant(side, "side")
    _text(question, "question")
    _text(instruction, "principalInstruction")
    doc = copy.deepcopy(dict(document))
    entry = {"side": side, "question": question, "principalInstruction": instruction}
    _code_place(doc, (PENDING_DECISIONS, key), Op.SET, entry)
    return doc


def record_offer(document: Mapping[str, Any], key: str, offer_id: str) -> dict[str, Any]:
    """Memory keeps only a reference to a written offer, ``offers.<key>.offerId``: its terms
    and stage live in the offers row and are projected at call time, never copied (seed 000
    "Records are made by a specialist")."""
    _segment(key, "key")
    _text(offer_id, "offerId")
    doc = copy.deepcopy(dict(document))
    _code_place(doc, (OFFERS, key), Op.SET, {"offerId": offer_id})
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
    existing = _get(doc, (pane, "claims"))
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
        _code_place(doc, (pane, "claims"), Op.APPEND, text)
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
    existing = _get(document, (RULINGS, pane))
    if isinstance(existing, list) and any(
        isinstance(item, Mapping) and item.get("dispatchId") == dispatch_id for item in existing
    ):
        return copy.deepcopy(dict(document))
    doc = copy.deepcopy(dict(document))
    _code_place(doc, (RULINGS, pane), Op.APPEND, entry)
    kept = doc[RULINGS][pane]
    if len(kept) > KEPT_RULINGS:
        doc[RULINGS][pane] = kept[-KEPT_RULINGS:]  # M11
    return doc


# --- reading sections, for the context filter ---


def section_paths(document: Mapping[str, Any], max_depth: int = 3) -> list[str]:
    """The dotted paths of the sections (sections and values) down to ``max_depth``, sorted:
    the menu the context filter chooses from. Keys that are not path segments (M1) cannot be
    named, so they are not offered."""
    paths: list[str] = []

    def walk(node: Mapping[str, Any], prefix: str, depth: int) -> None:
        for key, child in node.items():
            if not isinstance(key, str) or not _SEGMENT.fullmatch(key):
                continue
            path = f"{prefix}.{key}" if prefix else key
            paths.append(path)
            if depth < max_depth and isinstance(child, Mapping):
                walk(child, path, depth + 1)

    if max_depth >= 1:
        walk(document, "", 1)
    return sorted(paths)


def select_paths(
    document: Mapping[str, Any], paths: Sequence[str], *, always: Sequence[str] = ()
) -> dict[str, Any]:
    """The sub-document holding exactly the named sections that exist (whole subtrees), plus
    ``always``.

    Unknown or malformed paths are ignored: the context filter narrows what an agent reads
    and can never fabricate memory, so every value in the result is in ``document`` at the
    same path."""
    selected: dict[str, Any] = {}
    for path in [*always, *paths]:
        segments = parse_path(path)
        if segments is None:
            continue
        found = _get(document, segments)
        if found is _MISSING:
            continue
        node = selected
        for segment in segments[:-1]:
            child = node.get(segment)
            if not isinstance(child, dict):
                child = {}
                node[segment] = child
            node = child
        node[segments[-1]] = copy.deepcopy(found)
    return selected
