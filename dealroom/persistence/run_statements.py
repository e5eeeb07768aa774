"""The agent-run queue's hot statements, built once (comparing aliased columns costs
milliseconds of Python per build, more than the queries themselves): the claim's choice of a
due run, its pane-busy re-check, and what it reads back with the run (issue 17)."""

from __future__ import annotations

import functools
import uuid
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    ColumnElement,
    ScalarSelect,
    Select,
    Table,
    and_,
    bindparam,
    literal_column,
    or_,
    select,
)
from sqlalchemy.orm import aliased

from dealroom.persistence.models import AgentRun, Offer, Room

CLAIM_LOAD = (
    "room_kind",
    "room_model_picks",
    "room_memory",
    "room_memory_version",
    "taken_over",
    "merge_maybe_due",
    "offer_status",
    "offer_brand_approved_at",
)
"""The claim's extra columns, by label (``services/turns.py`` reads them into a
``ClaimLoad``)."""


def correlated(sql: str, label: str, column: Any) -> Any:
    """A scalar subquery on the claimed or finished run, written out: SQLite's RETURNING
    renders SQLAlchemy's columns unqualified, which would turn ``offers.room_id =
    agent_runs.room_id`` into ``room_id = room_id`` (always true) inside the subquery."""
    return literal_column(f"({sql})", type_=column.type).label(label)


@functools.cache
def claim_load() -> tuple[Any, ...]:
    """The claim's extra columns (:data:`CLAIM_LOAD`), correlated to the claimed run."""
    rooms = cast(Table, Room.__table__)
    offers = cast(Table, Offer.__table__)
    room = "SELECT rooms.{} FROM rooms WHERE rooms.id = agent_runs.room_id"
    offer = (
        "SELECT offers.{} FROM offers WHERE offers.room_id = agent_runs.room_id"
        " ORDER BY offers.created_at DESC, offers.id DESC LIMIT 1"
    )
    taken = (
        "EXISTS (SELECT 1 FROM pane_takeovers"
        " WHERE pane_takeovers.participant_id = agent_runs.participant_id)"
    )
    stale = (
        "EXISTS (SELECT 1 FROM participants JOIN account_memory"
        " ON account_memory.account_id = participants.account_id"
        " WHERE participants.room_id = agent_runs.room_id"
        " AND account_memory.version > participants.last_merged_memory_version)"
    )
    flag = literal_column("1", type_=Boolean)
    columns = (
        (room.format("kind"), rooms.c.kind),
        (room.format("model_picks"), rooms.c.model_picks),
        (room.format("memory"), rooms.c.memory),
        (room.format("memory_version"), rooms.c.memory_version),
        (taken, flag),
        (stale, flag),
        (offer.format("status"), offers.c.status),
        (offer.format("brand_approved_at"), offers.c.brand_approved_at),
    )
    return tuple(
        correlated(sql, name, column)
        for name, (sql, column) in zip(CLAIM_LOAD, columns, strict=True)
    )


def runs() -> Table:
    return cast(Table, AgentRun.__table__)


@functools.cache
def sibling_running() -> ColumnElement[bool]:
    """A run of the same (pane, agent) is running (Core, for the claim's UPDATE)."""
    table = runs()
    other = table.alias("sibling")
    return (
        select(other.c.id)
        .where(
            other.c.participant_id == table.c.participant_id,
            other.c.agent == table.c.agent,
            other.c.status == "running",
        )
        .exists()
    )


@functools.cache
def claimable_id() -> ScalarSelect[uuid.UUID]:
    """The claimable run's id as a subquery (SQLite's one-statement claim)."""
    candidate = claimable().subquery()
    return select(candidate.c.id).limit(1).scalar_subquery()


@functools.cache
def claimable() -> Select[AgentRun]:
    """Built once: comparing aliased columns costs milliseconds of Python per build, more
    than the query itself."""
    other = aliased(AgentRun)
    same_pane = (other.participant_id == AgentRun.participant_id) & (other.agent == AgentRun.agent)
    busy = select(other.id).where(same_pane, other.status == "running").exists()
    older = (
        select(other.id)
        .where(
            same_pane,
            other.status == "queued",
            or_(
                other.created_at < AgentRun.created_at,
                and_(other.created_at == AgentRun.created_at, other.id < AgentRun.id),
            ),
        )
        .exists()
    )
    return (
        select(AgentRun)
        .where(
            AgentRun.status == "queued",
            AgentRun.not_before <= bindparam("now"),
            ~busy,
            ~older,
        )
        # Due first: a run put back to wait (for the memory lease, say) is due from the time
        # it was put back, so the runs it was queued beside go before it instead of behind
        # it again and again (issue 12: the Guard holds the lease while it thinks).
        .order_by(AgentRun.not_before, AgentRun.created_at, AgentRun.id)
        .limit(bindparam("limit"))
        .with_for_update(skip_locked=True)
    )
