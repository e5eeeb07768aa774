"""The agent turn's hot statements, built once: comparing aliased columns costs
milliseconds of Python per build, more than the queries themselves, and a statement built once
keeps its cache key. The run's finish and what a run reads and writes on the way, each binding
its parameters by name (``bindparam``). The queue's claim is in ``claim_statements``."""

from __future__ import annotations

import functools
import uuid
from typing import Any, cast

from sqlalchemy import Select, Table, bindparam, func, select, update

from dealroom.persistence.models import (
    Account,
    AgentRun,
    Dispatch,
    Message,
    Participant,
    Room,
)


def runs() -> Table:
    return cast(Table, AgentRun.__table__)


# --- the turn's own statements, built once ---------------------------------------------------
# Built per call, each would compare columns and compute a fresh cache key every time (about
# 120 expression coercions per run). Built once, a statement's cache key is memoized on it
# and each call only binds its parameters.


def _done(**values: Any) -> Any:
    """The run marked done with ``values``, only while it is still this claim (running, at
    the attempt that claimed it); binds ``run_id``, ``attempt`` and ``at``."""
    table = runs()
    return (
        update(table)
        .where(
            table.c.id == bindparam("run_id", type_=table.c.id.type),
            table.c.status == "running",
            table.c.attempts == bindparam("attempt"),
        )
        .values(status="done", finished_at=bindparam("at"), **values)
    )


@functools.cache
def finish() -> Any:
    """A run done with its reply; binds ``reply_id`` besides :func:`_done`'s. Returns the
    run's id: a row back is the stale-run check passed."""
    table = runs()
    reply = bindparam("reply_id", type_=table.c.reply_message_id.type)
    return _done(error=None, reply_message_id=reply).returning(table.c.id)


@functools.cache
def done() -> Any:
    """A run without a reply done; binds ``set_no_op`` and ``set_error`` besides
    :func:`_done`'s."""
    table = runs()
    error = bindparam("set_error", type_=table.c.error.type)
    return _done(no_op=bindparam("set_no_op"), error=error).returning(table.c.id)


@functools.cache
def write_memory() -> Any:
    """The room's memory document stored and its version bumped; binds ``room_id``,
    ``document`` and ``at``."""
    rooms = cast(Table, Room.__table__)
    return (
        update(rooms)
        .where(rooms.c.id == bindparam("room_id", type_=rooms.c.id.type))
        .values(
            memory=bindparam("document", type_=rooms.c.memory.type),
            memory_version=rooms.c.memory_version + 1,
            memory_updated_at=bindparam("at"),
        )
        .returning(rooms.c.memory_version)
    )


SESSION_COLUMNS = (
    Message.id,
    Message.participant_id,
    Message.seq,
    Message.author_kind,
    Message.body,
    Message.client_message_id,
    Message.relayed_dispatch_id,
)
"""What a turn reads of a message (``runs.SessionMessage``), as plain columns: loading the
session as ORM rows costs about 15 µs of CPU more per message (measured)."""
SessionSelect = Select[uuid.UUID, uuid.UUID, int, str, str, str | None, uuid.UUID | None]


@functools.cache
def current_session() -> SessionSelect:
    """A pane's newest session, whole, newest first; binds ``pane``. A continuous sitting is
    never cut, however long (seed 000): there is no line limit."""
    pane = bindparam("pane", type_=Message.participant_id.type)
    newest = (
        select(func.max(Message.session_no)).where(Message.participant_id == pane).scalar_subquery()
    )
    return (
        select(*SESSION_COLUMNS)
        .where(Message.participant_id == pane, Message.session_no == newest)
        .order_by(Message.seq.desc())
    )


@functools.cache
def session_message() -> SessionSelect:
    """One message, as ``current_session`` reads it; binds ``id``."""
    return select(*SESSION_COLUMNS).where(Message.id == bindparam("id", type_=Message.id.type))


DISPATCH_COLUMNS = tuple(cast(Table, Dispatch.__table__).c)
"""A dispatch as a turn reads it (``dispatches.DispatchLine``): every column, as plain values."""


@functools.cache
def recent_dispatches(limit: str = "limit") -> Select[Any]:
    """A room's newest dispatches, newest first, as plain columns; binds ``room_id`` and
    ``limit`` (or the name given)."""
    return (
        select(*DISPATCH_COLUMNS)
        .where(Dispatch.room_id == bindparam("room_id", type_=Dispatch.room_id.type))
        .order_by(Dispatch.created_at.desc(), Dispatch.position.desc())
        .limit(bindparam(limit))
    )


@functools.cache
def held_payloads() -> Select[Any]:
    """What a room's held sends carry; binds ``room_id``."""
    return select(Dispatch.payload).where(
        Dispatch.room_id == bindparam("room_id", type_=Dispatch.room_id.type),
        Dispatch.status == "held",
    )


@functools.cache
def people() -> Select[Participant, Account]:
    """A room's participants by key, each with its bound account (if any); binds
    ``room_id``."""
    return (
        select(Participant, Account)
        .outerjoin(Account, Account.id == Participant.account_id)
        .where(Participant.room_id == bindparam("room_id", type_=Participant.room_id.type))
        .order_by(Participant.key)
    )
