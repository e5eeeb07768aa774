"""Durable account memory: one document per account, curated by Arvist, merged into rooms by
AccUpdate (seed 000 "Two memory layers, with a gatekeeper", "Recording dates on durable memory
are written by code", "Standing knowledge is merged in, and announced"; seed 002 layers 1, 4).

The durable document has the shape of the account's branch in a room: a room's host branch is
seeded from it (``{"host": durable}``), so ``host.rates.x`` in a room is ``rates.x`` here.

A *leaf* is a value that is not a section (a string, number or list). Leaf dates and history
are per leaf, computed by code from the documents before and after a write, never reported by
a model.

Numbered rules, cited by the code and tests that depend on them:

- D1  A leaf changed when its value differs or it appeared or disappeared; a write that
      changes no leaf writes nothing (no version, no date, no history row).
- D2  Arvist writes durable memory only by targeted changes (set/append/remove at a path), and
      never at a reserved room part, a participant key (``host``, ``visitor``: another party's
      branch) or ``claims`` (what someone said happened elsewhere is not a durable fact).
- D3  Account wins: an Arvist change to a leaf the account changed after the room's last seed
      or merge is dropped, since the room has not yet seen the newer value.
- D4  AccUpdate writes only the participant's own branch, from the account's leaves changed
      since the room's last merge (all leaves when it never merged), account value wins, and
      never a reserved part (goals, plans, decisions…).
- D5  Only the host is ever merged in a deal room (seed 002 layer 1); scripted rooms are never
      merged; Arvist never runs on scripted or demo rooms (seed 000 "Scripted rooms never write
      durable memory").
- D6  A revert restores the change's old value only while the leaf still holds the change's
      new value; otherwise it is a CONFLICT (revert the later change first).
- D7  What reaches a room's host branch from durable memory (a seed or an AccUpdate merge)
      carries no ``public`` leaf that states a private value of that branch (its limits,
      private terms, distinctive private values, and the figures of sends held in the room:
      the firewall, as memory M13 checks a room writer's ``host.public`` write). Such a leaf
      is dropped from the room (the account document keeps it) and an operator is flagged:
      a durable note is never a way around the firewall.
- D8  Arvist is a model writing the document a host branch is seeded from, so its changes
      are held to the room writer's rules on that branch (memory M12, M13): a limit is
      stored only as ``limits.<slug> {floor, currency}``, a private term only appended to
      ``private_terms``, and a ``public`` change that states a private value the document
      holds is refused (``memory.PUBLIC_REFUSAL``). It has no principal's word of its own: a
      public note, a lower floor or a dropped limit needs the principal's message in the room
      it curates (memory M15, M16).
- D9  AccUpdate names stale leaves, but never a limit or the private terms (``removable``): a
      model dropping one would switch the firewall's check off with no principal's word.
- D10 A host's Arvist never drops a floor the room held: after its changes, every limit of the
      room's host branch the account document lacks is copied into it by code (a limit the
      account holds stays as the account has it: D3). Rooms are seeded from the account, so a
      curator that forgot a floor would otherwise leave the next room with none.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final

from dealroom.domain import firewall, limits, pane_words, provenance
from dealroom.domain import memory as memdoc
from dealroom.domain.memory import RESERVED
from dealroom.domain.seats import RoomKind, RoomMode, Seat

CLAIMS: Final = "claims"
DEALS: Final = "deals"
"""Closed deals the host's Arvist records: ``deals.<key>.{fee,deliverables,date,counterparty}``."""

NEVER_DURABLE: Final = frozenset({*RESERVED, CLAIMS, *(s.value for s in Seat)})
"""D2: first segments no durable write may name."""

MERGE_KEY_PREFIX: Final = "memory-merged:"
"""The system line a merge posts is keyed ``memory-merged:<participant>:<version>``."""

MERGE_LINE_ITEMS: Final = 8


TURN_FAILED_KEY_PREFIX: Final = "turn-failed:"
"""The system line of a pane's turn that failed for good: ``turn-failed:<run>:<queued>``."""
TURN_RETRYING_KEY_PREFIX: Final = "turn-retrying:"
"""The line of a failed attempt the runner tries again: ``turn-retrying:<run>:<queued>``."""


class SystemLineKind(StrEnum):
    """What a system line is about, so clients can style it (and offer a retry, or drop what
    a failed attempt had streamed)."""

    NOTICE = "NOTICE"
    MEMORY_MERGED = "MEMORY_MERGED"
    TURN_RETRYING = "TURN_RETRYING"
    TURN_FAILED = "TURN_FAILED"


_KINDS: Final = (
    (MERGE_KEY_PREFIX, SystemLineKind.MEMORY_MERGED),
    (TURN_RETRYING_KEY_PREFIX, SystemLineKind.TURN_RETRYING),
    (TURN_FAILED_KEY_PREFIX, SystemLineKind.TURN_FAILED),
)


def system_line_kind(client_message_id: str | None) -> SystemLineKind:
    for prefix, kind in _KINDS:
        if client_message_id is not None and client_message_id.startswith(prefix):
            return kind
    return SystemLineKind.NOTICE


def turn_failed_key(run_id: object, queued: datetime, *, again: bool = False) -> str:
    """The key of a failed attempt's line; ``again``: the runner tries it again. An attempt is
    named by when it was queued (every retry, and retryTurn, queues it anew), in hex
    milliseconds: at most 14 + 36 + 1 + 11 characters, within a client message id's 64."""
    prefix = TURN_RETRYING_KEY_PREFIX if again else TURN_FAILED_KEY_PREFIX
    return f"{prefix}{run_id}:{int(queued.timestamp() * 1000):x}"


def merge_line_key(participant_id: object, version: int) -> str:
    return f"{MERGE_KEY_PREFIX}{participant_id}:{version}"


@dataclass(frozen=True, slots=True)
class LeafChange:
    """One leaf's value before and after a write; None is "absent"."""

    path: str
    old: Any
    new: Any


def leaves(document: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every leaf of ``document`` by dotted path. A None value counts as absent; an empty
    section has no leaves."""
    found: dict[str, Any] = {}
    for key, value in document.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            found.update(leaves(value, path))
        elif value is not None:
            found[path] = value
    return found


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[LeafChange]:
    """D1: the leaves that differ between two documents, by path."""
    old, new = leaves(before), leaves(after)
    changes: list[LeafChange] = []
    for path in sorted(old.keys() | new.keys()):
        a, b = old.get(path), new.get(path)
        if a is None or b is None or _canonical(a) != _canonical(b):
            changes.append(LeafChange(path, copy.deepcopy(a), copy.deepcopy(b)))
    return changes


def related(path: str, others: Iterable[str]) -> bool:
    """``path`` is one of ``others``, or above or below one of them."""
    for other in others:
        if path == other or path.startswith(f"{other}.") or other.startswith(f"{path}."):
            return True
    return False


def durable_path_allowed(path: str) -> bool:
    """D2: a path Arvist may name in durable memory."""
    segments = path.split(".")
    return bool(segments[0]) and segments[0] not in NEVER_DURABLE and CLAIMS not in segments


def set_leaf(document: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, with None, remove) one leaf in place, creating sections on the way and
    replacing a value that is in the way (code writing: the account's value wins)."""
    segments = path.split(".")
    node = document
    for segment in segments[:-1]:
        child = node.get(segment)
        if not isinstance(child, dict):
            if value is None:
                return
            child = {}
            node[segment] = child
        node = child
    if value is None:
        node.pop(segments[-1], None)
    else:
        node[segments[-1]] = copy.deepcopy(value)


def prune(document: dict[str, Any]) -> dict[str, Any]:
    """Drop sections a removal left empty, so an absent leaf leaves no trace."""
    for key in list(document):
        value = document[key]
        if isinstance(value, dict):
            prune(value)
            if not value:
                del document[key]
    return document


def get_leaf(document: Mapping[str, Any], path: str) -> Any:
    node: Any = document
    for segment in path.split("."):
        if not isinstance(node, Mapping) or segment not in node:
            return None
        node = node[segment]
    return None if isinstance(node, Mapping) else node


# --- AccUpdate (D4, D5) ---


def merge_due(kind: RoomKind, mode: RoomMode, key: str) -> bool:
    """D5: which bound participants AccUpdate may merge at all."""
    if mode == RoomMode.SCRIPTED:
        return False
    return kind == RoomKind.HOME or key == Seat.HOST.value


def arvist_runs(mode: RoomMode) -> bool:
    """D5: Arvist never promotes from a scripted tape or a host's self-preview."""
    return mode == RoomMode.LIVE


def merge(
    branch: Mapping[str, Any], durable: Mapping[str, Any], paths: Sequence[str] | None
) -> tuple[dict[str, Any], list[LeafChange]]:
    """D4: the participant's branch with the account's leaves merged in (account wins), and the
    leaves that changed. ``paths`` are the durable paths changed since the last merge (None:
    never merged, so every durable leaf)."""
    current = leaves(durable)
    wanted = sorted(current) if paths is None else sorted(set(paths))
    merged: dict[str, Any] = copy.deepcopy(dict(branch))
    for path in wanted:
        if not durable_path_allowed(path):
            continue
        value = current.get(path)
        if value is None and paths is not None and any(p.startswith(f"{path}.") for p in current):
            continue  # the path became a section: its own leaves are merged instead
        if value is None and get_leaf(merged, path) is None:
            continue
        set_leaf(merged, path, value)
    prune(merged)
    return merged, diff(branch, merged)


def _show(value: Any) -> str:
    if value is None:
        return "(removed)"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


SECTION_WORDS: Final = {
    "limits": "your limits",
    "private_terms": "your private terms",
    "public": "what you made public",
    "rates": "your rates",
    "rules": "your rules",
    "deals": "your past deals",
    "contact": "your contact details",
    "style": "your style",
    "services": "your services",
}
"""How the merge line names a document's top-level sections to their owner (PW1: a path is
for code, the person reads words)."""


def _words(segment: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", segment)
    return spaced.replace("_", " ").replace("-", " ").strip().lower()


def leaf_words(path: str) -> str:
    """A leaf's path as its owner says it: ``limits.sponsored_post.floor`` is "your limits
    (sponsored post floor)", ``private_terms`` "your private terms"."""
    head, *rest = path.split(".")
    named = SECTION_WORDS.get(head, _words(head))
    detail = " ".join(_words(segment) for segment in rest)
    return f"{named} ({detail})" if detail else named


def merged_line(changes: Sequence[LeafChange]) -> str:
    """The text of the MemoryMerged system line: what changed, in the participant's own pane
    only (it names the participant's own values), in people's words (PW1: no path, no field
    name, no label, even one a value happens to quote)."""
    shown = [f"{leaf_words(c.path)}: {_show(c.new)}" for c in changes[:MERGE_LINE_ITEMS]]
    more = len(changes) - MERGE_LINE_ITEMS
    if more > 0:
        shown.append(f"and {more} more")
    line = "Standing knowledge merged from your profile: " + "; ".join(shown) + "."
    return pane_words.in_people_words(line)


# --- the firewall on what durable memory brings into a room (D7, D8) ---


def curate(
    document: Mapping[str, Any],
    changes: Sequence[memdoc.Change],
    *,
    said: Sequence[provenance.Said] = (),
    band_percent: Decimal | None = None,
) -> memdoc.Applied:
    """D8: Arvist's changes applied to the durable ``document`` as the room writer's are
    applied to the host branch it seeds (D2 and D3 are the caller's, before this): a public
    note or a lower or dropped limit needs the principal's own message in ``said`` (memory
    M15, M16)."""
    host = memdoc.HOST

    def bare(change: memdoc.Change) -> memdoc.Change:
        return memdoc.Change(change.op, change.path.removeprefix(f"{host}."), change.value)

    applied = memdoc.apply_changes(
        {host: dict(document)},
        [memdoc.Change(c.op, f"{host}.{c.path}", c.value) for c in changes],
        allowed=(host,),
        said=said,
        band_percent=band_percent,
    )
    branch = applied.document.get(host)
    return memdoc.Applied(
        dict(branch) if isinstance(branch, Mapping) else {},
        tuple(bare(c) for c in applied.applied),
        tuple(memdoc.Rejected(bare(r.change), r.reason) for r in applied.rejected),
    )


PUBLIC: Final = firewall.PUBLIC


def keep_limits(document: Mapping[str, Any], room_branch: Mapping[str, Any]) -> dict[str, Any]:
    """D10: ``document`` with every limit of the room's host branch it lacks."""
    kept: dict[str, Any] = copy.deepcopy(dict(document))
    held = room_branch.get(limits.LIMITS)
    if not isinstance(held, Mapping):
        return kept
    own = kept.get(limits.LIMITS)
    mine: dict[str, Any] = dict(own) if isinstance(own, Mapping) else {}
    for slug, limit in held.items():
        if slug not in mine and isinstance(limit, Mapping):
            mine[slug] = copy.deepcopy(dict(limit))
    if mine:
        kept[limits.LIMITS] = mine
    return kept


def removable(paths: Sequence[str]) -> list[str]:
    """D9: the paths a model may name stale without the principal's word: none under the
    limits or the private terms (provenance P4: removing one switches a check off)."""
    guarded = (limits.LIMITS, limits.PRIVATE_TERMS)
    return [p for p in paths if p.split(".", 1)[0] not in guarded]


def screen_public(
    branch: Mapping[str, Any],
    *,
    withheld: Iterable[Decimal] = (),
    band_percent: Decimal | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """D7: the host branch without the ``public`` leaves that state one of its private
    values, and the paths dropped (``public.<...>``). Every public leaf is checked, not only
    the merged ones: a limit merged now makes an older public note stating it private."""
    screened: dict[str, Any] = copy.deepcopy(dict(branch))
    public = screened.get(PUBLIC)
    if not isinstance(public, Mapping):
        return screened, []
    private = firewall.PrivateValues.of(
        {"host": screened}, withheld=withheld, band_percent=band_percent
    )
    if not private:
        return screened, []
    dropped = [
        f"{PUBLIC}.{path}"
        for path, value in leaves(public).items()
        if private.scan_value([path, value])  # a key reaches a visitor's prompt too (M13)
    ]
    for path in dropped:
        set_leaf(screened, path, None)
    prune(screened)
    return screened, dropped


def public_dropped(paths: Sequence[str], how: str) -> str:
    """An operator flag's evidence for D7 (paths only: the values stay in the host's memory)."""
    shown = ", ".join(paths[:MERGE_LINE_ITEMS])
    more = f" and {len(paths) - MERGE_LINE_ITEMS} more" if len(paths) > MERGE_LINE_ITEMS else ""
    return f"{len(paths)} durable host.public leaf(s) not {how}: private values ({shown}{more})"


# --- reverts (D6) ---


def revert_conflicts(document: Mapping[str, Any], path: str, new_value: Any) -> bool:
    """D6: true when the leaf no longer holds what the change wrote."""
    current = get_leaf(document, path)
    if current is None or new_value is None:
        return current is not None or new_value is not None
    return _canonical(current) != _canonical(new_value)
