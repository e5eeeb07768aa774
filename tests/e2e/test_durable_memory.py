"""What a host teaches once carries everywhere: the home room makes it durable at once (Arvist
after Distil), a deal room opened long before merges it at its next turn (AccUpdate, announced in
the host's pane only) and negotiates with it, and the owner reads the document with leaf dates and
its history."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from dealroom.domain.cursors import event_cursor
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import AccountMemory, AgentRun, MemoryChange, Participant
from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up, subscribe, ws_init_for
from tests.support.turns import HOME, memory, messages_in, system_kinds

OLD_RULES = "My fee for a sponsored post is $8,000, never below $4,000."
NEW_FLOOR = "For a sponsored post, never below $6,000."
SYSTEM_LINES = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    __typename ... on SystemLine { cursor kind message { body systemKind } }
  }
}
"""
MEMORY = """
{ me { memory { document version updatedAt leaves { path value changedOn } }
       memoryHistory(first: 50) { edges { cursor node {
         id path oldValue newValue version agent roomId runId revertsId createdAt } }
         hasNextPage endCursor } } }
"""


async def durable_of(db: Db, handle_account: str) -> AccountMemory:
    try:
        row = await db.scalar(
            select(AccountMemory).where(AccountMemory.account_id == uuid.UUID(handle_account))
        )
        assert row is not None
        return row
    finally:
        await db.close()


async def host_teaching(server: Server) -> tuple[Any, str, str]:
    host = server.client()
    account_id = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, OLD_RULES)
    await server.settle()
    return host, account_id, home_id


async def test_a_home_floor_is_durable_within_one_worker_cycle(
    agent_server: Server, db: Db
) -> None:
    host, account_id, home_id = await host_teaching(agent_server)
    row = await durable_of(db, account_id)
    assert row.document["rates"]["sponsored_post"] == {"ask": "8000 USD"}
    assert row.document["limits"]["sponsored_post"] == {"floor": "4000", "currency": "USD"}
    await post(host, home_id, NEW_FLOOR)
    await agent_server.settle()  # one cycle: persona, Distil, then the Arvist it queued
    row = await durable_of(db, account_id)
    assert row.document["limits"]["sponsored_post"]["floor"] == "6000"
    data = (await host.query(MEMORY))["me"]
    leaves = {leaf["path"]: leaf for leaf in data["memory"]["leaves"]}
    assert leaves["limits.sponsored_post.floor"]["value"] == "6000"
    assert leaves["limits.sponsored_post.floor"]["changedOn"] == "2026-01-01"
    history = [e["node"] for e in data["memoryHistory"]["edges"]]
    floor = [h for h in history if h["path"] == "limits.sponsored_post.floor"]
    assert [(h["oldValue"], h["newValue"]) for h in floor] == [
        ("4000", "6000"),
        (None, "4000"),
    ]
    assert floor[0]["roomId"] == home_id
    assert floor[0]["agent"] == "arvist"
    # The home room itself is not due a merge of what it just taught.
    try:
        home_host = await db.scalar(
            select(Participant).where(Participant.room_id == uuid.UUID(home_id))
        )
        assert home_host is not None
        assert home_host.last_merged_memory_version == data["memory"]["version"]
    finally:
        await db.close()
    bodies = [m.body for m in await messages_in(db, home_id, "host")]
    assert not any(b.startswith("Standing knowledge merged") for b in bodies)


async def test_a_week_old_deal_room_merges_the_new_floor_at_its_next_turn(
    agent_server: Server, db: Db
) -> None:
    host, _account_id, home_id = await host_teaching(agent_server)
    visitor = agent_server.client()
    # a signed-in brand: a guest's sends would be held by the login gate
    await sign_up(visitor, "acme", "Mara Ellison")
    room_id = (await open_room(visitor, "devraman"))["room"]["id"]
    seeded = await memory(db, room_id)
    assert seeded["host"]["limits"]["sponsored_post"]["floor"] == "4000"
    agent_server.clock.advance(timedelta(days=7))
    # Only the turn may merge in this test: the periodic sweep is the other path.
    sweeps = list(agent_server.runner._sweeps)
    agent_server.runner._sweeps.clear()
    try:
        await post(host, home_id, NEW_FLOOR)
        await agent_server.settle()
        # nothing merged yet: the room has had no turn
        room_host = (await memory(db, room_id))["host"]
        assert room_host["limits"]["sponsored_post"]["floor"] == "4000"
        # The brand opens low, then moves up: the host's side holds at its hold point, which
        # only the new floor explains. The ask is $8,000 under either floor; with the $6,000
        # floor the hold point is $7,000 and $6,500 is not settled (NP6, NP7); with the old
        # $4,000 floor $6,500 is above the hold point and would settle.
        for proposal in ("$3,000", "$6,500"):
            await post(visitor, room_id, f"Could you do a sponsored post for {proposal}?")
            await agent_server.settle()
    finally:
        agent_server.runner._sweeps[:] = sweeps
    visitor_lines = await messages_in(db, room_id, "visitor")
    visitor_pane = [m.body for m in visitor_lines]
    counters = [
        amount
        for m in visitor_lines
        if m.author_kind == AuthorKind.AGENT.value
        for amount in ("$8,000", "$7,700", "$7,350", "$7,000", "$6,700", "$6,500", "$6,000")
        if amount in m.body
    ]
    assert counters == ["$8,000", "$7,000"], visitor_pane
    merged = await memory(db, room_id)
    assert merged["host"]["rates"]["sponsored_post"] == {"ask": "8000 USD"}
    assert merged["host"]["limits"]["sponsored_post"]["floor"] == "6000"
    host_pane = await messages_in(db, room_id, "host")
    lines = [m for m in host_pane if m.author_kind == AuthorKind.SYSTEM.value]
    # one line: the first turn merged, the one after it had nothing more to merge
    assert [m.body for m in lines] == [
        "Standing knowledge merged from your profile: your limits (sponsored post floor): 6000."
    ]
    # Canaries: the brand's pane never sees the merge line or the value.
    for body in visitor_pane:
        assert "Standing knowledge" not in body
        assert "6,000" not in body
        assert "6000" not in body
    # The line is a MemoryMerged SystemLine for clients; the visitor cannot read the host pane.
    assert await system_kinds(host, room_id) == ["MEMORY_MERGED"]
    denied = await visitor.error_codes(
        "query($id: ID!) { room(id: $id) { pane(seat: HOST) { seat } } }", {"id": room_id}
    )
    assert denied == ["FORBIDDEN"]


async def test_the_sweep_merges_rooms_with_no_turn_coming(agent_server: Server, db: Db) -> None:
    host, _account_id, home_id = await host_teaching(agent_server)
    visitor = agent_server.client()
    # a signed-in brand: a guest's sends would be held by the login gate
    await sign_up(visitor, "acme", "Mara Ellison")
    room_id = (await open_room(visitor, "devraman"))["room"]["id"]
    await post(host, home_id, NEW_FLOOR)
    await agent_server.settle()
    variables = {"roomId": room_id, "seat": "HOST", "after": event_cursor(0)}
    async with subscribe(
        agent_server.ws_url, SYSTEM_LINES, variables, init=ws_init_for(host)
    ) as sub:
        agent_server.clock.advance(timedelta(seconds=6))  # the sweep's period
        await agent_server.runner.sweep()
        await agent_server.settle()
        event = await sub.event(timeout=10)  # live, to the host's pane only
    assert event["__typename"] == "SystemLine"
    assert event["kind"] == "MEMORY_MERGED"
    assert event["message"]["systemKind"] == "MEMORY_MERGED"
    assert (await memory(db, room_id))["host"]["limits"]["sponsored_post"]["floor"] == "6000"
    try:
        runs = list(
            await db.scalars(
                select(AgentRun).where(
                    AgentRun.room_id == uuid.UUID(room_id), AgentRun.agent == "acc_update"
                )
            )
        )
    finally:
        await db.close()
    assert [(r.status, r.participant_id is not None) for r in runs] == [("done", True)]
    host_lines = [m.body for m in await messages_in(db, room_id, "host")]
    assert host_lines == [
        "Standing knowledge merged from your profile: your limits (sponsored post floor): 6000."
    ]
    assert await messages_in(db, room_id, "visitor") == []


async def test_history_and_revert_are_exact(agent_server: Server, db: Db) -> None:
    host, account_id, home_id = await host_teaching(agent_server)
    await post(host, home_id, NEW_FLOOR)
    await agent_server.settle()
    data = (await host.query(MEMORY))["me"]
    before = data["memory"]
    change = next(
        e["node"]
        for e in data["memoryHistory"]["edges"]
        if e["node"]["path"] == "limits.sponsored_post.floor" and e["node"]["newValue"] == "6000"
    )
    revert = (
        "mutation($id: ID!) { revertMemoryChange(id: $id) {"
        " id path oldValue newValue agent revertsId version } }"
    )
    assert await host.error_codes(revert, {"id": change["id"]}) == ["NOT_FOUND"]
    operator = agent_server.client()
    await sign_up(operator, "ops", "Ops")
    await _make_operator(db, "ops")
    agent_server.clock.advance(timedelta(days=3))
    reverted = (await operator.query(revert, {"id": change["id"]}))["revertMemoryChange"]
    assert reverted == {
        "id": reverted["id"],
        "path": "limits.sponsored_post.floor",
        "oldValue": "6000",
        "newValue": "4000",
        "agent": "operator",
        "revertsId": change["id"],
        "version": before["version"] + 1,
    }
    after = (await host.query(MEMORY))["me"]
    assert after["memory"]["document"]["limits"]["sponsored_post"]["floor"] == "4000"
    dates = {leaf["path"]: leaf["changedOn"] for leaf in after["memory"]["leaves"]}
    assert dates["limits.sponsored_post.floor"] == "2026-01-04"  # the revert changed it
    assert dates["rates.sponsored_post.ask"] == "2026-01-01"  # untouched leaves keep theirs
    newest = after["memoryHistory"]["edges"][0]["node"]
    assert newest["id"] == reverted["id"]
    # Reverting again: the leaf no longer holds what that change wrote.
    assert await operator.error_codes(revert, {"id": change["id"]}) == ["CONFLICT"]
    # Paging is exact: newest first, no row twice, none missing.
    seen: list[str] = []
    cursor = None
    while True:
        page = (
            await host.query(
                "query($after: String) { me { memoryHistory(first: 2, after: $after) {"
                " edges { cursor node { id } } hasNextPage endCursor } } }",
                {"after": cursor},
            )
        )["me"]["memoryHistory"]
        seen += [e["node"]["id"] for e in page["edges"]]
        if not page["hasNextPage"]:
            break
        cursor = page["endCursor"]
    assert seen == [e["node"]["id"] for e in after["memoryHistory"]["edges"]]
    try:
        rows = len(
            list(
                await db.scalars(
                    select(MemoryChange.id).where(MemoryChange.account_id == uuid.UUID(account_id))
                )
            )
        )
    finally:
        await db.close()
    assert rows == len(seen)
    assert json.dumps(after["memory"]["document"])  # a plain document


async def _make_operator(db: Db, handle: str) -> None:
    from sqlalchemy import update

    from dealroom.persistence.models import Account

    await db.execute(update(Account).where(Account.handle == handle).values(is_operator=True))
    await db.commit()
