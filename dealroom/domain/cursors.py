"""Opaque cursors. Clients must treat them as strings; a bad one is BAD_USER_INPUT."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime
from uuid import UUID

from dealroom.domain.errors import bad_input

_SEQ_RE = re.compile(r"[0-9]{1,19}")


def _encode(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(cursor: str, prefix: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.b64decode(padded.encode(), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise bad_input("That cursor is not one this server issued.", "cursor") from exc
    if not text.startswith(prefix):
        raise bad_input("That cursor is not one this server issued.", "cursor")
    return text[len(prefix) :]


def event_cursor(seq: int) -> str:
    """A room event's position: the room sequence number assigned under the room lock."""
    return _encode(f"e:{seq}")


def parse_event_cursor(cursor: str) -> int:
    raw = _decode(cursor, "e:")
    if not _SEQ_RE.fullmatch(raw):
        raise bad_input("That cursor is not one this server issued.", "cursor")
    return int(raw)


def room_cursor(last_activity_at: datetime, room_id: UUID) -> str:
    return _encode(f"r:{last_activity_at.isoformat()}|{room_id}")


def parse_room_cursor(cursor: str) -> tuple[datetime, UUID]:
    raw = _decode(cursor, "r:")
    try:
        stamp, room_id = raw.split("|", 1)
        return datetime.fromisoformat(stamp), UUID(room_id)
    except ValueError as exc:
        raise bad_input("That cursor is not one this server issued.", "cursor") from exc


def memory_change_cursor(created_at: datetime, change_id: UUID) -> str:
    """A durable-memory history row's position (newest first)."""
    return _encode(f"mc:{created_at.isoformat()}|{change_id}")


def parse_memory_change_cursor(cursor: str) -> tuple[datetime, UUID]:
    raw = _decode(cursor, "mc:")
    try:
        stamp, change_id = raw.split("|", 1)
        return datetime.fromisoformat(stamp), UUID(change_id)
    except ValueError as exc:
        raise bad_input("That cursor is not one this server issued.", "cursor") from exc
