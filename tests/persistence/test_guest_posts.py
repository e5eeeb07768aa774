"""The guest cap's count: a key's own posts, and its address's other keys' posts within the window.
It stops at the cap: the cap only compares the count with it, and an unbounded count would read
every post that an address's guest keys made in a day, for every guest post. It reads only the
key's own and its address's rows (an ``OR`` of the two would read every guest message in the
database, for every guest post), and a room list counts each room's guest by that guest's own
address. A post reads the count with its room, in the room's statement."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.seats import AuthorKind, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.guest_posts import IP_WINDOW, guest_capped_rooms
from dealroom.persistence.models import GuestKeyMint, Message, Participant
from dealroom.persistence.repositories import GuestCount, RoomRepository
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process


async def test_the_count_stops_at_the_cap_and_is_exact_below_it(
    engine: AsyncEngine, db: Db, clock: ManualClock
) -> None:
    visitor = await _guest(engine, clock, "guestcount")
    await _posts(db, clock, visitor, 5)
    counted = {cap: await _with_room(db, clock, visitor, cap) for cap in (3, 5, 30)}
    assert counted == {3: 3, 5: 5, 30: 5}


async def test_an_address_shares_its_allowance_within_the_window_and_counts_once(
    engine: AsyncEngine, db: Db, clock: ManualClock
) -> None:
    """A key's own posts count for ever; a sibling key's (same address) only within the
    window; a key's own posts are not counted again as its address's."""
    first = await _guest(engine, clock, "sharedone")
    second = await _guest(engine, clock, "sharedtwo")
    elsewhere = await _guest(engine, clock, "elsewhere")
    await _mint(db, clock, first, "office")
    await _mint(db, clock, second, "office")
    await _mint(db, clock, elsewhere, "home")
    await _posts(db, clock, first, 2, ago=IP_WINDOW + timedelta(hours=1))  # before the window
    await _posts(db, clock, first, 3, start=10)
    await _posts(db, clock, second, 1)
    await _posts(db, clock, elsewhere, 7)
    counted = {
        name: await _with_room(db, clock, visitor, 100)
        for name, visitor in (("first", first), ("second", second), ("elsewhere", elsewhere))
    }
    # first: its own 5; second: its own 1 and first's 3 in the window; elsewhere: its own 7
    assert counted == {"first": 5 + 1, "second": 1 + 3, "elsewhere": 7}


async def test_a_room_list_counts_each_guest_by_its_own_address(
    engine: AsyncEngine, db: Db, clock: ManualClock
) -> None:
    """The rooms page's cap flag (``guest_capped_rooms``): a guest that used up the cap is
    capped, another address's guest with one post is not, and a fresh key from the capped
    guest's address is (its address's allowance is spent)."""
    spent = await _guest(engine, clock, "spenthost")
    other = await _guest(engine, clock, "otherhost")
    fresh = await _guest(engine, clock, "freshhost")
    await _mint(db, clock, spent, "one address")
    await _mint(db, clock, other, "another address")
    await _mint(db, clock, fresh, "one address")
    await _posts(db, clock, spent, 3)
    await _posts(db, clock, other, 1)
    capped = await guest_capped_rooms(
        db, [spent.room_id, other.room_id, fresh.room_id], 3, clock.now()
    )
    assert capped == {spent.room_id, fresh.room_id}


async def test_a_guest_post_reads_only_its_own_and_its_address_rows(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """PostgreSQL's own count of the message rows one guest post's count read (with its room,
    as a post reads it), beside 12,000 other guests' messages: the key's few, not the table
    (``pg_stat_xact_user_tables``)."""
    counted = await _guest(pg_engine, clock, "counted")
    crowd = await _guest(pg_engine, clock, "crowd")
    db = Db(create_sessionmaker(pg_engine))
    try:
        await _mint(db, clock, counted, "its own address")
        await _posts(db, clock, counted, 2)
        others = [
            Participant(
                id=uuid.uuid4(),
                room_id=crowd.room_id,
                key=f"guest-{n}",
                guest_key_hash=f"other-key-{n}",
                last_merged_memory_version=0,
                created_at=clock.now(),
            )
            for n in range(3000)
        ]
        await db.insert(others)
        await db.insert(
            [
                _line(clock, other, 1000 + 4 * i + n)
                for i, other in enumerate(others)
                for n in range(4)
            ]
        )
        await db.execute(text("ANALYZE messages, participants, guest_key_mints"))
        await db.commit()

        async def read() -> int:
            row = (
                await db.execute(
                    text(
                        "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)"
                        " FROM pg_stat_xact_user_tables WHERE relname = 'messages'"
                    )
                )
            ).one()
            return int(row[0])

        before = await read()
        found = await RoomRepository(db).for_writer(
            counted.room_id, count=GuestCount(30, clock.now() - IP_WINDOW)
        )
        after = await read()
    finally:
        await db.close()
    assert found is not None
    assert found.guest_posts == {counted.id: 2}
    assert after - before <= 10, f"one guest's count read {after - before} message rows"


async def _guest(engine: AsyncEngine, clock: ManualClock, handle: str) -> Participant:
    """The visitor seat of a guest's new room with host ``handle``."""
    _, opened = await guest_room_in_process(engine, clock, handle)
    db = Db(create_sessionmaker(engine))
    try:
        visitor = await db.scalar(
            select(Participant).where(
                Participant.room_id == opened.room.id, Participant.key == Seat.VISITOR.value
            )
        )
    finally:
        await db.close()
    assert visitor is not None
    return visitor


async def _with_room(db: Db, clock: ManualClock, visitor: Participant, cap: int) -> int:
    """The guest's charged posts as a post reads them, with its room
    (``RoomRepository.for_writer``): a column of the guest seat's row."""
    found = await RoomRepository(db).for_writer(
        visitor.room_id, count=GuestCount(cap, clock.now() - IP_WINDOW)
    )
    await db.rollback()
    assert found is not None
    assert set(found.guest_posts) == {visitor.id}  # the host's seat is bound: not counted
    return found.guest_posts[visitor.id]


def _key(visitor: Participant) -> str:
    assert visitor.guest_key_hash is not None
    return visitor.guest_key_hash


async def _mint(db: Db, clock: ManualClock, visitor: Participant, address: str) -> None:
    await db.add(
        GuestKeyMint(ip_hash=address, guest_key_hash=_key(visitor), created_at=clock.now())
    )
    await db.commit()


async def _posts(
    db: Db,
    clock: ManualClock,
    visitor: Participant,
    count: int,
    *,
    start: int = 0,
    ago: timedelta = timedelta(0),
) -> None:
    """``count`` of the guest's own lines in its pane, ``ago`` before now."""
    await db.insert([_line(clock, visitor, 100 + start + n, ago=ago) for n in range(count)])
    await db.commit()


def _line(
    clock: ManualClock, visitor: Participant, seq: int, *, ago: timedelta = timedelta(0)
) -> Message:
    """A line of the guest's own at ``seq`` in its room."""
    return Message(
        id=uuid.uuid4(),
        room_id=visitor.room_id,
        participant_id=visitor.id,
        seq=seq,
        author_kind=AuthorKind.PARTICIPANT.value,
        body=f"line {seq}",
        session_no=1,
        client_message_id=f"count-{seq}",
        created_at=clock.now() - ago,
    )
