"""The operators' queue of what needs a human: what an item is, how urgent, and the rules of
acting on one. Pure: no I/O.

- Q1  An item is a fact that needs a person: a frustration flag, an escalated wait on a
      principal, a Guard verdict that was not healthy, a run that failed past its retries, a
      disputed or stuck payment, a webhook endpoint failing for a day. It is named by its kind
      and its source row's id, so it exists exactly while its fact does.
- Q2  Levels: an escalation, a disputed payment, an unrepaired Guard verdict and a high flag
      are ``high``; a failed run, a stuck payment, a failing webhook, a medium flag and a flag
      raised by code (firewall, payment) are ``medium``; a repaired verdict and a low flag are
      ``low``. The queue lists high first, then oldest first.
- Q3  Acknowledging is idempotent: the first acknowledgement is kept.
- Q4  An item is assigned only to an operator (BAD_USER_INPUT otherwise); assigning again
      moves it.
- Q5  A resolved item leaves the queue and stays in its room's history; resolving it again is
      CONFLICT, and so is acknowledging or assigning it.
- Q6  Operators are told of a new high item (an OPERATOR_ALERT notification, once per item and
      operator, only to operators who did not turn the kind off).
"""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Final

from dealroom.domain.errors import DomainError, ErrorCode, bad_input


class ItemKind(StrEnum):
    FLAG = "flag"
    ESCALATION = "escalation"
    VERDICT = "verdict"
    FAILED_RUN = "failed_run"
    PAYMENT = "payment"
    WEBHOOK = "webhook"


class Level(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


RANK: Final[dict[Level, int]] = {Level.HIGH: 0, Level.MEDIUM: 1, Level.LOW: 2}
"""Q2: the queue's order, most urgent first."""

NOTE_LIMIT: Final = 2000


def flag_level(raw: str) -> Level:
    """Q2: a flag's level; a flag code raises (firewall, payment) is medium."""
    if raw == Level.HIGH.value:
        return Level.HIGH
    if raw == Level.LOW.value:
        return Level.LOW
    return Level.MEDIUM


def verdict_level(verdict: str) -> Level:
    """Q2: an unrepaired audit needs a person now; a repaired one only a look."""
    return Level.HIGH if verdict == "unrepaired" else Level.LOW


def payment_level(status: str) -> Level:
    """Q2: a dispute is high; a capture stuck pending is medium."""
    return Level.HIGH if status == "disputed" else Level.MEDIUM


def item_key(kind: ItemKind, source_id: uuid.UUID) -> str:
    """Q1: the item's public id."""
    return f"{kind.value}:{source_id}"


def parse_item_key(raw: str) -> tuple[ItemKind, uuid.UUID]:
    """BAD_USER_INPUT for anything that is not ``<kind>:<uuid>``."""
    kind, _, source = raw.strip().partition(":")
    try:
        return ItemKind(kind), uuid.UUID(source)
    except ValueError:
        raise bad_input("That is not a queue item id.", "itemId") from None


def queue_cursor(rank: int, raised_at: datetime, kind: str, source_id: uuid.UUID) -> str:
    """An opaque cursor naming a queue item's place (its rank, age, kind and id)."""
    text = f"q:{rank}|{raised_at.isoformat()}|{kind}|{source_id}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def parse_queue_cursor(cursor: str) -> tuple[int, datetime, str, uuid.UUID]:
    """BAD_USER_INPUT for a cursor this server did not issue."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.b64decode(padded.encode(), altchars=b"-_", validate=True).decode()
        if not text.startswith("q:"):
            raise ValueError(text)
        rank, stamp, kind, source = text[2:].split("|")
        parsed = datetime.fromisoformat(stamp)
        if parsed.tzinfo is None:
            raise ValueError(stamp)
        return int(rank), parsed, ItemKind(kind).value, uuid.UUID(source)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad_input("That cursor is not one this server issued.", "after") from None


@dataclass(frozen=True, slots=True)
class ItemState:
    """What operators did with an item (no state: nothing yet)."""

    acknowledged_at: datetime | None = None
    acknowledged_by: uuid.UUID | None = None
    assigned_to: uuid.UUID | None = None
    resolved_at: datetime | None = None
    resolved_by: uuid.UUID | None = None
    note: str | None = None


def _open(state: ItemState) -> None:
    if state.resolved_at is not None:
        raise DomainError(ErrorCode.CONFLICT, "That item is resolved already.")


def acknowledge(state: ItemState, operator: uuid.UUID, now: datetime) -> ItemState:
    """Q3, Q5."""
    _open(state)
    if state.acknowledged_at is not None:
        return state
    return replace(state, acknowledged_at=now, acknowledged_by=operator)


def assign(state: ItemState, assignee: uuid.UUID, *, is_operator: bool) -> ItemState:
    """Q4, Q5."""
    _open(state)
    if not is_operator:
        raise bad_input("Queue items are assigned to operators only.", "operator")
    return replace(state, assigned_to=assignee)


def resolve(state: ItemState, operator: uuid.UUID, note: str, now: datetime) -> ItemState:
    """Q5: with a note saying what was done."""
    _open(state)
    note = note.strip()
    if not note:
        raise bad_input("Say what was done.", "note")
    if len(note) > NOTE_LIMIT:
        raise bad_input(f"A note is at most {NOTE_LIMIT} characters.", "note")
    acknowledged = state.acknowledged_at or now
    return replace(
        state,
        acknowledged_at=acknowledged,
        acknowledged_by=state.acknowledged_by or operator,
        resolved_at=now,
        resolved_by=operator,
        note=note,
    )
