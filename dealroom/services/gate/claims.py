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
from sqlalchemy import select, update

from dealroom.agents.models.base import AgentName
from dealroom.domain.errors import DomainError, ErrorCode, not_found
from dealroom.domain.seats import RoomKind, Seat, deal_room_title
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    AgentRun,
    Offer,
    Participant,
    PendingEffect,
    Room,
)
from dealroom.persistence.repositories import RoomRepository
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
    seats = list(
        await db.scalars(
            select(Participant)
            .join(Room, Room.id == Participant.room_id)
            .where(
                Participant.guest_key_hash == guest_hash,
                Participant.key == Seat.VISITOR.value,
                Room.kind == RoomKind.DEAL.value,
            )
            .order_by(Participant.room_id)  # one lock order for every claim: no deadlock
        )
    )
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
    result = await db.execute(
        update(Participant)
        .where(Participant.id == seat.id, Participant.account_id.is_(None))
        .values(account_id=account.id)
    )
    if int(getattr(result, "rowcount", 0) or 0) != 1:
        bound = await db.scalar(select(Participant.account_id).where(Participant.id == seat.id))
        if bound != account.id and strict:
            raise DomainError(ErrorCode.CONFLICT, "That room is already bound to another account.")
        return False  # claimed before (this account: nothing more to do) or by another
    host = await db.get(Account, room.host_account_id)
    room.title = deal_room_title(host.display_name if host else "", account.display_name)
    await db.execute(
        update(Offer)
        .where(Offer.room_id == room.id, Offer.buyer_account_id.is_(None))
        .values(buyer_account_id=account.id, updated_at=now)
    )
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
    found = await db.scalar(
        select(PendingEffect.id)
        .where(PendingEffect.room_id == room_id, PendingEffect.status.in_(LEFT))
        .limit(1)
    )
    return found is not None
