"""The re-check registry (``services/live/rechecks.py``): one round reads every held credential and
room in a fixed number of statements, and wakes only the watches whose standing changed."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.services.accounts.identity import Credentials
from dealroom.services.accounts.service import revoke_manager
from dealroom.services.live.rechecks import JUDGED_AT_ONCE, Held, Outcome, Rechecks, Watch
from tests.conftest import Server
from tests.support.graphql import open_room, sign_up
from tests.support.rooms import grant

READS = 3
"""The sessions' liveness, the act-as edges, the rooms' seat bindings: one ``IN`` each."""


async def _held(server: Server, db: Db, rooms: int) -> list[Held]:
    """Every way of holding a pane: the host's session, an agency acting as the host, each
    room's guest key; over ``rooms`` rooms, both panes."""
    host = server.client()
    host_token = (await sign_up(host, "mara", "Mara Ellison"))["token"]
    agency = server.client()
    agency_token = (await sign_up(agency, "agency", "Agency"))["token"]
    await grant(db, "agency", "mara")
    talent = (await host.query("{ me { id } }"))["me"]["id"]
    held: list[Held] = []
    for _ in range(rooms):
        opened = await open_room(server.client(), "mara")
        room_id = uuid.UUID(opened["room"]["id"])
        for presented, panes in (
            (Credentials(token=host_token), (Seat.HOST, Seat.VISITOR)),
            (Credentials(token=agency_token, act_as=talent), (Seat.HOST, Seat.VISITOR)),
            (Credentials(guest_key=opened["guestKey"]), (Seat.VISITOR,)),
        ):
            for pane in panes:
                held.append(Held.of(presented, field="paneEvents", room_id=room_id, pane=pane))
    return held


async def _round(rechecks: Rechecks, counting: Callable[[], Any]) -> int:
    with counting() as seen:
        await rechecks.round()
    return len(seen)


async def test_a_round_reads_in_the_same_statements_for_any_number_of_streams(
    server: Server, db: Db, count_statements: Callable[[], Any]
) -> None:
    held = await _held(server, db, rooms=4)
    rechecks = Rechecks(create_sessionmaker(server.engine), server.clock, every=60)
    few = [rechecks.hold(held[0]), rechecks.hold(held[2])]  # a session, an act-as
    assert await _round(rechecks, count_statements) == READS
    many = few + [rechecks.hold(h) for h in held for _ in range(5)]  # 100 streams
    assert await _round(rechecks, count_statements) == READS
    assert not any(watch.woken.done() for watch in many)


async def test_a_revoked_edge_wakes_only_the_streams_acting_through_it(
    server: Server, db: Db
) -> None:
    held = await _held(server, db, rooms=2)
    rechecks = Rechecks(create_sessionmaker(server.engine), server.clock, every=60)
    watches: list[Watch] = [rechecks.hold(h) for h in held]
    await rechecks.round()

    await revoke_manager(db, manager_handle="agency", managed_handle="mara")
    await db.commit()
    await rechecks.round()

    woken = {w.held for w in watches if w.woken.done()}
    assert woken == {h for h in held if h.act_as is not None}
    assert {w.woken.result() for w in watches if w.woken.done()} == {Outcome.CHANGED}
    # The woken streams re-run their own authorisation; a fresh watch is judged next round.
    assert rechecks.hold(next(iter(woken))) not in watches


async def test_a_round_lets_the_process_run_between_slices_of_watches(server: Server) -> None:
    """Every request and delivery of the process waits while a round judges: it yields after
    each ``JUDGED_AT_ONCE`` watches. Here every watch reads a room that does not exist, so
    each is woken; the first one's callback runs at the round's first yield."""
    rechecks = Rechecks(create_sessionmaker(server.engine), server.clock, every=60)
    watches = [
        rechecks.hold(
            Held.of(
                Credentials(guest_key=f"g_{uuid.uuid4().hex}"),
                field="paneEvents",
                room_id=uuid.uuid4(),
                pane=Seat.VISITOR,
            )
        )
        for _ in range(2 * JUDGED_AT_ONCE + 1)
    ]
    woken_by_the_first_turn: list[int] = []
    watches[0].woken.add_done_callback(
        lambda _: woken_by_the_first_turn.append(sum(w.woken.done() for w in watches))
    )
    await rechecks.round()
    assert woken_by_the_first_turn == [JUDGED_AT_ONCE]
    assert all(w.woken.result() is Outcome.CHANGED for w in watches)
