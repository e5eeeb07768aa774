"""Room memory: one JSON document per room, changed only by targeted changes.

ARCHITECTURE "Room memory": writers send set/append/remove at a path, never a rewrite, so a
change that names no path cannot touch it; the parts code reads and enforces (goals, plans,
pending principal decisions, offer references, rulings, and the dispatch record) are written
by code alone (``memory_records``). Who may *see* which part is dealroom.domain.visibility;
reading it by sections, for the context filter, is ``memory_sections``.

Numbered rules, cited by the code and tests that depend on them:

- M1  A path is 1-8 dotted segments, each ``[A-Za-z0-9_-]{1,64}``; a change that names no
      valid path is rejected.
- M2  The reserved parts (``RESERVED``) are written only by code (``allowed=None`` and the
      helpers in ``memory_records``), never by the memory writer: memory may never claim a
      delivery the dispatch record does not show, nor a goal, plan, ruling or offer code did
      not record.
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
- M14 A writer that reads the host's private branch (``sees_private``: the Guard) has every
      change outside the host's branch checked the same way, since ``deal`` and the visitor's
      branch are what a visitor-side pane reads (visibility V5, V6). The visitor-side writer
      is not: it never saw a private value, so a figure it records is the visitor's own.
- M15 A writer publishes only what the principal said may be shared (provenance P2): a
      ``host.public`` set or append is accepted only when one of ``said`` (the principal's own
      messages the writer read) states the value and says it may be shared. A writer given no
      ``said`` cannot publish at all.
- M16 A writer cannot lower a limit or switch a check off on its own (provenance P4): a
      ``host.limits.<slug>`` set below the floor held (or in another currency), a limit's
      removal or the private terms' removal needs a message of ``said`` stating the new floor,
      the old floor or the terms.
- M17 A writer that read the host's private branch (``sees_private``) writes where a visitor
      reads only what the visitor's side already shows: each value it sets or appends outside
      the host's branch must be stated (provenance P1) by a line of a visitor-facing pane
      (``visible``). A paraphrase of a private rule states no value the firewall knows (M14
      cannot see it); it is not on the visitor's side either, so it is refused.
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

from dealroom.domain import firewall, limits, provenance
from dealroom.domain.errors import bad_input
from dealroom.domain.seats import RoomKind, Seat, on_host_side

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

SEGMENT = re.compile(r"[A-Za-z0-9_\-]{1,64}")
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
    if not all(SEGMENT.fullmatch(segment) for segment in segments):
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
    if on_host_side(pane):  # the host's team records into the host's branch, like the host
        return (HOST,)
    match room_kind:
        case RoomKind.DEAL:
            if not is_participant_key(pane):
                return ()
            # The shared ``deal`` record is the visitor side's lead's; a teammate records
            # what it learns in its own branch (visibility V6).
            return (pane, DEAL) if pane == Seat.VISITOR.value else (pane,)
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


MISSING: Final = object()


@dataclass(slots=True)
class _Undo:
    """The one place a change touched: restoring ``parent[key]`` to ``old`` reverts it."""

    parent: dict[str, Any]
    key: str
    old: object

    def revert(self) -> None:
        if self.old is MISSING:
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
        child = parent.get(segment, MISSING)
        if isinstance(child, dict):
            parent = child
            continue
        if op == Op.REMOVE:
            return None  # M8: nothing is there to remove
        if child is not MISSING:
            where = ".".join(segments[: depth + 1])
            raise _Refusal(f"{where} holds a value, not a section")  # M6
        created: dict[str, Any] = {}
        parent[segment] = created
        if undo is None:
            undo = _Undo(parent, segment, MISSING)
        parent = created
    last = segments[-1]
    old = parent.get(last, MISSING)
    if undo is None:
        undo = _Undo(parent, last, old)
    match op:
        case Op.SET:
            parent[last] = value
        case Op.APPEND:  # M7
            if old is MISSING:
                parent[last] = [value]
            elif isinstance(old, list):
                parent[last] = [*old, value]
            elif isinstance(old, dict):
                raise _Refusal(f"{'.'.join(segments)} is a section; append needs a list")
            else:
                parent[last] = [old, value]
        case Op.REMOVE:  # M8
            if old is MISSING:
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
    sees_private: bool = False,
    said: Sequence[provenance.Said] | None = None,
    visible: Sequence[provenance.Said] = (),
    band_percent: Decimal | None = None,
) -> Applied:
    """Apply targeted changes in order to a copy of ``document`` (M10).

    ``allowed`` is the writer's prefixes (``writable_prefixes``); None means code is writing,
    which may write any valid path, reserved parts included (M2). ``said`` is the principal's
    own messages the writer read (M15, M16); ``band_percent`` the firewall's F10 band."""
    doc: dict[str, Any] = copy.deepcopy(dict(document))
    applied: list[Change] = []
    rejected: list[Rejected] = []
    public = [
        c
        for c in changes
        if allowed is not None and (_is_public(c) or (sees_private and _visitor_reads(c)))
    ]
    for change in [*(c for c in changes if c not in public), *public]:  # M13: public last
        try:
            segments = _checked(change, allowed)
            value: object = change.value
            if allowed is not None:
                value = _structured(segments, change)  # M12
                if change in public:
                    _firewalled(doc, change, withheld, band_percent)  # M13, M14
                _provenance(doc, segments, change, value, said or ())  # M15, M16
                if sees_private and _visitor_reads(change):
                    _shown(change, visible)  # M17
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
VISIBLE_REFUSAL: Final = "a visitor-side pane would read private values"
LIMITS_PATH: Final = (HOST, limits.LIMITS)
PRIVATE_TERMS_PATH: Final = (HOST, limits.PRIVATE_TERMS)


def _is_public(change: Change) -> bool:
    segments = parse_path(change.path)
    return segments is not None and segments[:2] == PUBLIC_PATH and change.op != Op.REMOVE


def _visitor_reads(change: Change) -> bool:
    """M14: a change outside the host's branch lands where a visitor-side pane may read."""
    segments = parse_path(change.path)
    return segments is not None and segments[0] != HOST and change.op != Op.REMOVE


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


NO_PROVENANCE: Final = "no message of the principal's states it"
NOT_SHOWN: Final = "a visitor-side pane would read what no visitor-side line states"


def _shown(change: Change, visible: Sequence[provenance.Said]) -> None:
    """M17: a private-branch reader's write where a visitor reads states only what a
    visitor-facing pane already shows."""
    if provenance.source_of(change.value or "", visible) is None:
        raise _Refusal(NOT_SHOWN)


def _provenance(
    document: Mapping[str, Any],
    segments: tuple[str, ...],
    change: Change,
    value: object,
    said: Sequence[provenance.Said],
) -> None:
    """M15, M16: a publication, a lower floor or a check switched off needs the principal's
    own message stating it (provenance P2, P4)."""
    if segments[:2] == PUBLIC_PATH and change.op != Op.REMOVE:
        if provenance.source_of(change.value or "", said, public=True) is None:
            raise _Refusal(f"{PUBLIC_REFUSAL}: {NO_PROVENANCE} and says it may be shared")
    elif segments[:2] == LIMITS_PATH and len(segments) == 3:
        held = limits.limits_of(document).get(segments[2])
        if held is None:
            return
        if change.op == Op.REMOVE:
            if provenance.figure_source(f"{held.floor:f}", said) is None:
                raise _Refusal(f"a limit is removed only on the principal's word: {NO_PROVENANCE}")
            return
        new = value if isinstance(value, Mapping) else {}
        floor, currency = str(new.get("floor", "")), str(new.get("currency", ""))
        try:
            lower = Decimal(floor) < held.floor or currency != held.currency
        except ArithmeticError:
            lower = True
        if lower and provenance.figure_source(floor, said) is None:
            raise _Refusal(f"a floor is lowered only on the principal's word: {NO_PROVENANCE}")
    elif segments[:2] == PRIVATE_TERMS_PATH and change.op == Op.REMOVE:
        terms = limits.private_terms_of(document)
        if terms and not any(provenance.states(m.text, t) for m in said for t in terms):
            raise _Refusal(
                f"private terms are removed only on the principal's word: {NO_PROVENANCE}"
            )


def _firewalled(
    document: Mapping[str, Any],
    change: Change,
    withheld: Iterable[Decimal],
    band_percent: Decimal | None = None,
) -> None:
    """M13, M14: a write a visitor may read that states a private value the document holds
    (or a held send's figure, firewall F6) is refused."""
    matches = firewall.check(
        document, change.path, change.value or "", withheld=withheld, band_percent=band_percent
    )
    if matches:
        kinds = ", ".join(sorted({m.private.where for m in matches}))
        refusal = PUBLIC_REFUSAL if _is_public(change) else VISIBLE_REFUSAL
        raise _Refusal(f"{refusal} ({kinds})")


# --- for the code-written parts and the readers (memory_records, memory_sections) ---


def code_place(doc: dict[str, Any], segments: Sequence[str], op: Op, value: object) -> None:
    try:
        _place(doc, segments, op, value)
    except _Refusal as refusal:
        raise bad_input(f"Memory cannot hold this: {refusal.reason}.") from None


def value_at(document: Mapping[str, Any], segments: Sequence[str]) -> object:
    node: object = document
    for segment in segments:
        if not isinstance(node, Mapping) or segment not in node:
            return MISSING
        node = node[segment]
    return node
