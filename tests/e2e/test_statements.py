"""The hot path's SQL is pinned by count (never by time), so a change that adds a statement to
``postMessage`` or to a turn is a visible decision, not a drift.

The budgets are the current counts; lower them as the hot path shrinks (the target is 12 statements
per turn: on PostgreSQL a visitor's message end to end, its post and both runs of its turn, is 10;
each run, claim included, is 5 and 7). The statements are printed so a failure shows what was
added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up

POST_MESSAGE_BUDGET = {"postgresql": 2, "sqlite": 6}
"""A guest's post. First the room and its participants in one statement, without the room's memory,
which also counts the guest key's posts (the guest cap). Then:

* on PostgreSQL, one statement that commits on its own, with no transaction around the post
  (``Db.write_autocommit``): the pane log's append (the sequence bump, the pane's tail under the
  room's lock, the insert with the idempotency check in ``ON CONFLICT``), with the two runs'
  INSERT, the room's watch re-armed and the cross-room throttle's capped upsert (with its key's
  older windows removed) folded into its ``WITH``. A post that stores nothing there (a retry, a
  refusal) writes nothing and goes the transaction path: the read, the append, and the rest as one
  statement at the commit (``Db.defer``);
* on SQLite, the bump and the insert, the runs' INSERT, the watch's upsert and the throttle's
  upsert.

The pane's tail and the rate limit's counter are columns kept by the database (migration
0011): no read. (BEGIN/COMMIT/PRAGMA are not counted.)"""
TURN_BUDGET = {"postgresql": 10, "sqlite": 18}
"""What ``postMessage`` and the persona and Distil runs of one visitor message execute, end to
end, apart from the workers' queue polls and claims (how many of those run depends on timing,
not on the turn: an empty poll is the same claim statement finding nothing). Each run's own
claim is counted by the per-run test below."""
PERSONA_RUN_BUDGET = {"postgresql": 5, "sqlite": 7}
"""The persona's run, from its claim to its commit: the claim (one ``UPDATE … RETURNING`` that also
reads the room's head and memory, the pane's takeover, whether a merge may be due and the offer's
stage; PostgreSQL adds before it the ``SKIP LOCKED`` candidate, which takes the pane's row lock in
the same statement, so that two runs of one pane never run at once); the pane's read in one
statement (``persistence/pane_read``: the participants with their accounts, and folded into JSON
the host's services, the session and the recent dispatches); then the reply through the pane log's
append (on PostgreSQL one statement: the room's sequence, the pane's tail under its lock, the
insert and the room's memory as locked; on SQLite the bump, which reads the tail and the memory,
and the insert); the run's finish (the stale-run check), the watch re-armed and the model call
INSERTed (a changed memory adds its ``UPDATE``), on PostgreSQL one statement sent at the commit
(``Db.defer``). No separate sequence bump and no tail reads."""
DISTIL_RUN_BUDGET = {"postgresql": 7, "sqlite": 7}
"""Distil's run beside it: its claim as above; the memory lease's grant, one upsert that also reads
the room's head under the lease (its memory as the lease's previous holder left it, the room's kind
and model picks, the offer's stage); the pane's read in one statement (participants with their
accounts, the session, the recent dispatches); then the fenced write: the lease's release (one
statement: the fencing check, the release, the room's row lock and its memory), the held sends
(firewall F6, read under that lock), the run's finish (the stale-run check) and the model call
INSERTed with any flags in one flush. A changed memory adds its ``UPDATE``. On PostgreSQL the
finish, the memory and the model call are one statement sent at the commit, which also reads back
the finish's check (``Db.defer``)."""


def _polls(statement: str) -> bool:
    text = " ".join(statement.split())
    return text.startswith(
        (
            "WITH candidate_oldest_queued AS ",  # a claim's candidate and pane lock (PG)
            "SELECT count(agent_runs.id)",
            "UPDATE agent_runs SET status=?, attempts=(agent_runs.attempts",  # a claim (SQLite)
            "UPDATE agent_runs SET status=$1::VARCHAR, attempts=(agent_runs.attempts",
        )
    )


def _show(label: str, seen: list[str]) -> None:
    print(f"\n{label}: {len(seen)} statements")
    for statement in seen:
        print("  " + " ".join(statement.split())[:120])


async def test_post_message_runs_a_pinned_number_of_statements(
    server: Server, engine: AsyncEngine, count_statements: Callable[[], Any]
) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    visitor = server.client()
    room_id = (await open_room(visitor, "devraman"))["room"]["id"]
    await post(visitor, room_id, "warm-up")  # first post also stamps first_spoke_at

    with count_statements() as seen:
        await post(visitor, room_id, "Hi, we'd like two sponsored posts in March.")

    _show("postMessage", list(seen))
    assert any("INSERT INTO messages" in s for s in seen)  # it really wrote the message
    assert len(seen) <= POST_MESSAGE_BUDGET[engine.dialect.name]


async def test_a_turn_runs_a_pinned_number_of_statements(
    agent_server: Server, count_statements: Callable[[], Any]
) -> None:
    host = agent_server.client()
    await sign_up(host, "devraman", "Dev Raman")
    visitor = agent_server.client()
    room_id = (await open_room(visitor, "devraman"))["room"]["id"]
    await post(visitor, room_id, "Hello there")
    await agent_server.settle()

    with count_statements() as seen:
        await post(visitor, room_id, "What would one sponsored post cost?")
        await agent_server.settle()

    work = [s for s in seen if not _polls(s)]
    _show("postMessage + its turn (without queue polls)", work)
    assert sum("INSERT INTO messages" in s for s in work) >= 2  # the post and the agent's reply
    assert len(work) <= TURN_BUDGET[agent_server.engine.dialect.name]


async def test_each_run_of_a_turn_runs_a_pinned_number_of_statements(
    server: Server, count_statements: Callable[[], Any]
) -> None:
    """The runs driven one at a time (no workers: ``run_once``), so each run's count includes
    its own claim and nothing of another run or of a poll."""
    runner = server.runner
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    visitor = server.client()
    room_id = (await open_room(visitor, "devraman"))["room"]["id"]
    await post(visitor, room_id, "Hello there")
    while await runner.run_once():  # the first turn, and the first (due) sweeps
        pass
    await post(visitor, room_id, "What would one sponsored post cost?")

    runs: dict[str, list[str]] = {}
    for _ in range(2):
        with count_statements() as seen:
            assert await runner.run_once()
        work = list(seen)
        replied = any("INSERT INTO messages" in s for s in work)
        runs["persona" if replied else "distil"] = work
    assert not await runner.run_once()

    for agent, work in runs.items():
        _show(f"{agent} run", work)
    assert set(runs) == {"persona", "distil"}
    dialect = server.engine.dialect.name
    assert len(runs["persona"]) <= PERSONA_RUN_BUDGET[dialect]
    assert len(runs["distil"]) <= DISTIL_RUN_BUDGET[dialect]
