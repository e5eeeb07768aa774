"""Claiming a guest's rooms, and queueing the replay of what the login gate held (seed 002
"Incognito & Mid-Session Claiming": ``claimGuestDealRoom`` and ``flushPendingEffects``).

A claim binds the signed-in account to the room's existing visitor participant (no new
participant, no new room), sets the written offer's buyer, retitles the room "<Brand> ×
<Host>", takes the gate down (``LoginRequiredChanged``) and queues a ``replay`` run. It seeds
nothing of the visitor's own memory into the room (seed 002 layer 1). Every room of the guest
key is claimed at once.

The claim queues the replay (``jobs/replay.py``), which performs the held rows in order.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta

import structlog

from dealroom.agents.models.base import AgentName
from dealroom.domain.errors import DomainError, ErrorCode, not_found
from dealroom.domain.seats import deal_room_title
from dealroom.persistence.db import Db
from dealroom.persistence.effects import PendingEffectRepository
from dealroom.persistence.models import (
    Account,
    AgentRun,
    Participant,
    Room,
)
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.seats import SeatRepository
from dealroom.services.accounts.identity import digest
from dealroom.services.clock import Clock
from dealroom.services.gate import effects
from dealroom.services.live.publish import Publish
from dealroom.services.rooms.guests import login_required_changed
from dealroom.services.turns.queue import new_run

log = structlog.get_logger(__name__)

OUTSTANDING = ("queued", "running")
LEFT = (effects.HELD, effects.PERFORMED)


@dataclass
class Claimed:
    rooms: list[uuid.UUID] = field(default_factory=list)
    published: list[Publish] = field(default_factory=list)
    replays: int = 0


async def claim_guest_rooms(
    db: Db,
    clock: Clock,
    account: Account,
    guest_key: str,
    *,
    room_id: uuid.UUID | None = None,
) -> Claimed:
    """Claim the guest key's rooms for ``account``. With ``room_id`` (``claimRoom``): that room
    must be the key's (NOT_FOUND otherwise) and free or already this account's (CONFLICT when
    bound to another account). Without it (sign-up, sign-in), rooms that cannot be claimed are
    left as they are. The caller commits, then publishes and announces."""
    guest_hash = digest(guest_key)
    seats = await SeatRepository(db).guest_visits(guest_hash)  # one lock order: no deadlock
    if room_id is not None:
        target = next((p for p in seats if p.room_id == room_id), None)
        if target is None:
            raise not_found("Room")
        if target.account_id is not None and target.account_id != account.id:
            raise DomainError(ErrorCode.CONFLICT, "That room is already bound to another account.")
    claimed = Claimed()
    for seat in seats:
        if await _claim_one(db, clock, account, seat, claimed, strict=seat.room_id == room_id):
            claimed.rooms.append(seat.room_id)
    return claimed


async def _claim_one(
    db: Db, clock: Clock, account: Account, seat: Participant, claimed: Claimed, *, strict: bool
) -> bool:
    now = clock.now()
    await RoomRepository(db).lock(seat.room_id)
    room = await db.get(Room, seat.room_id)
    assert room is not None
    if room.host_account_id == account.id:
        if strict:
            raise DomainError(ErrorCode.CONFLICT, "You cannot be the visitor in your own room.")
        return False
    # The binding itself is conditional, so two racing claims bind once.
    seats = SeatRepository(db)
    if not await seats.bind(seat.id, account.id):
        bound = await seats.account_of(seat.id)
        if bound != account.id and strict:
            raise DomainError(ErrorCode.CONFLICT, "That room is already bound to another account.")
        return False  # claimed before (this account: nothing more to do) or by another
    host = await db.get(Account, room.host_account_id)
    room.title = deal_room_title(host.display_name if host else "", account.display_name)
    await OfferRepository(db).set_missing_buyer(room.id, account.id, now)
    claimed.published.append(await login_required_changed(db, room.id, seat.id, value=False))
    if await _rows_left(db, room.id):
        await db.add(replay_run(room.id, seat.id, clock))
        claimed.replays += 1
    log.info("room_claimed", room_id=str(room.id), account_id=str(account.id))
    return True


def replay_run(
    room_id: uuid.UUID, visitor_id: uuid.UUID, clock: Clock, delay: float = 0.0
) -> AgentRun:
    now = clock.now()
    run = new_run(room_id=room_id, participant_id=visitor_id, agent=AgentName.REPLAY, now=now)
    run.not_before = now + timedelta(seconds=delay)
    return run


async def _rows_left(db: Db, room_id: uuid.UUID) -> bool:
    return await PendingEffectRepository(db).any_in(room_id, LEFT)
