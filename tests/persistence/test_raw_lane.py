"""``Db.rows`` and PostgreSQL's raw lane: a built-once Core statement runs on the session's asyncpg
connection, inside the session's transaction (begun by the lane through SQLAlchemy's adapter when
it is the first statement), and reads back exactly what SQLAlchemy would. Every statement on SQLite
goes through SQLAlchemy."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from decimal import Decimal
from typing import Any, TypeVar

import pytest
from sqlalchemy import Table, bindparam, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from dealroom.agents.models.base import AgentName
from dealroom.domain.sessions import SessionRule
from dealroom.persistence import claim_statements as claims
from dealroom.persistence import pane_read, raw_lane
from dealroom.persistence import run_statements as q
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.leases import Granted, LeaseRepository, Locked
from dealroom.persistence.messages import Appended, AppendRules, MessageRepository, NewMessage
from dealroom.persistence.models import (
    AgentRun,
    Lease,
    Message,
    ModelCall,
    Participant,
    Room,
    UTCDateTime,
)
from dealroom.persistence.repositories import GuestCount, RoomRepository, WriterRead
from dealroom.persistence.throttles import ThrottleRepository
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process, queued_runs
from tests.support.statements import heard
from tests.support.turns import ledger_row

PRICE = Decimal("0.000125")
T = TypeVar("T")


def lanes(engine: AsyncEngine) -> AbstractContextManager[list[bool]]:
    """For each statement the engine's listeners hear: True when it came by the raw lane
    (no cursor), False through SQLAlchemy. BEGIN is left out."""
    return heard(engine, lambda _statement, by_raw_lane: by_raw_lane)


@contextmanager
def lane_off() -> Iterator[None]:
    raw_lane.enabled = False
    try:
        yield
    finally:
        raw_lane.enabled = True


async def _memory_version(engine: AsyncEngine, room_id: uuid.UUID) -> int:
    db = Db(create_sessionmaker(engine))
    try:
        return int(await db.scalar(select(Room.memory_version).where(Room.id == room_id)) or 0)
    finally:
        await db.close()


def _write(room_id: uuid.UUID, clock: ManualClock) -> dict[str, Any]:
    return {"room_id": room_id, "document": {"note": "kept?"}, "at": clock.now()}


async def test_inside_a_begun_transaction_a_statement_takes_the_lane_and_rolls_back_with_it(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    _, opened = await guest_room_in_process(pg_engine, clock, "lanetx")
    room_id = opened.room.id
    before = await _memory_version(pg_engine, room_id)
    with lanes(pg_engine) as seen:
        await pg_db.execute(select(Room.id).where(Room.id == room_id))  # BEGIN goes with it
        (row,) = await pg_db.rows(q.write_memory(), _write(room_id, clock))
    assert seen == [False, True]
    assert row.memory_version == row[0] == before + 1
    await pg_db.rollback()
    # It ran inside SQLAlchemy's transaction: the rollback took it back.
    assert await _memory_version(pg_engine, room_id) == before


async def test_the_first_statement_of_a_transaction_begins_it_and_takes_the_lane(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """Nothing has begun on the connection yet: the lane sends BEGIN through SQLAlchemy's
    adapter first (on the driver alone the statement would commit on its own, and the
    unit's rollback could not take it back). The rollback takes it back; so does a commit
    keep it; and the next transaction on the unit begins the same way."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanefirst")
    room_id = opened.room.id
    before = await _memory_version(pg_engine, room_id)
    with lanes(pg_engine) as seen:
        await pg_db.rows(q.write_memory(), _write(room_id, clock))
        await pg_db.rows(q.write_memory(), _write(room_id, clock))
    assert seen == [True, True]
    assert await _memory_version(pg_engine, room_id) == before  # not committed on its own
    await pg_db.rollback()
    assert await _memory_version(pg_engine, room_id) == before
    # The session's transaction has begun and holds a connection, but nothing was sent
    # on it yet: the lane begins it.
    await pg_db.session.connection()
    with lanes(pg_engine) as seen:
        (row,) = await pg_db.rows(q.write_memory(), _write(room_id, clock))
    assert seen == [True]
    assert row.memory_version == before + 1
    await pg_db.commit()
    assert await _memory_version(pg_engine, room_id) == before + 1
    # After the commit, a new transaction on the same unit, begun by the lane again.
    with lanes(pg_engine) as seen:
        await pg_db.rows(q.write_memory(), _write(room_id, clock))
        await pg_db.execute(select(Room.id).where(Room.id == room_id))
    assert seen == [True, False]
    await pg_db.rollback()
    assert await _memory_version(pg_engine, room_id) == before + 1


async def test_a_connection_lost_before_the_lane_begins_is_invalidated(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """BEGIN, sent by the lane on a connection the server has let go: raised as
    SQLAlchemy raises a lost connection, and the unit's rollback does not fail on it."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanebeginlost")
    connection = await pg_db.session.connection()  # held, nothing sent on it
    driver = (await connection.get_raw_connection()).driver_connection
    assert driver is not None
    pid = driver.get_server_pid()
    async with pg_engine.connect() as other:
        await other.execute(select(func.pg_terminate_backend(pid)))
    with lanes(pg_engine) as seen, pytest.raises(OperationalError) as raised:
        await pg_db.rows(q.write_memory(), _write(opened.room.id, clock))
    assert seen == []  # it failed at BEGIN
    assert raised.value.connection_invalidated
    await pg_db.rollback()
    assert await pg_db.scalar(select(Room.id).where(Room.id == opened.room.id)) is not None


async def test_switched_off_every_statement_goes_through_sqlalchemy(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    _, opened = await guest_room_in_process(pg_engine, clock, "laneoff")
    with lane_off(), lanes(pg_engine) as seen:
        await pg_db.execute(select(Room.id).where(Room.id == opened.room.id))
        await pg_db.rows(q.write_memory(), _write(opened.room.id, clock))
    assert seen == [False, False]


async def _both_ways(
    engine: AsyncEngine, act: Callable[[Db], Awaitable[T]]
) -> tuple[T, T, list[bool]]:
    """``act`` by the lane and then through SQLAlchemy, each after a first statement (the
    lane needs a transaction begun) in a transaction rolled back after; with what the
    engine's listeners heard (``lanes``)."""
    found: list[T] = []
    with lanes(engine) as seen:
        for off in (False, True):
            db = Db(create_sessionmaker(engine))
            try:
                with lane_off() if off else _nothing():
                    await db.execute(select(1))
                    found.append(await act(db))
                await db.rollback()
            finally:
                await db.close()
    return found[0], found[1], seen


@contextmanager
def _nothing() -> Iterator[None]:
    yield


async def test_the_lane_reads_back_what_sqlalchemy_reads(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """The claim's row is the widest the turn reads: ids, text, integers, timestamps, the
    room's memory as JSON, flags and labels of correlated subqueries."""
    _, (run_id,) = await queued_runs(pg_engine, clock, "laneparity", AgentName.PERSONA)
    room_id = await pg_db.scalar(select(AgentRun.room_id).where(AgentRun.id == run_id))
    assert room_id is not None
    await pg_db.rows(q.write_memory(), _write(room_id, clock))  # a non-empty memory
    await pg_db.commit()
    params = {"run_id": run_id, "now": clock.now(), "until": clock.now() + timedelta(seconds=15)}
    by_raw_lane, by_sqlalchemy, seen = await _both_ways(
        pg_engine, lambda db: db.rows(claims.claim_by_id(), params)
    )
    assert seen == [False, True, False, False]  # SELECT 1, claim; SELECT 1, claim
    assert len(by_raw_lane) == len(by_sqlalchemy) == 1
    raw_lane_row, sqlalchemy_row = by_raw_lane[0], by_sqlalchemy[0]
    assert raw_lane_row._fields == tuple(sqlalchemy_row._fields)
    assert tuple(raw_lane_row) == tuple(sqlalchemy_row)
    assert [type(v) for v in raw_lane_row] == [type(v) for v in sqlalchemy_row]
    assert raw_lane_row.id == run_id
    assert raw_lane_row.room_memory == {"note": "kept?"}
    assert raw_lane_row.lease_until.utcoffset() == timedelta(0)


async def test_a_constraint_broken_on_the_lane_is_sqlalchemys_integrity_error(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """Callers catch SQLAlchemy's exceptions (the memory lease's grant treats a gone room's
    foreign-key violation as "no lease"), so the lane raises those, not asyncpg's."""
    leases = Lease.__table__
    assert isinstance(leases, Table)
    statement = insert(leases).values(
        room_id=bindparam("room_id", type_=leases.c.room_id.type),
        token=1,
        holder="lane",
        expires_at=bindparam("until", type_=UTCDateTime),
    )
    with lanes(pg_engine) as seen:
        await pg_db.execute(text("SELECT 1"))
        with pytest.raises(IntegrityError):
            await pg_db.rows(statement, {"room_id": uuid.uuid4(), "until": clock.now()})
    assert seen == [False, True]
    await pg_db.rollback()


async def test_a_naive_time_is_refused_on_the_lane_as_through_sqlalchemy(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """The dialect's own bind processors run on the lane (``UTCDateTime`` refuses a naive
    time)."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanenaive")
    await pg_db.execute(select(1))
    naive = clock.now().replace(tzinfo=None)
    with pytest.raises(ValueError, match="naive"):
        await pg_db.rows(q.write_memory(), {"room_id": opened.room.id, "document": {}, "at": naive})


async def test_on_sqlite_rows_go_through_sqlalchemy(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "lanesqlite")
    db = Db(create_sessionmaker(engine))
    try:
        with lanes(engine) as seen:
            await db.execute(select(Room.id).where(Room.id == opened.room.id))
            (row,) = await db.rows(q.write_memory(), _write(opened.room.id, clock))
        assert row.memory_version >= 1
        assert seen == [False, engine.dialect.name == "postgresql"]
        # A statement without RETURNING has no rows, whichever way it goes.
        assert await db.rows(_insert_of_ledger(), _ledger_values(opened.room.id, clock)) == []
        await db.rollback()
    finally:
        await db.close()


@functools.cache
def _insert_of_ledger() -> Any:
    calls = ModelCall.__table__
    assert isinstance(calls, Table)
    return insert(calls).values(
        {key: bindparam(key, type_=calls.c[key].type) for key in _LEDGER_KEYS}
    )


_LEDGER_KEYS = ("id", "room_id", "agent", "engine", "model", "created_at")


def _ledger_values(room_id: uuid.UUID, clock: ManualClock) -> dict[str, Any]:
    values = dict(
        zip(_LEDGER_KEYS, (uuid.uuid4(), room_id, "persona", "offline", "m"), strict=False)
    )
    return {**values, "created_at": clock.now()}


async def test_a_ledger_row_with_its_id_takes_the_lane_and_one_without_goes_through_sqlalchemy(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """``Db.insert`` of one row: the lane cannot compute the ``id`` SQLAlchemy fills in Python,
    so a row without it goes through SQLAlchemy; with it, the lane stores the same row."""
    _, opened = await guest_room_in_process(pg_engine, clock, "laneledger")
    room_id = opened.room.id
    given, at = uuid.uuid4(), clock.now()
    with lanes(pg_engine) as seen:
        await pg_db.execute(text("SELECT 1"))
        await pg_db.insert([ledger_row(room_id, at, price_usd=PRICE, id=given)])
        await pg_db.insert([ledger_row(room_id, at, price_usd=PRICE)])
    assert seen == [False, True, False]
    await pg_db.commit()
    stored = (
        await pg_db.execute(
            select(ModelCall.id, ModelCall.price_usd, ModelCall.created_at, ModelCall.ok)
            .where(ModelCall.room_id == room_id)
            .order_by(ModelCall.id == given)
        )
    ).all()
    assert len(stored) == 2
    assert stored[1].id == given
    assert tuple(stored[0])[1:] == tuple(stored[1])[1:] == (PRICE, at, True)


async def test_a_statement_with_defaults_computed_in_python_goes_through_sqlalchemy(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """The ledger's ``INSERT`` of six columns leaves the rest to their Python defaults
    (``input_tokens`` 0, ``ok`` true): only SQLAlchemy computes those, so it runs it."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanedefaults")
    values = _ledger_values(opened.room.id, clock)
    with lanes(pg_engine) as seen:
        await pg_db.execute(text("SELECT 1"))
        await pg_db.rows(_insert_of_ledger(), values)
    assert seen == [False, False]
    stored = (
        await pg_db.execute(
            select(ModelCall.input_tokens, ModelCall.ok).where(ModelCall.id == values["id"])
        )
    ).one()
    assert tuple(stored) == (0, True)
    await pg_db.rollback()


def test_the_compiled_forms_kept_are_bounded(pg_engine: AsyncEngine) -> None:
    """An entry keeps its statement alive: statements built per call must not pile up."""
    for n in range(raw_lane.CACHE_LIMIT + 50):
        raw_lane.compiled(select(Room.id).where(Room.title == f"t{n}"), pg_engine.dialect)
    assert len(raw_lane._cache) <= raw_lane.CACHE_LIMIT
    assert raw_lane.compiled(q.write_memory(), pg_engine.dialect) is not None


async def test_none_for_a_json_column_is_json_null_on_the_lane_as_through_sqlalchemy(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """SQLAlchemy's JSON stores None as JSON ``null``, not SQL NULL: the lane runs the bind
    processor for None too."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanenone")
    is_sql_null = select(Room.memory.is_(None)).where(Room.id == opened.room.id)
    found: list[bool | None] = []
    for off in (False, True):
        db = Db(create_sessionmaker(pg_engine))
        try:
            with lane_off() if off else _nothing(), lanes(pg_engine) as seen:
                await db.execute(text("SELECT 1"))
                await db.rows(
                    q.write_memory(),
                    {"room_id": opened.room.id, "document": None, "at": clock.now()},
                )
            assert seen == [False, not off]
            found.append(await db.scalar(is_sql_null))
            await db.rollback()
        finally:
            await db.close()
    assert found == [False, False]


async def test_orm_entities_and_extra_parameters_go_through_sqlalchemy(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """A select of ORM entities answers objects through SQLAlchemy (the lane has only
    columns); an ``UPDATE`` given a parameter it does not name would set that column too
    through SQLAlchemy, so such a call is SQLAlchemy's."""
    _, opened = await guest_room_in_process(pg_engine, clock, "laneentity")
    rooms = Room.__table__
    assert isinstance(rooms, Table)
    retitle = (
        update(rooms)
        .where(rooms.c.id == bindparam("room_id", type_=rooms.c.id.type))
        .values(memory_version=rooms.c.memory_version + 1)
        .returning(rooms.c.title)
    )
    with lanes(pg_engine) as seen:
        await pg_db.execute(text("SELECT 1"))
        (room,) = await pg_db.rows(_room_entity(), {"room_id": opened.room.id})
        (kept,) = await pg_db.rows(retitle, {"room_id": opened.room.id, "unrelated": 1})
        (renamed,) = await pg_db.rows(retitle, {"room_id": opened.room.id, "title": "Renamed"})
    assert seen == [False, False, True, False]
    assert isinstance(room[0], Room)
    assert kept.title != "Renamed"
    assert renamed.title == "Renamed"
    await pg_db.rollback()


@functools.cache
def _room_entity() -> Any:
    return select(Room).where(Room.id == bindparam("room_id", type_=Room.id.type))


async def test_a_connection_lost_on_the_lane_is_invalidated_and_the_unit_rolls_back(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """As SQLAlchemy does for its own statements: the error says the connection was
    invalidated, and the unit's rollback does not fail on the dead connection."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanelost")
    pid = await pg_db.scalar(select(func.pg_backend_pid()))
    async with pg_engine.connect() as other:
        await other.execute(select(func.pg_terminate_backend(pid)))
    with pytest.raises(OperationalError) as raised:
        await pg_db.rows(q.write_memory(), _write(opened.room.id, clock))
    assert raised.value.connection_invalidated
    await pg_db.rollback()
    # the next unit on the same Db gets a fresh connection
    assert await pg_db.scalar(select(Room.id).where(Room.id == opened.room.id)) is not None


async def test_a_unit_never_reaches_a_connection_it_gave_back(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """Unit A's connection goes back to the pool at its rollback and unit B takes it and
    begins on it. A's next transaction runs on another connection: the lane must not send
    A's statement down the old one, inside B's transaction."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanereturned")
    room_id = opened.room.id
    before = await _memory_version(pg_engine, room_id)
    one = create_async_engine(pg_engine.url, pool_size=1, max_overflow=1)
    a, b = Db(create_sessionmaker(one)), Db(create_sessionmaker(one))
    try:
        await a.execute(text("SELECT 1"))
        await a.rows(q.write_memory(), _write(room_id, clock))  # A's driver, on the lane
        await a.rollback()
        await b.execute(text("SELECT 1"))  # B now holds that connection, mid-transaction
        with lanes(one) as seen:
            await a.execute(text("SELECT 1"))  # A begins on the pool's other connection
            await a.rows(q.write_memory(), _write(room_id, clock))
        assert seen == [False, True]
        await a.rollback()  # takes A's write back, wherever it went
        await b.commit()
    finally:
        await a.close()
        await b.close()
        await one.dispose()
    assert await _memory_version(pg_engine, room_id) == before


async def _room_with_memory(
    engine: AsyncEngine, clock: ManualClock, handle: str
) -> tuple[uuid.UUID, uuid.UUID]:
    """A guest's room with a non-empty memory: the room's id and the guest's pane."""
    _, opened = await guest_room_in_process(engine, clock, handle)
    db = Db(create_sessionmaker(engine))
    try:
        await db.rows(q.write_memory(), _write(opened.room.id, clock))
        await db.commit()
        pane = await db.scalar(
            select(Participant.id).where(
                Participant.room_id == opened.room.id, Participant.key != "host"
            )
        )
    finally:
        await db.close()
    assert pane is not None
    return opened.room.id, pane


def _guest_post(room_id: uuid.UUID, pane: uuid.UUID, clock: ManualClock) -> NewMessage:
    return NewMessage(
        id=uuid.uuid4(),
        room_id=room_id,
        participant_id=pane,
        author_kind="guest",
        author_account_id=None,
        body="Two posts in March?",
        client_message_id="c-1",
        created_at=clock.now(),
    )


async def _append(db: Db, message: NewMessage, clock: ManualClock) -> Appended:
    """``postMessage``'s append of ``message``, reading the room's memory back."""
    rules = AppendRules(
        SessionRule.SITTING,
        session_floor=clock.now() - timedelta(hours=1),
        window_floor=clock.now() - timedelta(minutes=1),
        per_window=10,
    )
    return await MessageRepository(db).append_pg(message, rules, reading_memory=True)


async def test_the_pane_logs_append_goes_by_the_lane_and_stores_what_sqlalchemy_stores(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """The append (``postMessage``'s and the persona reply's one statement, raw SQL) runs on
    the lane: the same outcome, the room's memory included, and the same message stored as
    through SQLAlchemy (each in a transaction rolled back after)."""
    room_id, pane = await _room_with_memory(pg_engine, clock, "laneappend")
    message = _guest_post(room_id, pane, clock)

    async def append(db: Db) -> tuple[Appended, tuple[Any, ...]]:
        appended = await _append(db, message, clock)
        stored = await db.execute(
            select(Message.seq, Message.session_no, Message.body, Message.created_at).where(
                Message.id == message.id
            )
        )
        return appended, tuple(stored.one())

    (
        (by_raw_lane, stored_by_raw_lane),
        (by_sqlalchemy, stored_by_sqlalchemy),
        seen,
    ) = await _both_ways(pg_engine, append)
    assert seen == [False, True, False, False, False, False]  # SELECT 1, append, read; x2
    assert by_raw_lane == by_sqlalchemy
    assert by_raw_lane.memory == {"note": "kept?"}
    assert by_raw_lane.session_no == 1
    assert stored_by_raw_lane == stored_by_sqlalchemy
    assert stored_by_raw_lane[3] == message.created_at


async def test_the_memory_leases_grant_and_release_go_by_the_lane_reading_what_sqlalchemy_reads(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """Distil's lease (raw SQL with typed columns: the room's head with its memory as JSON,
    the offer's stage) on the lane: the grant and the fenced release read back the same as
    through SQLAlchemy (each in a transaction rolled back after)."""
    room_id, _ = await _room_with_memory(pg_engine, clock, "laneleases")
    now, until = clock.now(), clock.now() + timedelta(seconds=30)

    async def lease(db: Db) -> tuple[Granted, Locked | None]:
        leases = LeaseRepository(db)
        granted = await leases.grant_reading(room_id, "distil", now, until)
        assert granted is not None
        return granted, await leases.release_locking(room_id, granted.token, now)

    by_raw_lane, by_sqlalchemy, seen = await _both_ways(pg_engine, lease)
    assert seen == [False, True, True, False, False, False]  # SELECT 1, grant, release; x2
    assert by_raw_lane == by_sqlalchemy
    granted, locked = by_raw_lane
    assert granted.room.memory == {"note": "kept?"}
    assert locked is not None
    assert locked.memory == {"note": "kept?"}


async def test_a_turns_pane_read_goes_by_the_lane_reading_what_sqlalchemy_reads(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """The persona's and Distil's read of a pane (the room's participants and accounts, the
    pane's session and the room's dispatches folded as JSON, the host's services) on the
    lane: the same participants, accounts, session and services as through SQLAlchemy."""
    room_id, pane = await _room_with_memory(pg_engine, clock, "lanepane")
    db = Db(create_sessionmaker(pg_engine))
    try:
        await _append(db, _guest_post(room_id, pane, clock), clock)
        await db.commit()
    finally:
        await db.close()

    async def read(db: Db) -> pane_read.PaneRead:
        return await pane_read.read(db, room_id, pane, dispatch_cap=8, services=True)

    by_raw_lane, by_sqlalchemy, seen = await _both_ways(pg_engine, read)
    assert seen == [False, True, False, False]  # SELECT 1, the read; x2
    assert by_raw_lane == by_sqlalchemy
    assert [p.key for p in by_raw_lane.participants] == ["host", "visitor"]
    assert [values[4] for values in by_raw_lane.session] == ["Two posts in March?"]
    host = by_raw_lane.participants[0]
    assert host.account_id is not None
    assert by_raw_lane.accounts[host.account_id].handle == "lanepane"
    assert by_raw_lane.services == []


async def test_a_posts_room_read_and_throttle_go_by_the_lane_reading_what_sqlalchemy_reads(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """``postMessage``'s room read (the room's mode, its seats, a guest's charged posts) and its
    cross-room throttle's upsert on the lane: the same rows and count as through SQLAlchemy."""
    _, opened = await guest_room_in_process(pg_engine, clock, "lanewriter")
    count = GuestCount(30, clock.now() - timedelta(hours=1))

    async def post_reads(db: Db) -> tuple[WriterRead | None, int]:
        found = await RoomRepository(db).for_writer(opened.room.id, count=count)
        hits = await ThrottleRepository(db).increment("lanewriter:ip", clock.now(), clock.now())
        return found, hits

    by_raw_lane, by_sqlalchemy, seen = await _both_ways(pg_engine, post_reads)
    # SELECT 1, the room, the upsert and (a window's first hit) the prune of older windows;
    # then the same through SQLAlchemy
    assert seen == [False, True, True, False, False, False, False, False]
    assert by_raw_lane == by_sqlalchemy
    found, hits = by_raw_lane
    assert found is not None
    assert hits == 1
    assert found.room.mode == opened.room.mode
    assert [seat.key for seat in found.participants] == ["host", "visitor"]
    visitor = found.participants[1]
    assert visitor.guest_key_hash is not None
    assert visitor.account_id is None
    assert found.guest_posts == {visitor.id: 0}
