"""Partner webhooks end to end (W1-W5 in domain/webhooks.py): an outbox written in the stage
change's transaction, delivered by workers to a local receiver that checks every signature with the
standardwebhooks library's verifier."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.jobs.webhook_delivery import WebhookWorker
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Flag, Message, WebhookDelivery, WebhookEvent
from dealroom.realtime import Broker
from dealroom.services.accounts.identity import Credentials, resolve_identity
from dealroom.services.offers import actions as offer_actions
from dealroom.services.offers import reads as offer_service
from dealroom.services.ops import metrics
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.factories import written_offer
from tests.support.graphql import post
from tests.support.offers import PAY, approve_as_read, negotiate_to_offer, open_deal, settle
from tests.support.partners import (
    ENABLE,
    REDELIVER,
    WEBHOOKS,
    create_key,
    create_webhook,
    delivery_log,
    key_client,
)
from tests.support.receiver import receiver
from tests.support.recording import canary, room_memory, write_room_memory
from tests.support.turns import RULES


@pytest.fixture
def hook_settings(settings: Settings) -> Settings:
    """The server delivers nothing itself: each test runs the worker's steps (run_once), as
    ``settle`` runs the agents, so it can move the clock between attempts."""
    return settings.model_copy(
        update={"webhook_allow_loopback": True, "webhook_workers": 0, "webhook_lease_seconds": 30}
    )


@pytest.fixture
async def hook_server(
    hook_settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    async with serving(hook_settings, engine, broker, clock) as running:
        yield running


@pytest.fixture
def worker(
    hook_settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> WebhookWorker:
    return WebhookWorker(hook_settings, create_sessionmaker(engine), broker, clock)


async def drain(worker: WebhookWorker) -> int:
    """Run the worker until nothing is due now."""
    total = 0
    while sent := await worker.run_once():
        total += sent
    return total


async def test_stage_changes_arrive_signed_once_each_with_stable_ids(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> None:
    """The server's own background worker (woken after commit) delivers every event."""
    live = settings.model_copy(
        update={"webhook_allow_loopback": True, "webhook_workers": 1, "webhook_poll_seconds": 0.05}
    )
    async with serving(live, engine, broker, clock) as server, receiver() as partner:
        d = await open_deal(server)
        hook = await create_webhook(d.host, partner.url)
        offer_id = await written_offer(server, d.room_id)
        await approve_as_read(d.visitor, offer_id)
        await approve_as_read(d.host, offer_id)
        await d.visitor.query(PAY, {"offerId": offer_id, "method": "test_card_ok", "key": "p1"})
        await partner.wait_accepted(5)
        payloads = [partner.verify(hook["secret"], r) for r in partner.accepted]
        # Deliveries of one batch go out concurrently: partners order by data, not arrival.
        assert sorted((p["type"], p["data"]["stage"]) for p in payloads) == sorted(
            [
                ("offer.created", "WRITTEN_AWAITING_BRAND"),
                ("offer.stage_changed", "BRAND_ACKED_AWAITING_TALENT"),
                ("offer.stage_changed", "BOOKED_AWAITING_PAYMENT"),
                ("offer.stage_changed", "BOOKED_PAYMENT_HELD"),
                ("payment.captured", "BOOKED_PAYMENT_HELD"),
            ]
        )
        assert {p["data"]["offerId"] for p in payloads} == {offer_id}
        by_stage = {p["data"]["stage"]: p for p in payloads}
        assert by_stage["BRAND_ACKED_AWAITING_TALENT"]["data"]["previousStage"] == (
            "WRITTEN_AWAITING_BRAND"
        )
        assert by_stage["WRITTEN_AWAITING_BRAND"]["data"]["terms"]["fee"] == {
            "amount": "8000.00",  # the data field: raw, as stored
            "currency": "USD",
            "display": "$8,000",  # P10: what a person reads, as chat and the card write it
        }
        ids = [r.headers["webhook-id"] for r in partner.accepted]
        assert len(set(ids)) == 5  # one logical event each, each its own stable id
        # The worker records an attempt after the partner has answered it.
        for _ in range(200):
            log = await delivery_log(d.host, hook["webhook"]["id"])
            if all(e["status"] == "delivered" for e in log):
                break
            await asyncio.sleep(0.05)
        assert sorted((e["eventId"], e["status"], e["attempts"]) for e in log) == sorted(
            (i, "delivered", 1) for i in ids
        )
        tampered = next(r for r in partner.accepted if "WRITTEN" in r.body)
        tampered.body = tampered.body.replace("WRITTEN", "BOOKED")
        with pytest.raises(Exception, match="signature"):
            partner.verify(hook["secret"], tampered)


async def test_three_failures_then_success_is_one_accepted_delivery(
    hook_server: Server, worker: WebhookWorker, clock: ManualClock
) -> None:
    retries = ("dealroom_webhook_retries_total", {"event": "offer.created"})
    retried_before = metrics.REGISTRY.get_sample_value(*retries) or 0.0
    async with receiver([500, 503, 500]) as partner:
        d = await open_deal(hook_server)
        hook = await create_webhook(d.host, partner.url, ["offer.created"])
        await written_offer(hook_server, d.room_id)
        delays = []
        for _ in range(3):
            assert await drain(worker) == 1
            (entry,) = await delivery_log(d.host, hook["webhook"]["id"])
            assert entry["status"] == "pending"
            assert await drain(worker) == 0  # backing off: nothing due until time moves
            delays.append(entry["nextAttemptAt"])
            clock.advance(timedelta(hours=2))
        assert await drain(worker) == 1
        assert len(partner.requests) == 4
        assert len(partner.accepted) == 1
        assert len({r.headers["webhook-id"] for r in partner.requests}) == 1
        for request in partner.requests:
            partner.verify(hook["secret"], request)
        (entry,) = await delivery_log(d.host, hook["webhook"]["id"])
        assert entry["status"] == "delivered"
        assert [a["statusCode"] for a in entry["attemptLog"]] == [500, 503, 500, 200]
        assert (metrics.REGISTRY.get_sample_value(*retries) or 0.0) - retried_before == 3
        assert await drain(worker) == 0


async def test_backoff_grows_with_jitter_and_gives_up_after_the_window(
    hook_server: Server, worker: WebhookWorker, clock: ManualClock, db: Db
) -> None:
    """W2/W3: an endpoint failing for the whole window is disabled and its owner told in
    their home room; re-enabled, nothing is lost that was still pending."""
    async with receiver([500] * 100) as partner:
        d = await open_deal(hook_server)
        hook = await create_webhook(d.host, partner.url, ["offer.created"])
        await written_offer(hook_server, d.room_id)
        gaps = []
        while True:
            assert await drain(worker) == 1
            (entry,) = await delivery_log(d.host, hook["webhook"]["id"])
            if entry["status"] != "pending":
                break
            row = await db.scalar(select(WebhookDelivery))
            assert row is not None
            gap = row.next_attempt_at - clock.now()
            await db.close()
            gaps.append(gap)
            clock.advance(gap + timedelta(seconds=1))
        assert entry["status"] == "failed"
        assert gaps[4] > gaps[0]  # exponential (jitter keeps neighbours from being strict)
        assert max(gaps) <= timedelta(hours=1)  # capped per attempt
        assert sum(gaps, timedelta()) >= timedelta(hours=23)  # tried for the whole window
        (endpoint,) = (await d.host.query(WEBHOOKS))["webhooks"]
        assert endpoint["status"] == "disabled"
        told = list(
            await db.scalars(select(Message.body).where(Message.body.contains(partner.url)))
        )
        await db.close()
        assert len(told) == 1
        assert "turned off" in told[0]
        assert (await d.host.query(ENABLE, {"id": endpoint["id"]}))["enableWebhook"][
            "status"
        ] == "active"


async def test_redelivery_resends_with_the_same_event_id(
    hook_server: Server, worker: WebhookWorker
) -> None:
    async with receiver() as partner:
        d = await open_deal(hook_server)
        hook = await create_webhook(d.host, partner.url, ["offer.created"])
        await written_offer(hook_server, d.room_id)
        await drain(worker)
        (entry,) = await delivery_log(d.host, hook["webhook"]["id"])
        again = (await d.host.query(REDELIVER, {"id": entry["id"]}))["redeliverWebhook"]
        assert again["status"] == "pending"
        assert await drain(worker) == 1
        assert [r.headers["webhook-id"] for r in partner.accepted] == [entry["eventId"]] * 2


async def test_a_rolled_back_stage_change_sends_nothing(
    hook_server: Server, worker: WebhookWorker, engine: AsyncEngine, clock: ManualClock
) -> None:
    async with receiver() as partner:
        d = await open_deal(hook_server)
        await create_webhook(d.host, partner.url, ["offer.stage_changed"])
        offer_id = await written_offer(hook_server, d.room_id)
        visitor_token = d.visitor.headers["Authorization"].removeprefix("Bearer ")
        sessionmaker = create_sessionmaker(engine)

        async def approve(commit: bool) -> None:
            db = Db(sessionmaker)
            try:
                identity = await resolve_identity(db, clock, Credentials(token=visitor_token))
                await offer_actions.approve_offer(
                    db,
                    hook_server.broker,
                    clock,
                    identity,
                    offer_id=offer_service.parse_offer_id(offer_id),
                    version=None,
                )
                await (db.commit() if commit else db.rollback())
            finally:
                await db.close()

        await approve(commit=False)
        assert await drain(worker) == 0
        assert partner.requests == []
        await approve(commit=True)
        assert await drain(worker) == 1
        assert [json.loads(r.body)["data"]["stage"] for r in partner.accepted] == [
            "BRAND_ACKED_AWAITING_TALENT"
        ]


async def test_declined_card_is_an_event_and_keys_need_the_scope(
    hook_server: Server, worker: WebhookWorker, db: Db
) -> None:
    async with receiver() as partner:
        d = await open_deal(hook_server)
        manager = key_client(hook_server, (await create_key(d.host, ["webhooks:manage"]))["key"])
        reader = key_client(hook_server, (await create_key(d.host, ["offers:read"]))["key"])
        assert await reader.error_codes(
            'mutation { createWebhook(url: "http://127.0.0.1:9/", events: ["offer.created"])'
            " { secret } }"
        ) == ["FORBIDDEN"]
        hook = await create_webhook(manager, partner.url, ["payment.declined"])
        offer_id = await written_offer(hook_server, d.room_id)
        await approve_as_read(d.visitor, offer_id)
        await approve_as_read(d.host, offer_id)
        pay = {"offerId": offer_id, "method": "test_card_declined", "key": "k1"}
        for _ in range(2):  # a retry with the same key is the same event
            assert await d.visitor.error_codes(PAY, pay) == ["PAYMENT_DECLINED"]
        assert await drain(worker) == 1
        (declined,) = [partner.verify(hook["secret"], r) for r in partner.accepted]
        assert declined["type"] == "payment.declined"
        assert declined["data"]["stage"] == "BOOKED_AWAITING_PAYMENT"
        assert await db.scalar(select(func.count(WebhookEvent.id))) == 1
        await db.close()


@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("http://127.0.0.1:9/hook", False),
        ("http://localhost:9/hook", False),
        ("http://10.0.0.5/hook", True),
        ("http://192.168.1.2/hook", True),
        ("http://169.254.169.254/latest/meta-data", True),
        ("http://[::1]:9/hook", False),
        ("ftp://example.com/hook", True),
    ],
)
async def test_private_and_loopback_destinations_are_refused(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    url: str,
    allow: bool,
) -> None:
    chosen = settings.model_copy(update={"webhook_allow_loopback": allow})
    async with serving(chosen, engine, broker, clock) as server:
        owner = server.client()
        from tests.support.graphql import sign_up

        await sign_up(owner, "partnerco")
        codes = await owner.error_codes(
            'mutation($url: String!) { createWebhook(url: $url, events: ["offer.created"])'
            " { secret } }",
            {"url": url},
        )
        assert codes == ["BAD_USER_INPUT"]


async def test_no_host_secret_reaches_a_webhook(
    hook_server: Server, worker: WebhookWorker, db: Db
) -> None:
    """Canaries in the host's private rules, limits, private terms, plan and own pane never
    reach a partner: the payload is composed from the buyer-visible offer fields only."""
    secret = {p: canary(p) for p in ("rule", "limit", "term", "plan", "pane")}
    canaries = set(secret.values())
    async with receiver() as partner:
        d = await open_deal(hook_server, rules=f"{RULES} I never work with {secret['rule']}.")
        hook = await create_webhook(d.host, partner.url)
        seeded = await room_memory(db, d.room_id)
        host = seeded.setdefault("host", {})
        host.setdefault("limits", {})["sponsored-post"] = {
            "floor": "6000",
            "currency": "USD",
            "source": secret["limit"],
        }
        host["private_terms"] = [{"text": secret["term"], "source": "m1"}]
        seeded["plans"] = {"host": secret["plan"]}
        await write_room_memory(db, d.room_id, seeded)
        planted = json.dumps(await room_memory(db, d.room_id))
        assert {c for c in canaries if c in planted} == canaries - {secret["pane"]}
        await post(d.host, d.room_id, f"Between us: {secret['pane']}")
        await settle(hook_server)
        offer_id = await negotiate_to_offer(hook_server, d)
        await approve_as_read(d.visitor, offer_id)
        await approve_as_read(d.host, offer_id)
        await d.visitor.query(PAY, {"offerId": offer_id, "method": "test_card_ok", "key": "p1"})
        await drain(worker)
        assert len(partner.accepted) == 5
        sent = "\n".join(r.body for r in partner.requests)
        stored = json.dumps([e.payload for e in await db.scalars(select(WebhookEvent))])
        await db.close()
        assert partner.verify(hook["secret"], partner.accepted[0])
        assert {c for c in canaries if c in sent + stored} == set()
        # the host's floor, as an amount (not digits inside a timestamp's microseconds)
        assert not re.search(r"(?<![\d.])6,?000(?:\.00)?(?!\d)", sent)


async def test_a_payload_stating_a_private_value_goes_out_without_its_terms(
    hook_server: Server, worker: WebhookWorker, db: Db
) -> None:
    """The firewall on the webhook path: should an offer's terms state one of the host's private
    values (here the host names the deliverable itself a private term after the offer was drawn),
    the firewall withholds the terms from the payload — the stage still goes out — and operators
    get a firewall flag."""
    async with receiver() as partner:
        d = await open_deal(hook_server)
        await create_webhook(d.host, partner.url, ["offer.stage_changed"])
        offer_id = await written_offer(hook_server, d.room_id)
        memory = await room_memory(db, d.room_id)
        memory.setdefault("host", {})["private_terms"] = [
            {"text": "sponsored post", "source": "m1"}
        ]
        await write_room_memory(db, d.room_id, memory)
        await approve_as_read(d.visitor, offer_id)
        await drain(worker)
        bodies = [json.loads(r.body) for r in partner.accepted]
        approved = [b for b in bodies if b["data"]["stage"] == "BRAND_ACKED_AWAITING_TALENT"]
        assert approved, bodies
        assert approved[0]["data"]["terms"] is None
        assert approved[0]["data"]["termsWithheld"] is True
        assert "sponsored post" not in json.dumps(approved).lower()
        flags = list(await db.scalars(select(Flag).where(Flag.level == "firewall")))
        await db.close()
        assert any("webhook payload" in f.evidence for f in flags)
