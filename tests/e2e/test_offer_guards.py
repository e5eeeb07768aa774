"""Guards on the written-offer flow that a client app cannot see by itself: what the payment
provider was asked to charge, a goal's effect firing once per flip, the ``prev`` links on the
broker's payloads, the shortcut's default idempotency key, and an agreement draft that invents a
term.

Subscribing clients hide a wrong ``prev`` (they fall back to a database replay), so the
``prev`` tests read the broker's payloads directly. Tests run their own agents (workers=0,
``settle``), so they can read the rows between one run and the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.agreement import AgreementOutput, AgreementSection
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import GoalRuling, PersonaOutput
from dealroom.config import Settings
from dealroom.domain.seats import AuthorKind, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, OfferEvent, Payment
from dealroom.realtime import Broker
from dealroom.realtime.broker import Subscription
from dealroom.services.live.events import (
    MessageAddedEvent,
    StageChangedEvent,
    decode,
    offer_channel,
    pane_channel,
)
from dealroom.services.offers.provider import TestPaymentProvider
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.factories import written_offer
from tests.support.graphql import Client, post
from tests.support.offers import (
    ADD,
    APPROVE,
    MINTED,
    PAY,
    flips,
    goal_events,
    goal_status,
    negotiate_to_offer,
    offer_as,
    offer_events,
    open_deal,
    settle,
    stages,
    stored_agreements,
)
from tests.support.recording import RecordingClient, agent_runs
from tests.support.turns import messages_in

pytestmark = pytest.mark.asyncio

WAB = "WRITTEN_AWAITING_BRAND"
ACKED = "BRAND_ACKED_AWAITING_TALENT"
BOOKED = "BOOKED_AWAITING_PAYMENT"
HELD = "BOOKED_PAYMENT_HELD"


# --- a server whose edges the test holds ----------------------------------------------------------


class Tap:
    """The run's broker, with a record of everything published through it: a payload sent
    before a test could know its channel (an offer's first stage change) is still seen."""

    def __init__(self, inner: Broker) -> None:
        self.inner = inner
        self.published: list[tuple[str, str]] = []

    async def publish(self, channel: str, payload: str) -> None:
        self.published.append((channel, payload))
        await self.inner.publish(channel, payload)

    async def publish_many(self, published: Sequence[tuple[str, str]]) -> None:
        self.published.extend(published)
        await self.inner.publish_many(published)

    def subscribe(
        self, channels: Iterable[str]
    ) -> contextlib.AbstractAsyncContextManager[Subscription]:
        return self.inner.subscribe(channels)

    async def join(self, sub: Subscription) -> None:
        await self.inner.join(sub)

    async def leave(self, sub: Subscription) -> None:
        await self.inner.leave(sub)

    async def start(self) -> None:
        await self.inner.start()

    async def close(self) -> None:
        await self.inner.close()

    def listening(self) -> list[str]:
        return self.inner.listening()

    def resync(self, channel: str) -> None:
        self.inner.resync(channel)

    async def ping(self) -> None:
        await self.inner.ping()

    def on(self, channel: str) -> list[str]:
        return [payload for published, payload in self.published if published == channel]


@pytest.fixture
def tap(broker: Broker) -> Tap:
    return Tap(broker)


@pytest.fixture
async def tapped_server(
    settings: Settings, engine: AsyncEngine, tap: Tap, clock: ManualClock
) -> AsyncIterator[Server]:
    async with serving(settings, engine, tap, clock, OfflineClient()) as running:
        yield running


@pytest.fixture
def recording() -> RecordingClient:
    return RecordingClient(OfflineClient())


@pytest.fixture
async def recorded_server(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    recording: RecordingClient,
) -> AsyncIterator[Server]:
    async with serving(settings, engine, broker, clock, recording) as running:
        yield running


# --- reading the broker ---------------------------------------------------------------------------

PROBE = "probe"


@contextlib.asynccontextmanager
async def listening(broker: Broker, channels: list[str]) -> AsyncIterator[Subscription]:
    """A subscription on the broker that is known to be live: a probe published on each
    channel has come back (on Redis, SUBSCRIBE is not confirmed before ``subscribe`` returns)."""
    async with broker.subscribe(channels) as sub:
        pending = set(channels)
        async with asyncio.timeout(10):
            while pending:
                for channel in pending:
                    await broker.publish(channel, f"{PROBE}:{channel}")
                try:
                    got = await asyncio.wait_for(sub.get(), 0.2)
                except TimeoutError:
                    continue
                pending.discard(got.removeprefix(f"{PROBE}:"))
        while sub.take() is not None:  # late copies of the probes
            pass
        yield sub


async def stored(sub: Subscription, count: int) -> list[MessageAddedEvent | StageChangedEvent]:
    """The next ``count`` stored events a subscription received (probes are skipped)."""
    events: list[MessageAddedEvent | StageChangedEvent] = []
    async with asyncio.timeout(10):
        while len(events) < count:
            payload = await sub.get()
            if payload.startswith(PROBE):
                continue
            event = decode(payload)
            assert event is not None, payload
            if isinstance(event, MessageAddedEvent | StageChangedEvent):
                events.append(event)
    return events


async def pane_end_in_db(db: Db, room_id: str, key: str) -> int:
    """The cursor of a pane's last stored event, worked out here: its newest message or the
    room's newest stage change, whichever is later (both panes see every stage change)."""
    messages = [m.seq for m in await messages_in(db, room_id, key)]
    try:
        changes = list(
            await db.scalars(select(OfferEvent.seq).where(OfferEvent.room_id == uuid.UUID(room_id)))
        )
    finally:
        await db.close()
    return max([0, *messages, *changes])


# --- clicks ---------------------------------------------------------------------------------------


async def approve(client: Client, offer_id: str) -> str:
    stage: str = (await client.query(APPROVE, {"offerId": offer_id}))["approveOffer"]["stage"]
    return stage


async def add(client: Client, offer_id: str, text: str) -> dict[str, Any]:
    """Add to the written offer with no clientMessageId: the server picks the key."""
    payload: dict[str, Any] = (await client.query(ADD, {"offerId": offer_id, "text": text}))[
        "addToOffer"
    ]
    return payload


async def runs_of(db: Db, room_id: str, agent: AgentName) -> list[AgentRun]:
    return [r for r in await agent_runs(db, room_id) if r.agent == agent.value]


# --- the provider is charged the quote's total ----------------------------------------------------


async def test_pay_offer_charges_the_provider_the_quotes_total_in_the_offers_currency(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)
    assert await approve(d.visitor, offer_id) == ACKED
    assert await approve(d.host, offer_id) == BOOKED
    quote = (await offer_as(d.visitor, offer_id))["payment"]
    # O8: the due slice plus a 20% platform fee on it, all of which the brand pays now.
    due, platform, total = (Decimal(quote[k]) for k in ("due", "platformFee", "total"))
    assert (due, platform, total) == (Decimal("4000.00"), Decimal("800.00"), Decimal("4800.00"))
    assert platform == due * Decimal("0.2")
    assert total == due + platform

    paid = (
        await d.visitor.query(PAY, {"offerId": offer_id, "method": "test_card_ok", "key": "m09"})
    )["payOffer"]
    assert paid["offer"]["stage"] == HELD
    try:
        [payment] = list(
            await db.scalars(select(Payment).where(Payment.offer_id == uuid.UUID(offer_id)))
        )
    finally:
        await db.close()
    assert payment.provider_ref is not None
    provider = server.state.payments
    assert isinstance(provider, TestPaymentProvider)
    assert provider.charged(payment.provider_ref) == (total, quote["currency"])
    assert quote["currency"] == "USD"
    assert provider.charges_made == 1


# --- a goal that stays met fires nothing ----------------------------------------------------------

THANKS = "Thanks!"
LOOKING_FORWARD = "Great, looking forward to it"


def ruling_met_again(request: ModelRequest) -> BaseModel | None:
    """The visitor's agent ruling ``new-offer`` met once more on a pleasantry, as a real
    model may; every other call is the offline engine's."""
    trigger = request.context.get("trigger")
    body = trigger.get("body") if isinstance(trigger, dict) else None
    if request.agent is not AgentName.PERSONA or body != LOOKING_FORWARD:
        return None
    return PersonaOutput(
        reply="Glad it works for you.",
        goals=[GoalRuling(key="new-offer", status="met", reason="The terms are agreed.")],
    )


async def test_new_offer_ruled_met_again_without_a_flip_mints_nothing_more(
    recorded_server: Server, db: Db, recording: RecordingClient
) -> None:
    server = recorded_server
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    assert await goal_status(db, d.room_id) == "met"
    assert len(await runs_of(db, d.room_id, AgentName.OFFER_GEN)) == 1

    # The visitor keeps talking after the agreement: the goal stays met in memory (the
    # offline persona leaves it), then the persona rules it met again.
    recording.script = ruling_met_again
    for line in (THANKS, LOOKING_FORWARD):
        await post(d.visitor, d.room_id, line)
        await settle(server)
        assert await goal_status(db, d.room_id) == "met", line
    said = [(m.author_kind, m.body) for m in await messages_in(db, d.room_id, "visitor")][-4:]
    assert [k for k, _ in said] == ["participant", "agent", "participant", "agent"], said
    assert (said[0][1], said[2][1], said[3][1]) == (
        THANKS,
        LOOKING_FORWARD,
        "Glad it works for you.",
    )

    # Seed 000 "Goals are structured envelopes": an effect fires on a flip, once.
    [minting] = await runs_of(db, d.room_id, AgentName.OFFER_GEN)
    assert minting.status == "done"
    assert flips(await goal_events(db, d.room_id)) == MINTED
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1)]
    offer = await offer_as(d.visitor, offer_id)
    assert (offer["stage"], offer["version"]) == (WAB, 1)


# --- prev links across stage changes on the pane channels -----------------------------------------


async def test_pane_payloads_link_messages_and_stage_changes_by_prev(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)
    room = uuid.UUID(d.room_id)
    panes = {seat: pane_channel(room, seat) for seat in (Seat.VISITOR, Seat.HOST)}

    async with contextlib.AsyncExitStack() as stack:
        subs = {
            seat: await stack.enter_async_context(listening(server.broker, [channel]))
            for seat, channel in panes.items()
        }
        ends = {seat: await pane_end_in_db(db, d.room_id, seat.value) for seat in panes}

        # Two stage changes in a row, then a line in each pane.
        assert await approve(d.visitor, offer_id) == ACKED
        assert await approve(d.host, offer_id) == BOOKED
        said = {
            Seat.VISITOR: await post(d.visitor, d.room_id, "Thanks, paying today."),
            Seat.HOST: await post(d.host, d.room_id, "Booked, thanks."),
        }

        changes = await offer_events(db, offer_id)
        assert stages(changes) == [(WAB, 1), (ACKED, 1), (BOOKED, 1)]
        acked, booked = changes[1].seq, changes[2].seq
        for seat, sub in subs.items():
            first, second, line = await stored(sub, 3)
            # The first change follows whatever the pane held last ...
            assert isinstance(first, StageChangedEvent), first
            assert (first.cursor, first.stage, first.prev) == (acked, ACKED, ends[seat]), seat
            # ... the second follows the first, though the pane has no message between them ...
            assert isinstance(second, StageChangedEvent), second
            assert (second.cursor, second.stage, second.prev) == (booked, BOOKED, acked), seat
            # ... and the next message follows the last stage change, not the last message.
            assert isinstance(line, MessageAddedEvent), line
            assert str(line.message.id) == said[seat]["id"], seat
            assert line.prev == booked, seat


# --- the offer channel's prev is the offer's own last change --------------------------------------


async def test_an_offer_channels_prev_is_that_offers_last_change_not_the_rooms(
    tapped_server: Server, tap: Tap, db: Db
) -> None:
    server = tapped_server
    d = await open_deal(server)
    # One room holds one deal (O10: a rejected room's next deal goes to a sibling room), so
    # the room's own events between the offer's changes are chat: a line and its reply.
    second = await written_offer(server, d.room_id)
    await post(d.visitor, d.room_id, "Could the post go out in the morning?")
    await settle(server)
    channel = offer_channel(uuid.UUID(second))

    async with listening(server.broker, [channel]) as sub:
        assert await approve(d.visitor, second) == ACKED
        assert await approve(d.host, second) == BOOKED
        live = await stored(sub, 2)

    rows = await offer_events(db, second)
    assert stages(rows) == [(WAB, 1), (ACKED, 1), (BOOKED, 1)]
    # The room's sequence moved on between the offer's changes (the chat line and reply).
    assert rows[1].seq - rows[0].seq > 1
    prevs = [0, *[r.seq for r in rows[:-1]]]
    expected = [(r.seq, r.stage, prev) for r, prev in zip(rows, prevs, strict=True)]
    # Its first change (published before anyone could name the channel) links to nothing.
    published = [decode(p) for p in tap.on(channel) if not p.startswith(PROBE)]
    assert [(e.cursor, e.stage, e.prev) for e in published if isinstance(e, StageChangedEvent)] == (
        expected
    )
    assert [(e.cursor, e.stage, e.prev) for e in live if isinstance(e, StageChangedEvent)] == (
        expected[1:]
    )


# --- the shortcut's default key is per version ----------------------------------------------------


async def test_the_same_add_on_a_redrawn_version_posts_a_new_line(server: Server, db: Db) -> None:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    text = "usage rights for 6 months"
    line = f"Please add to the written offer: {text}"

    on_v1 = await add(d.visitor, offer_id, text)
    assert (await add(d.visitor, offer_id, text))["message"]["id"] == on_v1["message"]["id"]
    assert on_v1["offer"]["version"] == 1
    await settle(server)
    await post(d.host, d.room_id, "Yes, go ahead.")
    await settle(server)
    redrawn = await offer_as(d.visitor, offer_id)
    assert redrawn["version"] == 2, redrawn
    assert redrawn["terms"]["usageRights"] is not None

    # O7: the same click on the new version is a new request, posted once.
    on_v2 = await add(d.visitor, offer_id, text)
    assert on_v2["message"]["id"] != on_v1["message"]["id"]
    assert on_v2["message"]["body"] == line
    assert on_v2["offer"]["version"] == 2
    assert (await add(d.visitor, offer_id, text))["message"]["id"] == on_v2["message"]["id"]
    mine = [
        m.id
        for m in await messages_in(db, d.room_id, "visitor")
        if m.author_kind == AuthorKind.PARTICIPANT and m.body == line
    ]
    assert [str(i) for i in mine] == [on_v1["message"]["id"], on_v2["message"]["id"]]


# --- an agreement draft that invents a term is never stored ---------------------------------------

INVENTED_FEE = "$99,999"


def inventing(request: ModelRequest) -> BaseModel | None:
    """The agreement writer naming a fee the offer does not hold; every other call is the
    offline engine's."""
    if request.agent is not AgentName.AGREEMENT:
        return None
    return AgreementOutput(
        title="Services agreement (draft)",
        sections=[
            AgreementSection(heading="Services", body="One sponsored post."),
            AgreementSection(heading="Fee", body=f"The brand pays {INVENTED_FEE} USD."),
            AgreementSection(heading="Draft notice", body="A draft for lawyer review."),
        ],
    )


async def test_an_agreement_naming_a_fee_the_offer_does_not_hold_is_retried_never_stored(
    recorded_server: Server, db: Db, recording: RecordingClient, settings: Settings
) -> None:
    server = recorded_server
    recording.script = inventing
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)

    # The backoff is on the injected clock: move it until every attempt is spent.
    for _ in range(settings.turn_attempts):
        server.clock.advance(timedelta(minutes=5))
        await settle(server)
    [run] = await runs_of(db, d.room_id, AgentName.AGREEMENT)
    assert (run.status, run.attempts) == ("failed", settings.turn_attempts)
    assert run.error is not None
    assert "InventedTerms" in run.error, run.error
    assert "99,999" in run.error, run.error
    assert len(recording.where(AgentName.AGREEMENT)) == settings.turn_attempts
    assert await stored_agreements(db, offer_id) == []
    assert (await offer_as(d.visitor, offer_id))["agreement"] is None

    # The writer behaves again; the host re-runs the failed turn in its pane.
    recording.script = None
    retried = await d.host.query(
        "mutation($r: ID!) { retryTurn(roomId: $r, seat: HOST) }", {"r": d.room_id}
    )
    assert retried["retryTurn"] == 1
    await settle(server)
    [run] = await runs_of(db, d.room_id, AgentName.AGREEMENT)
    assert run.status == "done"
    [draft] = await stored_agreements(db, offer_id)
    assert INVENTED_FEE not in draft.text
    assert "$8,000" in draft.text
    agreement = (await offer_as(d.visitor, offer_id))["agreement"]
    assert (agreement["version"], agreement["current"], agreement["text"]) == (1, True, draft.text)
