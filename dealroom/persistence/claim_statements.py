"""The queue's claim, built once: its choice of a due run (SQLite's inside the
claim's ``UPDATE``, PostgreSQL's a candidate with its pane's lock), the pane-busy re-check, and
what it reads back with the run. Each binds its parameters by name (``bindparam``)."""

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
    func,
    literal_column,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.orm import aliased

from dealroom.persistence.models import AgentRun, Offer, Participant, Room
from dealroom.persistence.run_statements import runs

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
"""The claim's extra columns, by label (``services/turns/context.py`` reads them into a
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
    """SQLite's choice of claimable runs: queued, due, no sibling of its (pane, agent)
    running and none queued before it. (PostgreSQL's is :func:`claim_candidate`'s window:
    its planner joined these two ``NOT EXISTS`` into a scan of the whole queue per run.)
    Built once: comparing aliased columns costs milliseconds of Python per build, more than
    the query itself."""
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
        # it again and again (the Guard holds the lease while it thinks).
        .order_by(AgentRun.not_before, AgentRun.created_at, AgentRun.id)
        .limit(bindparam("limit"))
    )


@functools.cache
def claim_chosen() -> Any:
    """The claim's ``UPDATE … RETURNING`` choosing the oldest claimable run inside it (SQLite:
    one writer, so the choice cannot race); binds ``now``, ``limit`` and ``until``."""
    return _claim(claimable_id())


@functools.cache
def claim_by_id() -> Any:
    """The claim's ``UPDATE … RETURNING`` of a candidate PostgreSQL chose with ``SKIP LOCKED``
    and whose pane the caller locked; binds ``run_id``, ``now`` and ``until``.

    A statement of its own, after the candidate's, on purpose: its snapshot is taken once the
    pane is locked, so its sibling check sees every claim of the pane that committed before.
    Folded into the candidate's statement (a round trip less per run) it would share the
    snapshot taken before the lock, and a sibling that became queued after that snapshot (a
    failed run retried keeps its ``created_at``; of two posts racing for a pane
    the later-committed may carry the earlier time) and was claimed by another worker before
    the lock would be missed: two runs of one pane and agent at once, out of order. The
    re-check of the row's own status does not catch that, since this run's row is unchanged."""
    return _claim(bindparam("run_id", type_=runs().c.id.type))


def _claim(target: Any) -> Any:
    table = runs()
    return (
        update(table)
        .where(table.c.id == target, table.c.status == "queued", ~sibling_running())
        .values(status="running", attempts=table.c.attempts + 1, lease_until=bindparam("until"))
        .returning(*table.c, *claim_load())
    )


CANDIDATES = 8
"""How many claimable runs a PostgreSQL claim looks at (``claim_candidate``'s ``limit``): it
takes the first whose pane no one holds, so a busy pane's run does not leave a worker idle
while other panes' runs wait."""

OLDEST = 64
"""How many of the oldest queued runs a PostgreSQL claim reads first (``claim_candidate``);
it reads the whole queue when fewer than ``limit`` of them head a queue and more are
queued."""


def _is(column: Any, status: str) -> ColumnElement[bool]:
    """``column = '<status>'`` with the status written in the SQL, not bound: a prepared
    statement's generic plan can then use the partial index on queued runs."""
    return cast(ColumnElement[bool], column == literal_column(f"'{status}'"))


def _heads(source: Any) -> Select[Any]:
    """The claimable runs of ``source`` (queued and running runs), oldest due first, at most
    ``limit``: a queue's head is its running run if one runs, else its oldest queued run, and
    it is claimable when it is queued and due. A window over each (pane, agent) queue, running
    first, then by age, so ``source`` is read once and sorted once."""
    running = _is(source.c.status, "running")
    place = (
        func.row_number()
        .over(
            partition_by=(source.c.participant_id, source.c.agent),
            order_by=(running.desc(), source.c.created_at, source.c.id),
        )
        .label("place")
    )
    heads = select(
        source.c.id,
        source.c.participant_id,
        source.c.status,
        source.c.not_before,
        source.c.created_at,
        place,
    ).subquery()
    return (
        select(heads.c.id, heads.c.participant_id, heads.c.not_before, heads.c.created_at)
        .where(
            heads.c.place == literal_column("1"),
            _is(heads.c.status, "queued"),
            heads.c.not_before <= bindparam("now", type_=runs().c.not_before.type),
        )
        .order_by(heads.c.not_before, heads.c.created_at, heads.c.id)
        .limit(bindparam("limit"))
    )


@functools.cache
def claim_candidate() -> Select[uuid.UUID]:
    """PostgreSQL's choice of a run to claim and its pane's row lock, in one statement: of
    the oldest claimable runs (up to ``limit``), the first whose pane's row ``FOR NO KEY
    UPDATE`` is free now (``SKIP LOCKED``). A pane a post, an apply or another worker's claim
    holds is passed over, and its run is claimed once that is done; the pane's lock is what
    serialises claims, so the runs' rows are not locked here (the claim's ``UPDATE`` locks
    the one it takes). Binds ``now`` and ``limit``.

    The claimable runs are each queue's head (:func:`_heads`), looked for first among the
    running runs and the :data:`OLDEST` oldest queued (``ix_agent_runs_queued``, a partial
    index): a queued run's older siblings are older still, so they are among those too, and
    a head found there is a head of the whole queue. When fewer than ``limit`` of them head
    their queue and more runs are queued than were read (a flood in a few panes at the
    queue's front), the candidates come from the whole queue instead (``late``; PostgreSQL
    evaluates the two counts once and runs only the branch they open), so one head, in a pane
    a post holds, does not leave the worker idle while another pane's run could start.
    Otherwise the candidates are the oldest claimable runs among those read, ordered by
    ``not_before``, not always the whole queue's: a run put back (a retry, a lease's wait, an
    expired lease; ``not_before`` then, its old ``created_at`` kept) stays among the oldest
    and can be chosen before a younger run outside them that was due earlier.

    Reading the oldest first keeps a claim's cost flat as a backlog grows, where a window over
    the whole queue grows with it. The heads are a window, not :func:`claimable`'s two ``NOT
    EXISTS``: with statistics taken while nothing was queued (a queued run lives
    milliseconds) PostgreSQL would join those by scanning every queued run per queue, just
    when a backlog formed (measured: docs/BENCHMARKS.md, "The claim reads the oldest runs
    first"; the choice: docs/DECISIONS.md, "The claim: two statements over the oldest runs").

    The claim never waits on a lock. Locking the candidate run's row (``FOR UPDATE SKIP
    LOCKED``) and then waiting for the pane's would close a cycle with a persona's apply: a
    run row the claim's snapshot still saw queued would be locked and then fail its re-check
    (it was claimed meanwhile; PostgreSQL keeps such a lock to the transaction's end), the
    claim would wait for the apply holding the pane, and the apply's finish would wait for
    that run's row: a deadlock, a worker's second lost and, when the apply is the victim, a
    turn run and billed again. ``FOR NO KEY UPDATE`` still excludes another claim or post of
    the pane, but not the foreign-key checks of rows that name it."""
    table = runs()
    queue = (
        table.c.id,
        table.c.participant_id,
        table.c.agent,
        table.c.status,
        table.c.not_before,
        table.c.created_at,
    )
    oldest = (
        select(*queue)
        .where(_is(table.c.status, "queued"))
        .order_by(table.c.created_at, table.c.id)
        .limit(literal_column(str(OLDEST)))
        .cte("candidate_oldest_queued")
    )
    running = select(*queue).where(_is(table.c.status, "running"))
    pool = union_all(running, select(oldest)).subquery("pool")
    early = _heads(pool).cte("candidate_oldest")
    # Whether the whole queue is read instead: the oldest were as many as were read (so
    # there are more) and fewer than ``limit`` of them head their queue. One-time filters:
    # PostgreSQL computes each once and runs only the branch it opens.
    fewer = select(func.count()).select_from(early).scalar_subquery() < bindparam("limit")
    more = select(func.count()).select_from(oldest).scalar_subquery() >= literal_column(str(OLDEST))
    whole = select(*queue).where(or_(_is(table.c.status, "queued"), _is(table.c.status, "running")))
    late = _heads(whole.subquery("whole")).where(fewer, more).subquery("late")
    candidate = union_all(select(early).where(or_(~fewer, ~more)), select(late)).subquery(
        "candidate"
    )
    return (
        select(candidate.c.id)
        .join(Participant, Participant.id == candidate.c.participant_id)
        .order_by(candidate.c.not_before, candidate.c.created_at, candidate.c.id)
        .limit(1)
        .with_for_update(of=cast(Table, Participant.__table__), key_share=True, skip_locked=True)
    )
