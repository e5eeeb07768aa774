"""What of room memory an agent acting in a pane may see: the confidentiality mechanism.

ARCHITECTURE "Room memory" and seed 002 layers 1-3: the host's private branch, every plan,
other participants' branches and the dispatch internals are removed *here*, by code, before
any model sees the document; confidentiality never depends on a model's judgement. The
persona, the memory writer (Distil) and the context filter of a pane all receive this same
view, and the context filter only ever narrows it further (memory_sections.select_paths).

Numbered rules, cited by the code and tests that depend on them:

- V1  Everyone: ``plans`` is removed (code re-attaches a persona's own plan alone, via
      memory_records.own_plan), and so are ``sent`` and ``deliveries``: what was delivered reaches a
      persona from the dispatch record, never from memory.
- V2  The host pane sees everything else, except pending principal decisions put to
      another side.
- V3  A visitor-side pane sees only what V4-V9 let through; every other top-level key,
      including one no rule knows, is removed (default deny).
- V4  ``host`` shows only ``host.public`` (what the host said may be shared), and nothing at
      all when there is no ``host.public``: a visitor-facing agent never receives the host's
      rules, its limits (``host.limits``) or its private terms (``host.private_terms``),
      which the memory writer can only record as data (memory M12), and ``host.public``
      holds nothing the firewall knows to be private (memory M13).
- V5  The pane's own branch is kept; other participants' branches are removed (seed 002
      layer 1: one participant's account facts never reach another's side).
- V6  ``offers`` (references only) are kept; ``deal`` (the facts the visitor side stated) is
      kept in the visitor side's lead's pane only: a teammate on that side is another
      non-host participant, and what the lead told the host's agent is not its business.
- V7  ``goals``: every goal's status, when it is a known status; the rest of an entry (its
      reason) only where the pane itself ruled it (``by``), since a host-side reason may
      state the host's private reasoning.
- V8  ``pendingPrincipalDecisions``: only the entries put to this pane's side.
- V9  ``rulings``: only ``rulings[pane]``, the rulings that crossed into this pane; only the
      ruling crosses, never the judgement behind it.
- V10 A non-host pane of a home room (which has only the host's pane), or a pane that is not
      a participant key, sees nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final, assert_never

from dealroom.domain.memory import (
    DEAL,
    DELIVERIES,
    GOALS,
    HOST,
    OFFERS,
    PENDING_DECISIONS,
    PLANS,
    RULINGS,
    SENT,
    GoalStatus,
    is_participant_key,
)
from dealroom.domain.seats import VISITOR_KEY, RoomKind, on_host_side

PUBLIC: Final = "public"

HIDDEN_FROM_ALL: Final = frozenset({PLANS, SENT, DELIVERIES})
"""V1: parts no pane's view holds."""

_GOAL_STATUSES: Final = frozenset(GoalStatus)


def is_visitor_facing(pane: str) -> bool:
    """A pane off the host's side faces a counterparty: its agents get the visitor view. The
    host's team (``host_2`` …) reads as the host; any other key, known or not, faces out."""
    return not on_host_side(pane)


def visible_memory(memory: Mapping[str, Any], *, pane: str, room_kind: RoomKind) -> dict[str, Any]:
    """The part of ``memory`` an agent acting in ``pane`` may see, as a new document (the
    input is never mutated, and nothing in the result is shared with it)."""
    if not is_visitor_facing(pane):
        return _host_view(memory)
    match room_kind:
        case RoomKind.HOME:
            return {}  # V10
        case RoomKind.DEAL:
            if not is_participant_key(pane):
                return {}  # V10
            return _visitor_view(memory, pane)
        case _:
            assert_never(room_kind)


def _host_view(memory: Mapping[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {}
    for key, value in memory.items():
        if key in HIDDEN_FROM_ALL:  # V1
            continue
        if key == PENDING_DECISIONS:  # V2
            decisions = _decisions_for(value, HOST)
            if decisions:
                view[key] = decisions
            continue
        view[key] = copy.deepcopy(value)
    return view


def _visitor_view(memory: Mapping[str, Any], pane: str) -> dict[str, Any]:
    # V3: built up from nothing, so a part no rule names never reaches the view.
    view: dict[str, Any] = {}
    host = memory.get(HOST)
    if isinstance(host, Mapping) and PUBLIC in host:  # V4
        view[HOST] = {PUBLIC: copy.deepcopy(host[PUBLIC])}
    if pane in memory:  # V5
        view[pane] = copy.deepcopy(memory[pane])
    for shared in (DEAL, OFFERS) if pane == VISITOR_KEY else (OFFERS,):  # V6
        if shared in memory:
            view[shared] = copy.deepcopy(memory[shared])
    goals = _goals_for(memory.get(GOALS), pane)  # V7
    if goals:
        view[GOALS] = goals
    decisions = _decisions_for(memory.get(PENDING_DECISIONS), pane)  # V8
    if decisions:
        view[PENDING_DECISIONS] = decisions
    rulings = memory.get(RULINGS)  # V9
    if isinstance(rulings, Mapping) and pane in rulings:
        view[RULINGS] = {pane: copy.deepcopy(rulings[pane])}
    return view


SHARED_GOALS: Final = frozenset({"new-offer"})
"""V7: the goals whose status another pane may see: keys code owns, never a model's."""


def _goals_for(goals: object, pane: str) -> dict[str, Any]:
    """V7: whole entries for the goals this pane ruled; for others, the status only, and only
    for SHARED_GOALS."""
    if not isinstance(goals, Mapping):
        return {}
    shown: dict[str, Any] = {}
    for key, entry in goals.items():
        if not isinstance(entry, Mapping):
            continue
        if entry.get("by") == pane:
            shown[key] = copy.deepcopy(entry)
        elif key in SHARED_GOALS:
            status = entry.get("status")
            # Only a known status crosses: a free-text "status" could carry anything. And only
            # under a key code owns: a model-chosen key ("never-below-4000") could too.
            if isinstance(status, str) and status in _GOAL_STATUSES:
                shown[key] = {"status": status}
    return shown


def _decisions_for(decisions: object, side: str) -> dict[str, Any]:
    """V2, V8: the decisions put to ``side``'s principal."""
    if not isinstance(decisions, Mapping):
        return {}
    return {
        key: copy.deepcopy(entry)
        for key, entry in decisions.items()
        if isinstance(entry, Mapping) and entry.get("side") == side
    }
