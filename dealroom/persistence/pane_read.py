"""What a run reads of its room in one statement, to keep a turn's statements few: the room's
participants with their accounts as plain rows (:class:`Seated`, :class:`Named`: what a turn
reads of them, so PostgreSQL's raw lane can run the statement, which it cannot for ORM rows),
and on the pane's row its current session and the room's recent dispatches, on the host's row
the host's service names, each folded into a JSON array by a scalar subquery (``json_agg`` on
PostgreSQL, ``json_group_array`` on SQLite), instead of three or four statements of their own.

The JSON arrays are read back into the same plain tuples a separate statement gives
(``runs.SessionMessage``, ``dispatches.DispatchLine``), each value converted by its column's type
(:func:`decoder`), so nothing downstream sees a string where it saw a UUID or a datetime."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol

from sqlalchemy import (
    JSON,
    Select,
    String,
    Uuid,
    bindparam,
    case,
    func,
    literal,
    select,
    type_coerce,
)
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import SelectBase

from dealroom.domain.seats import Seat
from dealroom.persistence import run_statements as q
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    Participant,
    Room,
    Service,
    UTCDateTime,
)


class Occupant(Protocol):
    """What a turn reads of a participant: a :class:`Seated` or the ORM row."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def room_id(self) -> uuid.UUID: ...
    @property
    def key(self) -> str: ...
    @property
    def account_id(self) -> uuid.UUID | None: ...


class Seated(NamedTuple):
    """A participant as a turn reads it (an :class:`Occupant`)."""

    id: uuid.UUID
    room_id: uuid.UUID
    key: str
    account_id: uuid.UUID | None


class Named(NamedTuple):
    """An account bound to a seat, as a turn reads it."""

    id: uuid.UUID
    display_name: str
    handle: str
    locale: str | None = None
    """The locale money is written in for it (``domain/locale.py``)."""


@dataclass(frozen=True, slots=True)
class PaneRead:
    """The room's participants (by key) and the accounts bound to them, and what the pane's
    and the host's rows carried."""

    participants: list[Seated]
    accounts: dict[uuid.UUID, Named]
    session: list[tuple[Any, ...]]
    """The pane's current session, oldest first, as ``SESSION_COLUMNS`` values."""
    dispatches: list[tuple[Any, ...]]
    """The room's newest dispatches, oldest first, as ``DISPATCH_COLUMNS`` values."""
    services: list[str] | None
    """The host account's service names in order; None when not asked for or no host account."""
    room_service: str | None = None
    """The name of the service the room is about, when asked for services and it has one."""


def _array(dialect: str, columns: Sequence[ColumnElement[Any]]) -> ColumnElement[Any]:
    """One row as a JSON array. A JSON column is embedded as JSON, not as its text (SQLite
    stores it as text; ``json()`` parses it)."""
    if dialect == "postgresql":
        return func.json_build_array(*columns)
    return func.json_array(
        *(func.json(column) if isinstance(column.type, JSON) else column for column in columns)
    )


def _aggregate(dialect: str, value: ColumnElement[Any]) -> ColumnElement[Any]:
    return func.json_agg(value) if dialect == "postgresql" else func.json_group_array(value)


def _folded(dialect: str, rows: SelectBase) -> ColumnElement[Any]:
    """``rows`` (ordered, limited) as one JSON array of arrays."""
    inner = rows.subquery()
    columns = list(inner.c)
    folded = select(_aggregate(dialect, _array(dialect, columns))).scalar_subquery()
    return type_coerce(folded, JSON)


@functools.cache
def statement(dialect: str, *, services: bool) -> Select[Any]:
    """Binds ``room_id``, ``pane`` and ``dispatch_cap``."""
    room_id = bindparam("room_id", type_=Participant.room_id.type)
    pane = bindparam("pane", type_=Participant.id.type)
    # The same selects as a run's separate reads (``run_statements``), each folded.
    session = _folded(dialect, q.current_session())
    dispatches = _folded(dialect, q.recent_dispatches("dispatch_cap"))
    on_pane = Participant.id == pane
    columns: list[ColumnElement[Any]] = [
        case((on_pane, session), else_=literal(None, JSON)).label("session"),
        case((on_pane, dispatches), else_=literal(None, JSON)).label("dispatches"),
    ]
    if services:
        names = (
            select(Service.name)
            .where(Service.account_id == Account.id)
            .order_by(Service.name)
            .correlate(Account)
        )
        inner = names.subquery()
        folded = type_coerce(select(_aggregate(dialect, inner.c.name)).scalar_subquery(), JSON)
        columns.append(
            case((Participant.key == Seat.HOST.value, folded), else_=literal(None, JSON)).label(
                "services"
            )
        )
        # The room's own service (public, like the list): read on the pane's row only.
        about = (
            select(Service.name)
            .join(Room, Room.service_id == Service.id)
            .where(Room.id == room_id)
            .scalar_subquery()
        )
        columns.append(case((on_pane, about), else_=literal(None, String)).label("room_service"))
    return (
        select(
            Participant.id,
            Participant.room_id,
            Participant.key,
            Participant.account_id,
            Account.id.label("bound"),
            Account.display_name,
            Account.handle,
            Account.locale,
            *columns,
        )
        .outerjoin(Account, Account.id == Participant.account_id)
        # A removed participant is out of the turn: nothing is sent to it, nothing runs there.
        .where(Participant.room_id == room_id, Participant.removed_at.is_(None))
        .order_by(Participant.key)
    )


def _uuid(value: Any) -> uuid.UUID | None:
    return None if value is None else uuid.UUID(value)


def _datetime(value: Any) -> datetime | None:
    if value is None:
        return None
    found = datetime.fromisoformat(value)
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


def _same(value: Any) -> Any:
    return value


@functools.cache
def decoder(columns: tuple[Any, ...]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """Reads one JSON array back into the values the columns' own statement would give: a
    UUID from its text, a datetime from its ISO form in UTC (as ``UTCDateTime`` gives it)."""
    converters = [
        _uuid
        if isinstance(column.type, Uuid)
        else _datetime
        if isinstance(column.type, UTCDateTime)
        else _same
        for column in columns
    ]

    def decode(values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(convert(value) for convert, value in zip(converters, values, strict=True))

    return decode


async def read(
    db: Db,
    room_id: uuid.UUID,
    pane: uuid.UUID,
    *,
    dispatch_cap: int,
    services: bool,
) -> PaneRead:
    found = await db.rows(
        statement(db.dialect, services=services),
        {
            "room_id": room_id,
            "pane": pane,
            "dispatch_cap": dispatch_cap,
        },
    )
    participants: list[Seated] = []
    accounts: dict[uuid.UUID, Named] = {}
    session: list[tuple[Any, ...]] = []
    dispatches: list[tuple[Any, ...]] = []
    names: list[str] | None = None
    room_service: str | None = None
    for row in found:
        participant = Seated(row.id, row.room_id, row.key, row.account_id)
        participants.append(participant)
        if row.bound is not None:
            accounts[row.bound] = Named(row.bound, row.display_name, row.handle, row.locale)
        if participant.id == pane:
            decode = decoder(q.SESSION_COLUMNS)
            session = sorted((decode(values) for values in row.session or ()), key=_seq)
            decode = decoder(q.DISPATCH_COLUMNS)
            dispatches = sorted((decode(values) for values in row.dispatches or ()), key=_sent)
            room_service = row.room_service if services else None
        if services and participant.key == Seat.HOST.value and row.bound is not None:
            names = list(row.services or ())
    return PaneRead(participants, accounts, session, dispatches, names, room_service)


_SEQ = [column.key for column in q.SESSION_COLUMNS].index("seq")
_CREATED = [column.key for column in q.DISPATCH_COLUMNS].index("created_at")
_POSITION = [column.key for column in q.DISPATCH_COLUMNS].index("position")


def _seq(values: tuple[Any, ...]) -> Any:
    return values[_SEQ]


def _sent(values: tuple[Any, ...]) -> Any:
    return (values[_CREATED], values[_POSITION])
