"""An operator's correction of a room's memory, and room memory's change history.

An operator is one more memory writer: the same targeted change, the same rules as the Guard
(who, like an operator, has read the host's private branch), and each changed leaf recorded as
durable memory's are (``durable.diff``).

Numbered rules, cited by the code and tests that depend on them:

- ME1 An operator's edit is one targeted change through ``memory.apply_changes``: never a
      reserved part (M2), strictly under a participant's branch or ``deal`` (M4), within the
      value and document limits (M5, M9), limits and private terms only as data (M12), a
      publication or a lower floor only on the principal's word (M15, M16, which an operator
      does not have). A refused edit is a BAD_USER_INPUT naming the reason; nothing is written.
- ME2 An operator has read the host's private branch, so an edit a visitor-side pane reads is
      screened by the private-value firewall (M14) and states only what the visitor's side
      already shows (M17), exactly as a Guard repair.
- ME3 Every write to a room's memory by a writer (Distil, the Guard, an operator) records each
      changed leaf: path, old, new, and the run or the operator (durable D1's diff).
- ME4 A revert restores a change's old value only while the leaf still holds the change's new
      value; otherwise CONFLICT (revert the later change first), as durable D6.
- ME5 A revert is a write like any other: never of a reserved part (its writer is code), and a
      restored value a visitor-side pane reads passes the firewall against the private values
      the document holds now.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from dealroom.domain import durable, firewall, provenance
from dealroom.domain import memory as memdoc
from dealroom.domain.errors import DomainError, ErrorCode, bad_input


def operator_prefixes(document: Mapping[str, Any], seats: Sequence[str]) -> tuple[str, ...]:
    """ME1: where an operator may write: every participant's branch and the shared deal."""
    keys = {s for s in seats if memdoc.is_participant_key(s)}
    keys |= {k for k in document if memdoc.is_participant_key(str(k))}
    return (*sorted(keys), memdoc.DEAL)


def edit(
    document: Mapping[str, Any],
    change: memdoc.Change,
    *,
    seats: Sequence[str],
    visible: Sequence[provenance.Said],
    band_percent: Decimal | None = None,
) -> dict[str, Any]:
    """ME1, ME2: the document after the operator's change, or a coded refusal."""
    applied = memdoc.apply_changes(
        document,
        [change],
        allowed=operator_prefixes(document, seats),
        sees_private=True,  # ME2 (M14)
        visible=visible,  # ME2 (M17)
        band_percent=band_percent,
    )
    if applied.rejected:
        raise bad_input(f"Memory edit refused: {applied.rejected[0].reason}.", "path")
    if not applied.applied:
        raise bad_input("Memory edit changed nothing.", "path")
    return applied.document


def revert(
    document: Mapping[str, Any],
    path: str,
    old: Any,
    new: Any,
    *,
    band_percent: Decimal | None = None,
) -> dict[str, Any]:
    """ME4, ME5: the document with the leaf at ``path`` back to ``old``."""
    segments = memdoc.parse_path(path)
    if segments is None or segments[0] in memdoc.RESERVED:
        raise bad_input(f"{path} is written by code only; it cannot be reverted.", "changeId")
    if durable.revert_conflicts(document, path, new):  # ME4
        raise DomainError(
            ErrorCode.CONFLICT, "This leaf changed again since; revert the later change first."
        )
    visitor_reads = old is not None and segments[0] != memdoc.HOST
    if visitor_reads and firewall.check(document, path, old, band_percent=band_percent):  # ME5
        raise bad_input(f"Revert refused: {memdoc.VISIBLE_REFUSAL}.", "changeId")
    restored: dict[str, Any] = copy.deepcopy(dict(document))
    durable.set_leaf(restored, path, old)
    if old is not None and memdoc.document_size(restored) > memdoc.MAX_DOCUMENT_BYTES:
        raise bad_input(f"Memory would exceed {memdoc.MAX_DOCUMENT_BYTES} bytes.", "changeId")
    return restored


def changed_leaves(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[durable.LeafChange]:
    """ME3: the leaves a write changed."""
    return durable.diff(before, after)
