"""Claiming a guest's rooms, and replaying what the login gate held (seed 002 "Incognito &
Mid-Session Claiming": ``claimGuestDealRoom`` and ``flushPendingEffects``).

A claim binds the signed-in account to the room's existing visitor participant (no new
participant, no new room), sets the written offer's buyer, retitles the room "<Brand> ×
<Host>", takes the gate down (``LoginRequiredChanged``) and queues a ``replay`` run. It seeds
nothing of the visitor's own memory into the room (seed 002 layer 1). Every room of the guest
key is claimed at once.

The replay performs held rows in ``seq`` order through the choke point's ``perform``, one row
per transaction under the room lock (held → performed with its effect, so a row is performed
exactly once however often a replay is re-run or raced). A row whose effect queued runs (a
delivery, Offer-Gen) is waited for before the next row goes out, so the recipients see them in
the original order. A replay cut off by a dead worker is re-queued when its lease expires; the
workers' sweep also re-queues the replay of any claimed room with rows left and no replay run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta

import structlog
from sqlalchemy import and_, exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

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
from dealroom.persistence.runs import DispatchRepository, RunRepository
from dealroom.services import effects, held_sends
from dealroom.services.clock import Clock
from dealroom.services.guests import login_required_changed
from dealroom.services.identity import digest
from dealroom.services.publish import Publish
from dealroom.services.run_handler import RunnerDeps, StaleRun
from dealroom.services.run_queue import RunStatus, new_run
from dealroom.services.turn_context import RunSnapshot

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


# --- replay ----------------------------------------------------------------------------------


class ReplayTurn:
    """Performs a claimed room's held effects in ``seq`` order (a ``replay`` run)."""

    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps

    async def __call__(self, run: RunSnapshot) -> None:
        while await self._step(run):
            pass

    async def _step(self, run: RunSnapshot) -> bool:
        """One held row, in its own transaction. True when the next row may go now."""
        deps = self.deps
        async with deps.unit() as uow:
            db = uow.db
            row = await RunRepository(db).by_id(run.id, lock=True)
            if row is None or row.status != RunStatus.RUNNING or row.attempts != run.attempts:
                raise StaleRun(str(run.id))
            now = deps.clock.now()
            await RoomRepository(db).lock(run.room_id)
            visitor = await db.scalar(
                select(Participant.account_id).where(Participant.id == run.participant_id)
            )
            head = await db.scalar(
                select(PendingEffect)
                .where(PendingEffect.room_id == run.room_id, PendingEffect.status.in_(LEFT))
                .order_by(PendingEffect.seq)
                .limit(1)
            )
            if visitor is None or head is None:
                row.status, row.finished_at = RunStatus.DONE.value, now  # nothing (left) to do
                return False
            if head.status == effects.PERFORMED:
                if await _still_working(db, head.spawned_run_ids or []):
                    # The next row waits for this one's runs: finish, and look again shortly
                    # in a fresh run (a stale worker's claim can never pass for it).
                    row.status, row.finished_at = RunStatus.DONE.value, now
                    await db.add(
                        replay_run(
                            run.room_id,
                            run.participant_id,
                            deps.clock,
                            deps.settings.replay_poll_seconds,
                        )
                    )
                    return False
                head.status = effects.REPLAYED
                return True
            outbound = effects.Outbound(
                run.room_id, head.source_run_id, now, deps.settings, replay=True
            )
            # A held send was composed before the claim: the firewall screens it again
            # against the room as it is now (issue 10), and the principal decides any match.
            room = await RoomRepository(db).by_id(run.room_id)
            seats = await RoomRepository(db).participants(run.room_id)
            outbound.screen = held_sends.screener(
                room.memory if room else {},
                {p.id: p.key for p in seats},
                await DispatchRepository(db).held(run.room_id),  # F6, as for live sends
            )
            await effects.perform(db, outbound, effects.effect_of(head))
            host = next((p for p in seats if p.key == Seat.HOST.value), None)
            if outbound.screened and host is not None:
                held = held_sends.held_of(
                    outbound, {d.to_participant_id: "them" for d, _ in outbound.screened}
                )
                uow.publish(*await held_sends.notify(db, run.room_id, host, run.id, held, now))
            head.status = effects.PERFORMED if outbound.runs else effects.REPLAYED
            head.spawned_run_ids = [str(r.id) for r in outbound.runs]
            head.performed_at = now
            await db.add(*outbound.runs)
            uow.publish(*outbound.published)
            if outbound.runs:
                uow.announce()
            log.info("effect_replayed", room_id=str(run.room_id), seq=head.seq, kind=head.kind)
        return True


async def _still_working(db: Db, run_ids: list[str]) -> bool:
    if not run_ids:
        return False
    found = await db.scalar(
        select(AgentRun.id)
        .where(AgentRun.id.in_([uuid.UUID(i) for i in run_ids]), AgentRun.status.in_(OUTSTANDING))
        .limit(1)
    )
    return found is not None


async def resume_replays(sessionmaker: async_sessionmaker[AsyncSession], clock: Clock) -> int:
    """The workers' sweep: a claimed room with rows left and no replay run queued or running
    gets one (its replay failed for good, or the claim's run was lost). A replay run cut off
    by a dead worker is re-queued by its lease, like any run."""
    db = Db(sessionmaker)
    try:
        visitor = Participant
        active = exists().where(
            AgentRun.room_id == PendingEffect.room_id,
            AgentRun.agent == AgentName.REPLAY.value,
            AgentRun.status.in_(OUTSTANDING),
        )
        rows = (
            await db.execute(
                select(PendingEffect.room_id, visitor.id)
                .join(
                    visitor,
                    and_(
                        visitor.room_id == PendingEffect.room_id,
                        visitor.key == Seat.VISITOR.value,
                    ),
                )
                .where(
                    PendingEffect.status.in_(LEFT),
                    visitor.account_id.is_not(None),
                    ~active,
                )
                .distinct()
            )
        ).all()
        for room_id, visitor_id in (tuple(r) for r in rows):
            await db.add(replay_run(room_id, visitor_id, clock))
        await db.commit()
        return len(rows)
    finally:
        await db.close()
