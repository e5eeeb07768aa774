"""Arvist promotes what a room settled into each bound participant's durable document
(seed 002 layer 4): the host's closed deal reaches the next room, the brand's document gets
nothing of the host's, neither run sees what its perspective may not, scripted and demo rooms
write nothing, and Arvist racing a home-room Distil loses no write.

In production the quiet chain's curator window (``jobs/curator.arvist_step``) queues the runs
``curator_runs`` builds; most tests here queue the same runs at once through
``enqueue_arvist_for_room`` rather than waiting out the Guard's window first. The scripted and
demo test goes through the watch itself (tests/support/watches.py ``quiet``), as does
tests/jobs/test_watches.py for a live room."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from dealroom.agents.models.base import AgentName, Chunk, Generation, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.jobs.arvist import enqueue_arvist_for_room
from dealroom.persistence.db import Db
from dealroom.persistence.models import AccountMemory, AgentRun, MemoryChange, Participant, Room
from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up
from tests.support.offers import APPROVE, PAY, negotiate_to_offer, settle
from tests.support.recording import (
    RecordingClient,
    canary,
    everything_sent,
    found_in,
    room_memory,
    write_room_memory,
)
from tests.support.turns import HOME, RULES, Deal
from tests.support.watches import quiet, watch_of


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


async def durable(db: Db, account_id: str) -> AccountMemory:
    try:
        row = await db.scalar(
            select(AccountMemory).where(AccountMemory.account_id == uuid.UUID(account_id))
        )
        assert row is not None
        return row
    finally:
        await db.close()


async def curate(server: Server, db: Db, room_id: str) -> list[AgentRun]:
    """The runs the curator window queues once the room went quiet, queued now."""
    try:
        room = await db.get(Room, uuid.UUID(room_id))
        assert room is not None
        runs = await enqueue_arvist_for_room(db, room, server.clock.now())
        await db.commit()
    finally:
        await db.close()
    server.runner.wake()
    await server.settle()
    return runs


async def runs_of(db: Db, room_id: str, agent: str) -> list[AgentRun]:
    try:
        return list(
            await db.scalars(
                select(AgentRun).where(
                    AgentRun.room_id == uuid.UUID(room_id), AgentRun.agent == agent
                )
            )
        )
    finally:
        await db.close()


async def signed_in_deal(server: Server) -> tuple[Deal, str, str]:
    host = server.client()
    host_id = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, RULES)
    await settle(server)
    brand = server.client()
    brand_id = (await sign_up(brand, "acme", "Mara Ellison"))["account"]["id"]
    room_id = (await open_room(brand, "devraman"))["room"]["id"]
    return Deal(host, brand, home_id, room_id), host_id, brand_id


async def test_a_paid_deal_reaches_the_next_room_and_nothing_of_the_host_reaches_the_brand(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    server = agent_server
    d, host_id, brand_id = await signed_in_deal(server)
    # Canaries in every private part of the host's side of the room, and its pane.
    memory = await room_memory(db, d.room_id)
    private = canary("host-private-term")
    memory["host"]["private_terms"] = [private]
    await write_room_memory(db, d.room_id, memory)
    pane_secret = canary("host-pane")
    await post(d.host, d.room_id, f"Note to self: {pane_secret}")
    await settle(server)
    await post(d.visitor, d.room_id, "Hi, I'm Mara Ellison from Acme.")
    await settle(server)
    offer_id = await negotiate_to_offer(server, d)
    await d.visitor.query(APPROVE, {"offerId": offer_id, "version": None})
    await d.host.query(APPROVE, {"offerId": offer_id, "version": None})
    paid = await d.visitor.query(PAY, {"offerId": offer_id, "method": "test_card_ok", "key": "k1"})
    assert paid["payOffer"]["offer"]["stage"] == "BOOKED_PAYMENT_HELD"
    await settle(server)
    host_before = await durable(db, host_id)
    model.requests.clear()

    runs = await curate(server, db, d.room_id)
    assert len(runs) == 2  # one per bound participant

    host_doc = (await durable(db, host_id)).document
    deals = host_doc["deals"]
    assert len(deals) == 1
    (deal,) = deals.values()
    assert deal["fee"] == "8000.00 USD"  # as the offers row holds it
    assert deal["counterparty"] == "@acme"
    assert "sponsored" in deal["deliverables"].lower()
    assert deal["date"] == server.clock.now().date().isoformat()
    assert host_doc["rates"] == host_before.document["rates"]  # nothing else moved
    # the host's own, to its own document, as data (D8, memory M12)
    assert {"text": private, "source": None} in host_doc["private_terms"]

    brand_doc = (await durable(db, brand_id)).document
    assert brand_doc.get("company") == "Acme"  # the brand's own fact from its own pane
    sent = json.dumps(brand_doc)
    for host_fact in (private, pane_secret, "6000", "8000", "alcohol", "Dev Raman", "7500"):
        assert host_fact not in sent, host_fact
    assert "deals" not in brand_doc
    assert "rates" not in brand_doc

    arvists = [r for r in model.requests if r.agent is AgentName.ARVIST]
    by_pane = {r.context["pane"]: r for r in arvists}
    assert set(by_pane) == {"host", "visitor"}
    # Perspective boundary: the brand's run never sees the host branch or the host pane...
    brand_request = everything_sent(by_pane["visitor"])
    assert not found_in(brand_request, {private, pane_secret, "6000 USD", "alcohol"})
    assert by_pane["visitor"].context["closed_deals"] == []
    # ...while the host's run carries them (the canaries were really planted).
    assert found_in(everything_sent(by_pane["host"]), {private, pane_secret}) == {
        private,
        pane_secret,
    }

    # The next room starts from the closed deal.
    other = server.client()
    await sign_up(other, "globex", "Hank Scorpio")
    next_room = (await open_room(other, "devraman"))["room"]["id"]
    assert (await room_memory(db, next_room))["host"]["deals"] == deals


async def test_a_brand_arvist_run_never_sees_the_host_branch_nor_writes_another_profile(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    server = agent_server
    d, _host_id, brand_id = await signed_in_deal(server)
    secret = canary("floor")
    memory = await room_memory(db, d.room_id)
    memory["host"]["limits"] = {"sponsored_post": {"floor": secret, "currency": "USD"}}
    plans = {"host": canary("plan"), "visitor": canary("visitor-plan")}
    memory["plans"] = plans
    await write_room_memory(db, d.room_id, memory)
    line = canary("host-line")
    await post(d.host, d.room_id, f"Remember: {line}")
    await post(d.visitor, d.room_id, "Hi, I'm Mara Ellison from Acme.")
    await settle(server)

    # A model that tries to write the host's profile into the brand's document.
    def hostile(request: ModelRequest) -> Any:
        from dealroom.agents.arvist import ArvistOutput, DurableChange

        if request.agent is AgentName.ARVIST and request.context["pane"] == "visitor":
            return ArvistOutput(
                changes=[
                    DurableChange(op="set", path="host.limits.x", value="stolen"),
                    DurableChange(op="set", path="visitor.name", value="stolen"),
                    DurableChange(op="set", path="goals.new-offer", value="met"),
                    DurableChange(op="append", path="claims", value="stolen"),
                    DurableChange(op="set", path="style", value="brief"),
                ]
            )
        return None

    model.script = hostile
    model.requests.clear()
    await curate(server, db, d.room_id)
    request = next(
        r for r in model.requests if r.agent is AgentName.ARVIST and r.context["pane"] == "visitor"
    )
    text = everything_sent(request)
    assert not found_in(text, {secret, line, *plans.values()}), text
    assert set(request.context) >= {"branch", "session", "durable"}
    assert "host" not in request.context["branch"]
    brand_doc = (await durable(db, brand_id)).document
    assert brand_doc["style"] == "brief"  # D2 kept what is the brand's own
    assert set(brand_doc) <= {"style", "name", "company"}
    runs = [r for r in await runs_of(db, d.room_id, "arvist") if r.error]
    assert any("host.limits.x" in (r.error or "") for r in runs)


async def test_scripted_and_demo_rooms_never_write_durable_memory(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    host = server.client()
    host_id = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
    demo = (await open_room(host, "devraman"))["room"]
    assert demo["mode"] == "DEMO"
    await post(host, demo["id"], "My fee for a sponsored post is $9,000.")
    await settle(server)
    brand = server.client()
    await sign_up(brand, "acme", "Mara Ellison")
    scripted = (await open_room(brand, "devraman"))["room"]["id"]
    try:
        await db.execute(update(Room).where(Room.id == uuid.UUID(scripted)).values(mode="scripted"))
        await db.commit()
    finally:
        await db.close()
    await post(brand, scripted, "Hi, I'm Mara Ellison from Acme. A sponsored post for $5,000?")
    await settle(server)
    before = await durable(db, host_id)
    # The production path: both rooms go quiet, the Guard's window, then the curator's.
    await quiet(server)
    await quiet(server, timedelta(seconds=600))
    for room_id, mode in ((demo["id"], "demo"), (scripted, "scripted")):
        assert (await watch_of(db, room_id)).step == "done"  # the curator window fired
        recorded = await runs_of(db, room_id, "arvist")
        # one run, in the host's pane, recorded done with no writes and why
        assert [(r.status, r.no_op, r.error) for r in recorded] == [
            ("done", True, f"skipped: {mode} room never writes durable memory")
        ]
        assert recorded[0].watch_generation is not None
    after = await durable(db, host_id)
    assert (after.version, after.document) == (before.version, before.document)
    try:
        changes = list(await db.scalars(select(MemoryChange)))
    finally:
        await db.close()
    assert changes == []
    # A scripted room is never merged either (D5), even when the host's memory moves on.
    try:
        await db.execute(
            update(AccountMemory)
            .where(AccountMemory.account_id == uuid.UUID(host_id))
            .values(document={"rates": {"x": {"ask": "1 USD"}}}, version=AccountMemory.version + 1)
        )
        await db.commit()
    finally:
        await db.close()
    await post(brand, scripted, "Still there?")
    await server.runner.sweep()
    await settle(server)
    assert "x" not in (await room_memory(db, scripted)).get("host", {}).get("rates", {})


class GatedClient:
    """The offline engine, except that Arvist calls wait for the test to open the gate: a slow
    curator, so a home-room Distil can land while it is thinking."""

    engine = "offline"

    def __init__(self) -> None:
        self.inner = OfflineClient()
        self.gate = asyncio.Event()
        self.waiting = 0

    async def generate(self, request: ModelRequest) -> Generation:
        if request.agent is AgentName.ARVIST:
            self.waiting += 1
            await self.gate.wait()
        return await self.inner.generate(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        async for chunk in self.inner.stream(request):
            yield chunk

    async def close(self) -> None:
        return None


async def _until(predicate: Any, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.fixture
def gated() -> GatedClient:
    return GatedClient()


async def test_arvist_racing_a_home_distil_loses_no_write(
    agent_settings: Any, engine: Any, broker: Any, clock: Any, gated: GatedClient, db: Db
) -> None:
    from tests.conftest import serving

    settings = agent_settings.model_copy(update={"workers": 3})
    async with serving(settings, engine, broker, clock, gated) as server:
        host = server.client()
        host_id = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
        home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
        await post(host, home_id, "My fee for a sponsored post is $8,000.")
        await _until(lambda: gated.waiting == 1)  # Arvist #1 read the room, is thinking
        await post(host, home_id, "I never work with alcohol brands.")
        # Distil #2 lands while Arvist #1 is still thinking: a second run must be queued.
        for _ in range(500):
            runs = await runs_of(db, home_id, "arvist")
            if len(runs) == 2:
                break
            await asyncio.sleep(0.02)
        assert len(await runs_of(db, home_id, "arvist")) == 2
        gated.gate.set()
        await server.settle()
        document = (await durable(db, host_id)).document
        assert document["rates"]["sponsored_post"]["ask"] == "8000 USD"
        assert "alcohol" in document["exclusions"]
        assert any("alcohol" in rule for rule in document["rules"])
        version = (await durable(db, host_id)).version
        assert version == 2  # two writes, none lost, none redone


async def test_two_arvist_runs_on_one_account_at_once_both_land(
    agent_settings: Any, engine: Any, broker: Any, clock: Any, gated: GatedClient, db: Db
) -> None:
    """The account row lock and the version check serialise two curators (a deal room's and
    the home room's) writing one document at the same moment."""
    from tests.conftest import serving

    settings = agent_settings.model_copy(update={"workers": 3})
    async with serving(settings, engine, broker, clock, gated) as server:
        host = server.client()
        host_id = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
        home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
        visitor = server.client()
        room_id = (await open_room(visitor, "devraman"))["room"]["id"]
        await write_room_memory(
            db, room_id, {"host": {"rules": ["no gambling brands"], "style": "brief"}}
        )
        await post(host, home_id, "My fee for a sponsored post is $8,000.")
        await _until(lambda: gated.waiting == 1)
        await curate_without_settling(server, db, room_id)
        await _until(lambda: gated.waiting == 2)
        gated.gate.set()
        await server.settle()
        row = await durable(db, host_id)
        assert row.document["rates"]["sponsored_post"]["ask"] == "8000 USD"
        assert row.document["rules"] == ["no gambling brands"]
        assert row.document["style"] == "brief"
        assert row.version == 2
        try:
            versions = sorted(
                await db.scalars(
                    select(MemoryChange.version).where(
                        MemoryChange.account_id == uuid.UUID(host_id)
                    )
                )
            )
        finally:
            await db.close()
        # Three leaves in two writes, one after the other (either may have gone first).
        assert len(versions) == 3
        assert sorted(set(versions)) == [1, 2]


async def curate_without_settling(server: Server, db: Db, room_id: str) -> None:
    try:
        room = await db.get(Room, uuid.UUID(room_id))
        assert room is not None
        await enqueue_arvist_for_room(db, room, server.clock.now())
        await db.commit()
    finally:
        await db.close()
    server.runner.wake()


async def test_a_stale_room_never_overwrites_a_newer_durable_fact(
    agent_server: Server, db: Db
) -> None:
    """D3: the deal room still says the old floor (it has had no turn since the host taught a
    new one); its curator must not promote the old floor back over the new."""
    server = agent_server
    server.runner._sweeps.clear()  # no merge may happen before the curator runs
    d, host_id, _brand_id = await signed_in_deal(server)
    assert (await room_memory(db, d.room_id))["host"]["limits"]["sponsored_post"]["floor"] == (
        "6000"
    )
    await post(d.host, d.home_id, "For a sponsored post, never below $6,500.")
    await settle(server)
    assert (await durable(db, host_id)).document["limits"]["sponsored_post"]["floor"] == "6500"
    memory = await room_memory(db, d.room_id)
    memory["host"]["style"] = "brief replies"  # something the room did learn
    await write_room_memory(db, d.room_id, memory)
    await curate(server, db, d.room_id)
    document = (await durable(db, host_id)).document
    assert document["limits"]["sponsored_post"]["floor"] == "6500"
    assert document["style"] == "brief replies"
    runs = [r for r in await runs_of(db, d.room_id, "arvist") if r.error]
    assert any("the account changed it since" in (r.error or "") for r in runs)


async def test_a_run_that_finds_nothing_new_writes_nothing(agent_server: Server, db: Db) -> None:
    """D1: the curator's usual verdict is "nothing new": no version, no date, no history."""
    server = agent_server
    d, host_id, _brand_id = await signed_in_deal(server)
    before = await durable(db, host_id)
    try:
        rows_before = list(await db.scalars(select(MemoryChange.id)))
    finally:
        await db.close()
    await curate(server, db, d.home_id)  # the home sitting was promoted already
    after = await durable(db, host_id)
    assert (after.version, after.document, after.updated_at) == (
        before.version,
        before.document,
        before.updated_at,
    )
    try:
        assert list(await db.scalars(select(MemoryChange.id))) == rows_before
    finally:
        await db.close()
    newest = sorted(await runs_of(db, d.home_id, "arvist"), key=lambda r: r.created_at)[-1]
    assert (newest.status, newest.no_op) == ("done", True)


async def test_a_sibling_room_after_a_booking_seeds_the_host_like_any_new_room(
    agent_server: Server, db: Db
) -> None:
    """Item 5: new terms after the booking open a sibling room whose host branch comes from the
    seeding path (durable, or the home branch when newer), never a copy of the old room's."""
    from tests.e2e.test_offers import agree_until_met, approved

    server = agent_server
    d, host_id, _brand_id = await signed_in_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    await approved(d.visitor, offer_id)
    await approved(d.host, offer_id)
    old = await room_memory(db, d.room_id)
    sitting_only = canary("this-sitting-only")
    old["host"]["notes"] = sitting_only  # learnt in this room, never promoted
    await write_room_memory(db, d.room_id, old)
    await post(d.visitor, d.room_id, "Actually, could we do $7,700 for the sponsored post?")
    await agree_until_met(server, db, d)
    try:
        siblings = list(
            await db.scalars(
                select(Room).where(Room.id != uuid.UUID(d.room_id), Room.kind == "deal")
            )
        )
    finally:
        await db.close()
    assert len(siblings) == 1
    sibling = siblings[0]
    current = await durable(db, host_id)
    home = await room_memory(db, d.home_id)
    # the seeding path: the durable document, or the home branch when that is newer
    assert sibling.memory["host"] in (current.document, home["host"])
    assert sitting_only not in json.dumps(sibling.memory)
    assert sibling.memory["deal"]["continuesFromRoom"] == d.room_id
    try:
        seat = await db.scalar(
            select(Participant).where(Participant.room_id == sibling.id, Participant.key == "host")
        )
    finally:
        await db.close()
    assert seat is not None
    assert seat.last_merged_memory_version == current.version


async def test_a_same_value_write_on_a_later_day_keeps_the_leaf_date(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """Leaf dates are written by code when a value changes (D1): a model that restates a leaf
    as it already is, days later, beside one real change, moves only the changed leaf's date
    and history."""
    server = agent_server
    host = server.client()
    host_id = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, RULES)
    await settle(server)
    query = (
        "{ me { memory { version leaves { path value changedOn } }"
        " memoryHistory(first: 50) { edges { node { path newValue } } } } }"
    )
    before = (await host.query(query))["me"]
    dates = {leaf["path"]: leaf["changedOn"] for leaf in before["memory"]["leaves"]}
    assert dates["rates.sponsored_post.ask"] == "2026-01-01"
    server.clock.advance(timedelta(days=3))

    def restating(request: ModelRequest) -> Any:
        from dealroom.agents.arvist import ArvistOutput, DurableChange

        if request.agent is AgentName.ARVIST:
            return ArvistOutput(
                changes=[
                    DurableChange(op="set", path="rates.sponsored_post.ask", value="8000 USD"),
                    DurableChange(op="set", path="style", value="brief"),
                ]
            )
        return None

    model.script = restating
    await curate(server, db, home_id)
    after = (await host.query(query))["me"]
    leaves = {leaf["path"]: leaf for leaf in after["memory"]["leaves"]}
    assert leaves["rates.sponsored_post.ask"] == {
        "path": "rates.sponsored_post.ask",
        "value": "8000 USD",
        "changedOn": "2026-01-01",  # restated, not changed
    }
    assert leaves["style"]["changedOn"] == "2026-01-04"
    for path, date in dates.items():
        if path != "style":
            assert leaves[path]["changedOn"] == date, path
    assert after["memory"]["version"] == before["memory"]["version"] + 1
    new = after["memoryHistory"]["edges"][: -len(before["memoryHistory"]["edges"])]
    assert [e["node"] for e in new] == [{"path": "style", "newValue": "brief"}]
    [run] = [r for r in await runs_of(db, home_id, "arvist") if r.created_at.day == 4]
    assert (run.status, run.no_op) == ("done", False)
    assert (await durable(db, host_id)).document["style"] == "brief"
