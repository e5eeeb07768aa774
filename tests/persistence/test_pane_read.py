"""A run's read of its room in one statement (``persistence/pane_read``): the pane's current
session, the room's recent dispatches and the host's services come back folded into JSON, and must
read back exactly as the separate statements they replace give them, value for value and type for
type (a UUID as a UUID, a datetime in UTC, a payload as a mapping), on both backends."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence import pane_read
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.models import Dispatch, Message, Participant, Service
from dealroom.persistence.runs import TranscriptRepository
from dealroom.services.turns.context import people
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process


class Seat(NamedTuple):
    id: uuid.UUID
    room_id: uuid.UUID
    key: str
    account_id: uuid.UUID | None


async def _room(engine: AsyncEngine, db: Db, clock: ManualClock) -> tuple[Seat, Seat]:
    """A host with three services and a guest's pane holding two sessions of messages (one a
    relayed delivery), a message in the host's pane, and ten dispatches, two sent at one
    instant, some delivered."""
    _, opened = await guest_room_in_process(engine, clock, "paneread")
    found = await db.scalars(select(Participant).where(Participant.room_id == opened.room.id))
    host = next(p for p in found if p.key == "host")
    guest = next(p for p in found if p.key != "host")
    assert host.account_id is not None
    await db.add(
        *(
            Service(account_id=host.account_id, name=name)
            for name in ("Sponsored post", "keynote", "B-roll")
        )
    )
    room_id = opened.room.id
    dispatches: list[Dispatch] = []
    at = clock.now()
    for index in range(10):
        delivered = index % 3 == 0
        dispatches.append(
            Dispatch(
                room_id=room_id,
                from_participant_id=guest.id if index % 2 else host.id,
                to_participant_id=host.id if index % 2 else guest.id,
                source_run_id=uuid.uuid4(),
                position=index % 2,
                substance=f"send {index} — “quoted”",
                payload={"ruling": {"goal": f"g{index}", "amount": [index, 1.5]}, "n": None},
                status="delivered" if delivered else "held",
                chain_depth=1 + index % 2,
                delivered_message_id=uuid.uuid4() if delivered else None,
                created_at=at,
                delivered_at=at + timedelta(microseconds=123_456) if delivered else None,
            )
        )
        if index % 2:
            at += timedelta(seconds=1, microseconds=7)
    await db.add(*dispatches)
    seq = 100
    for session_no, bodies in ((1, ["old one", "old two"]), (2, ["hi", "relay", "last"])):
        for body in bodies:
            seq += 1
            await db.add(
                Message(
                    room_id=room_id,
                    participant_id=guest.id,
                    seq=seq,
                    author_kind="visitor" if body != "relay" else "agent",
                    body=body,
                    session_no=session_no,
                    client_message_id=f"c-{seq}" if body != "last" else None,
                    relayed_dispatch_id=dispatches[3].id if body == "relay" else None,
                )
            )
    await db.add(
        Message(room_id=room_id, participant_id=host.id, seq=seq + 1, author_kind="host", body="x")
    )
    seats = [Seat(p.id, p.room_id, p.key, p.account_id) for p in (host, guest)]
    await db.commit()
    return seats[0], seats[1]


def _typed(values: Any) -> list[tuple[type, Any]]:
    """Each value with its type (asyncpg's UUID is a ``uuid.UUID``)."""
    return [(uuid.UUID if isinstance(v, uuid.UUID) else type(v), v) for v in values]


async def _separately(
    db: Db, pane: Seat, *, dispatch_cap: int
) -> tuple[list[Any], list[Any], list[str]]:
    session = await TranscriptRepository(db).current_session(pane.id)
    recent = await DispatchRepository(db).recent(pane.room_id, dispatch_cap)
    participants, _ = await people(db, pane.room_id)
    host = next(p for p in participants if p.key == "host")
    assert host.account_id is not None
    names = await db.scalars(
        select(Service.name).where(Service.account_id == host.account_id).order_by(Service.name)
    )
    return session, recent, list(names)


async def test_the_folded_read_gives_what_the_separate_statements_gave(
    engine: AsyncEngine, db: Db, clock: ManualClock
) -> None:
    host, guest = await _room(engine, db, clock)
    for pane, dispatch_cap in ((guest, 8), (guest, 3), (host, 20)):
        session, recent, services = await _separately(db, pane, dispatch_cap=dispatch_cap)
        found = await pane_read.read(
            db,
            pane.room_id,
            pane.id,
            dispatch_cap=dispatch_cap,
            services=True,
        )
        assert [_typed(values) for values in found.session] == [_typed(m) for m in session]
        assert [_typed(values) for values in found.dispatches] == [_typed(d) for d in recent]
        assert found.services == services
        assert [p.key for p in found.participants] == sorted([host.key, guest.key])
        assert set(found.accounts) == {host.account_id}
        await db.rollback()
    assert [m[4] for m in found.session] == ["x"]  # the host's pane: its own message only
    assert len(recent) == 10  # the comparison had rows to compare


async def test_the_read_leaves_out_the_services_when_not_asked(
    engine: AsyncEngine, db: Db, clock: ManualClock
) -> None:
    _, guest = await _room(engine, db, clock)
    found = await pane_read.read(db, guest.room_id, guest.id, dispatch_cap=8, services=False)
    assert found.services is None
    assert [values[4] for values in found.session] == ["hi", "relay", "last"]


async def test_an_empty_pane_reads_as_empty_lists(
    engine: AsyncEngine, db: Db, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "emptypane")
    guest = await db.scalar(
        select(Participant).where(Participant.room_id == opened.room.id, Participant.key != "host")
    )
    assert guest is not None
    found = await pane_read.read(db, guest.room_id, guest.id, dispatch_cap=8, services=True)
    assert (found.session, found.dispatches, found.services) == ([], [], [])
