"""What an operator reads of a room to act on it: each pane's transcript (paged), the room's
memory, the dispatch record, the offers with their payments, the links pasted in its panes;
and the record of every such read (who, when, what), kept in ``operator_reads``: operators are
trusted, not invisible.

Operators only (``require_operator``); a key needs ops:read as well (scopes K1)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dealroom.domain import memory_records
from dealroom.domain.cursors import parse_room_cursor
from dealroom.domain.errors import bad_input, not_found
from dealroom.domain.seats import Seat, on_host_side
from dealroom.persistence.db import Db
from dealroom.persistence.links import LinkRepository
from dealroom.persistence.messages import MessageRepository
from dealroom.persistence.models import (
    Dispatch,
    Message,
    Offer,
    OperatorRead,
    Payment,
    PerceivedLink,
)
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.operator_tools import OperatorToolsRepository
from dealroom.persistence.paging import After
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.seats import SeatRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.ops.reads import Page, require_operator


def _after(cursor: str | None) -> After | None:
    return None if cursor is None else parse_room_cursor(cursor)


async def record_read(
    db: Db, clock: Clock, identity: Identity, room_id: uuid.UUID, what: Sequence[str]
) -> None:
    """Write down that this operator read these parts of the room, now. The caller commits it
    with the read itself."""
    operator = require_operator(identity)
    await OperatorToolsRepository(db).record_read(operator.id, room_id, what, clock.now())


async def reads(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> Page[OperatorRead]:
    require_operator(identity)
    found = await OperatorToolsRepository(db).reads_page(
        room_id, limit=first + 1, after_row=_after(after)
    )
    return Page(rows=found[:first], has_next=len(found) > first)


@dataclass(frozen=True, slots=True)
class TranscriptPage:
    rows: list[Message]
    """Newest first."""
    has_next: bool


async def pane_keys(db: Db, identity: Identity, room_id: uuid.UUID) -> list[str]:
    """Every pane's participant key, the host side first (a removed participant's included:
    its pane stays)."""
    require_operator(identity)
    keys = [p.key for p in await RoomRepository(db).participants(room_id)]
    return sorted(keys, key=lambda k: (not on_host_side(k), k != Seat.HOST.value, k))


async def transcript(
    db: Db, identity: Identity, room_id: uuid.UUID, key: str, *, first: int, before: int | None
) -> TranscriptPage:
    """One pane's lines (by its participant key), newest first, before the pane sequence
    number ``before``."""
    require_operator(identity)
    pane = await SeatRepository(db).by_key(room_id, key)
    if pane is None:
        raise not_found("Pane")
    if before is not None and before < 1:
        raise bad_input("before must be a positive sequence number.", "before")
    found = await MessageRepository(db).page(
        pane.id, after=None, before=before, limit=first + 1, newest_first=True
    )
    return TranscriptPage(rows=found[:first], has_next=len(found) > first)


async def memory(db: Db, identity: Identity, room_id: uuid.UUID) -> tuple[dict[str, Any], int]:
    """The whole room memory (every branch; operators are never an agent) and its version."""
    require_operator(identity)
    room = await RoomRepository(db).by_id(room_id)
    if room is None:
        raise not_found("Room")
    return dict(room.memory or {}), room.memory_version


async def dispatches(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> tuple[Page[Dispatch], dict[uuid.UUID, str]]:
    """The dispatch record, newest first, and the room's pane seats by participant id."""
    require_operator(identity)
    found = await OperatorToolsRepository(db).dispatches_page(
        room_id, limit=first + 1, after_row=_after(after)
    )
    seats = {p.id: p.key for p, _ in await SeatRepository(db).people(room_id)}
    return Page(rows=found[:first], has_next=len(found) > first), seats


async def offers(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int
) -> list[tuple[Offer, list[Payment]]]:
    """The room's offers, newest first, each with its payments."""
    require_operator(identity)
    repository = OfferRepository(db)
    found = await repository.page(room_id, before=None, limit=first)
    return [(offer, await repository.payments(offer.id)) for offer in found]


async def links(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int
) -> list[tuple[PerceivedLink, str]]:
    """The links pasted in the room's panes, newest read first, each with its pane's seat."""
    require_operator(identity)
    found = await LinkRepository(db).of_room(room_id, limit=first)
    seats = {p.id: p.key for p, _ in await SeatRepository(db).people(room_id)}
    return [(row, seats.get(row.participant_id, "?")) for row in found]


async def last_plan(db: Db, identity: Identity, room_id: uuid.UUID, pane: str) -> str | None:
    """The plan the persona of the pane (by participant key) wrote on its last turn, or None."""
    require_operator(identity)
    room = await RoomRepository(db).by_id(room_id)
    if room is None:
        raise not_found("Room")
    return memory_records.own_plan(room.memory or {}, pane) or None
