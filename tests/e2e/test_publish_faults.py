"""Pushes that survive Redis: the Redis connection is killed at the publish after a commit; every
subscriber, on every server process, still receives every event, and the run is done, not
failed."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import Chunk, Generation, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor, parse_event_cursor
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Message, OfferEvent, Participant
from dealroom.realtime.broker import HEARTBEAT_SECONDS
from dealroom.realtime.redis_broker import RedisBroker
from tests.conftest import Server, serving
from tests.support.backends import REDIS_FOR_BROKER_TESTS
from tests.support.clock import ManualClock
from tests.support.graphql import (
    PANE_EVENTS,
    Subscription,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)
from tests.support.offers import OFFER_STAGE, approve_as_read, negotiate_to_offer, offer_events
from tests.support.tcp_proxy import TcpProxy
from tests.support.turns import deal

T = TypeVar("T")


class GatedClient(OfflineClient):
    """The model edge, held at the gate: the test cuts Redis while the turn is composing."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def generate(self, request: ModelRequest) -> Generation:
        self.entered.set()
        await self.gate.wait()
        return await super().generate(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.entered.set()
        await self.gate.wait()
        async for chunk in super().stream(request):
            yield chunk


@contextlib.asynccontextmanager
async def redis_broker(url: str) -> AsyncIterator[RedisBroker]:
    broker = RedisBroker(url)
    await broker.start()
    try:
        yield broker
    finally:
        await broker.close()


IN_TIME = HEARTBEAT_SECONDS - 10
"""From the first cut to the last delivery: a subscriber idle for HEARTBEAT_SECONDS re-reads
the database anyway, which would hide a lost publish."""


async def _logged(logs: list[MutableMapping[str, Any]], event: str, within: float) -> bool:
    async with asyncio.timeout(within):
        while not any(entry["event"] == event for entry in logs):  # noqa: ASYNC110  # a log, not an event
            await asyncio.sleep(0.05)
    return True


async def test_a_publish_cut_off_after_commit_still_reaches_the_subscriber(
    settings: Settings, engine: AsyncEngine, clock: ManualClock, db: Db
) -> None:
    """Two servers: A runs the turn and reaches Redis through a proxy the test cuts at the
    publish after commit; the visitor watches on B, whose Redis link is healthy."""
    target = make_url(REDIS_FOR_BROKER_TESTS)
    proxy = TcpProxy(target.host or "127.0.0.1", target.port or 6379)
    port = await proxy.start()
    proxied = target.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    model = GatedClient()
    workers = settings.model_copy(update={"workers": 1, "worker_poll_seconds": 0.05})
    try:
        async with (
            redis_broker(proxied) as broker_a,
            redis_broker(REDIS_FOR_BROKER_TESTS) as broker_b,
            serving(workers, engine, broker_a, clock, model) as server_a,
            serving(settings, engine, broker_b, clock) as server_b,
        ):
            host = server_b.client()
            await sign_up(host, "mara", "Mara Ellison")
            guest = server_b.client()
            room_id = (await open_room(guest, "mara"))["room"]["id"]
            variables = {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)}
            async with subscribe(
                server_b.ws_url, PANE_EVENTS, variables, init=ws_init_for(guest)
            ) as sub:
                sent = await post(guest, room_id, "Can you do a post for $4,000?")
                assert (await sub.event(timeout=10))["message"]["id"] == sent["id"]
                await asyncio.wait_for(model.entered.wait(), 30)

                with structlog.testing.capture_logs() as logs:
                    # From the cut on, under the idle heartbeat, which would hide a lost publish.
                    async with asyncio.timeout(IN_TIME):
                        proxy.cut()  # every connection A holds to Redis dies, and every retry
                        model.gate.set()
                        # The reply is committed and its publish is refused: wait for the retry.
                        with contextlib.suppress(TimeoutError):
                            await _logged(logs, "publish_retry", within=10)
                        proxy.restore()

                        while True:
                            event = await sub.event(timeout=20)
                            if event["__typename"] == "MessageAdded":
                                break
                assert event["message"]["id"] != sent["id"]
                assert event["message"]["alignment"] == "LEFT"  # the agent's reply
                await server_a.settle()
                assert not [e for e in logs if e["event"] == "publish_gave_up"]
    finally:
        await proxy.close()

    runs = (await db.session.scalars(select(AgentRun))).all()
    statuses = {run.status for run in runs if run.agent == "persona"}
    assert statuses == {"done"}  # committed, so done, whatever the broker said


# --- every subscriber, on every process ----------------------------------------------------

STORED_PANE_EVENTS = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    __typename
    ... on MessageAdded { cursor message { id } }
    ... on SystemLine { cursor message { id } }
    ... on StageChanged { cursor offerId stage version }
  }
}
"""

Key = tuple[int, str, str]
"""(cursor, kind, what): a stored event as the database describes it."""


def key_of(event: dict[str, Any]) -> Key | None:
    """A delivered event's key; None for the events that are never stored (typing, deltas)."""
    if "stage" in event:
        stage = f"{event['offerId']}:{event['stage']}:{event['version']}"
        return parse_event_cursor(event["cursor"]), "stage", stage
    if "message" in event:
        return parse_event_cursor(event["cursor"]), "message", event["message"]["id"]
    return None


@dataclass
class Reader:
    """One subscriber, drained as events arrive; a test waits on what arrived."""

    name: str
    sub: Subscription
    root: str
    seen: list[Key] = field(default_factory=list)
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def run(self) -> None:
        while True:
            payload = await self.sub.next(timeout=3600)
            assert not payload.get("errors"), (self.name, payload)
            assert "data" in payload, (self.name, payload)
            key = key_of(payload["data"][self.root])
            if key is not None:
                async with self.arrived:
                    self.seen.append(key)
                    self.arrived.notify_all()

    async def until(self, last: int, deadline: float) -> None:
        """Until an event at ``last`` or later arrived, by the loop time ``deadline``."""
        within = deadline - asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(within), self.arrived:
                await self.arrived.wait_for(lambda: any(c >= last for c, _, _ in self.seen))
        except TimeoutError:
            raise AssertionError(f"{self.name}: nothing at {last} in time: {self.seen}") from None


async def stored_in_pane(db: Db, room_id: str, key: str) -> list[Key]:
    """A pane's stored events in cursor order: its messages and the room's stage changes."""
    room = uuid.UUID(room_id)
    try:
        messages = await db.scalars(
            select(Message)
            .join(Participant, Participant.id == Message.participant_id)
            .where(Message.room_id == room, Participant.key == key)
        )
        changes = await db.scalars(select(OfferEvent).where(OfferEvent.room_id == room))
    finally:
        await db.close()
    return sorted(
        [(m.seq, "message", str(m.id)) for m in messages]
        + [(e.seq, "stage", f"{e.offer_id}:{e.stage}:{e.version}") for e in changes]
    )


async def stored_for_offer(db: Db, offer_id: str) -> list[Key]:
    return [
        (e.seq, "stage", f"{e.offer_id}:{e.stage}:{e.version}")
        for e in await offer_events(db, offer_id)
    ]


def logged(logs: list[MutableMapping[str, Any]], event: str) -> int:
    return sum(entry["event"] == event for entry in logs)


CUT_BEYOND_NOTICE = 0.5
"""How long the link stays cut after A's publish was refused and A's pub/sub reader saw its
connection die: past the reader's first resubscribe (0.1 s), which must fail, and well within
the publish's retries (0.2 s, 1 s, 3 s)."""


async def through_a_cut(
    proxy: TcpProxy, logs: list[MutableMapping[str, Any]], action: Awaitable[T]
) -> T:
    """Cut A's Redis link, do ``action`` (whose commit publishes), restore the link once a
    publish was refused and A's subscriber connection lost (or after 2 s)."""
    before = logged(logs, "publish_retry"), logged(logs, "redis_broker_reconnect")
    proxy.cut()
    task = asyncio.ensure_future(action)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(2):
            while not (  # noqa: ASYNC110  # logs, not events
                logged(logs, "publish_retry") > before[0]
                and logged(logs, "redis_broker_reconnect") > before[1]
            ):
                await asyncio.sleep(0.02)
    await asyncio.sleep(CUT_BEYOND_NOTICE)  # the fault's length, not a wait for something
    proxy.restore()
    return await task


async def _released(model: GatedClient) -> None:
    model.gate.set()


async def test_every_subscriber_on_every_process_gets_every_event_after_a_cut_publish(
    settings: Settings, engine: AsyncEngine, clock: ManualClock, db: Db
) -> None:
    """Three servers over one database. A runs the requests and the agents and reaches Redis
    through a proxy the test cuts at the publish after each commit: the brand's approval (a
    request: a stage change in both panes and on the offer's stream) and the host's notice of
    it (a job: a line in the host pane). Readers of both panes, each seat's own, and of
    ``offerStage`` listen on B and C (healthy Redis links) and on A itself. Every reader
    receives every stored event once, in cursor order, within 20 s of the first cut (under the
    30 s idle heartbeat, which would otherwise hide a lost publish)."""
    target = make_url(REDIS_FOR_BROKER_TESTS)
    proxy = TcpProxy(target.host or "127.0.0.1", target.port or 6379)
    port = await proxy.start()
    proxied = target.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    model = GatedClient()
    model.gate.set()  # open while the deal is negotiated
    workers = settings.model_copy(update={"workers": 1, "worker_poll_seconds": 0.05})
    try:
        async with (
            redis_broker(proxied) as broker_a,
            redis_broker(REDIS_FOR_BROKER_TESTS) as broker_b,
            redis_broker(REDIS_FOR_BROKER_TESTS) as broker_c,
            serving(workers, engine, broker_a, clock, model) as a,
            serving(settings, engine, broker_b, clock) as b,
            serving(settings, engine, broker_c, clock) as c,
            contextlib.AsyncExitStack() as stack,
        ):
            d = await deal(a)
            offer_id = await negotiate_to_offer(a, d)
            from_start = event_cursor(0)

            async def reader(seat: str, server: Server, variables: dict[str, Any]) -> Reader:
                """``seat``'s own client reading a pane, or the offer's stages with no
                ``seat`` in ``variables``."""
                client = d.host if seat == "host" else d.visitor
                root, query = (
                    ("paneEvents", STORED_PANE_EVENTS)
                    if "seat" in variables
                    else ("offerStage", OFFER_STAGE)
                )
                sub = await stack.enter_async_context(
                    subscribe(server.ws_url, query, variables, init=ws_init_for(client))
                )
                where = {a.base_url: "A", b.base_url: "B", c.base_url: "C"}[server.base_url]
                read = Reader(f"{seat}'s {root} on {where}", sub, root)
                task = asyncio.create_task(read.run())
                stack.callback(task.cancel)
                return read

            def pane(seat: str) -> dict[str, Any]:
                return {"roomId": d.room_id, "seat": seat, "after": from_start}

            offer = {"offerId": offer_id, "after": from_start}
            panes = {
                "host pane on B": (await reader("host", b, pane("HOST")), "host"),
                "host pane on A": (await reader("host", a, pane("HOST")), "host"),
                "visitor pane on C": (await reader("visitor", c, pane("VISITOR")), "visitor"),
                "visitor pane on A": (await reader("visitor", a, pane("VISITOR")), "visitor"),
            }
            stages = {
                "host's offerStage on B": await reader("host", b, offer),
                "visitor's offerStage on C": await reader("visitor", c, offer),
            }

            async def expected() -> dict[str, list[Key]]:
                wanted = {
                    name: await stored_in_pane(db, d.room_id, key)
                    for name, (_, key) in panes.items()
                }
                for name in stages:
                    wanted[name] = await stored_for_offer(db, offer_id)
                return wanted

            readers = {name: read for name, (read, _) in panes.items()} | stages
            # Each has replayed the history and is live before the first cut.
            ready = asyncio.get_running_loop().time() + 30
            for name, events in (await expected()).items():
                await readers[name].until(events[-1][0], ready)

            with structlog.testing.capture_logs() as logs:
                deadline = asyncio.get_running_loop().time() + IN_TIME
                model.gate.clear()
                model.entered.clear()
                approved = await through_a_cut(proxy, logs, approve_as_read(d.visitor, offer_id))
                assert approved["stage"] == "BRAND_ACKED_AWAITING_TALENT"
                await asyncio.wait_for(model.entered.wait(), 30)  # the host's notice, composing
                await through_a_cut(proxy, logs, _released(model))
                await a.settle()

                wanted = await expected()
                for name, events in wanted.items():
                    await readers[name].until(events[-1][0], deadline)
                await asyncio.sleep(0.3)  # a duplicate would arrive now
                assert logged(logs, "publish_retry") >= 2, "each cut refused a publish"
            for name, events in wanted.items():
                assert readers[name].seen == events, name
            # What each cut refused is the last thing on its stream, so no later publish
            # could carry a reader past a lost one: the brand's approval ends the offer's
            # stream and the visitor's pane, the host's notice of it ends the host's pane.
            acked = wanted["host's offerStage on B"][-1]
            assert acked[2] == f"{offer_id}:BRAND_ACKED_AWAITING_TALENT:1"
            assert wanted["visitor pane on C"][-1] == acked
            notice = wanted["host pane on B"][-1]
            assert notice[1] == "message"
            assert notice[0] > acked[0]
            assert [e for e in logs if e["event"] == "publish_gave_up"] == []
    finally:
        await proxy.close()
