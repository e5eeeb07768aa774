"""Webhook delivery workers (rules W2-W5 in ``domain/webhooks.py``).

Any process may run them (``serve`` and ``worker``): deliveries are claimed from the outbox
table with a lease (``FOR UPDATE SKIP LOCKED`` on PostgreSQL), so two workers never hold the
same attempt, and a worker killed mid-attempt loses nothing: its lease expires and the attempt
is made again, with the same ``webhook-id`` (at-least-once; partners dedupe on the id).
Signatures are Standard Webhooks (``standardwebhooks``: HMAC-SHA256 over id.timestamp.body).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from standardwebhooks import Webhook as Signer

from dealroom.config import Settings
from dealroom.domain import webhooks as rules
from dealroom.domain.seats import AuthorKind
from dealroom.jobs.outbox_loop import OutboxLoop
from dealroom.persistence.db import Db
from dealroom.persistence.locales import LocaleRepository
from dealroom.persistence.models import Webhook, WebhookAttempt, WebhookDelivery
from dealroom.persistence.webhooks import WebhookRepository
from dealroom.realtime.broker import Broker
from dealroom.services.clock import Clock
from dealroom.services.ops import metrics
from dealroom.services.partners.payloads import for_reader
from dealroom.services.partners.webhooks import WAKE_CHANNEL, check_destination
from dealroom.services.rooms.pane_lines import home_pane, write_line
from dealroom.services.unit_of_work import UnitOfWork

log = structlog.get_logger(__name__)

USER_AGENT = "dealroom-webhooks/1"


@dataclass(frozen=True, slots=True)
class Claim:
    delivery_id: uuid.UUID
    webhook_id: uuid.UUID
    attempt: int
    message_id: str
    event_type: str
    url: str
    secret: str
    body: str


@dataclass(frozen=True, slots=True)
class Outcome:
    claim: Claim
    status_code: int | None
    error: str | None
    duration_ms: int


def policy(settings: Settings) -> rules.RetryPolicy:
    return rules.RetryPolicy(
        base=timedelta(seconds=settings.webhook_retry_base_seconds),
        cap=timedelta(seconds=settings.webhook_retry_cap_seconds),
        window=timedelta(hours=settings.webhook_retry_window_hours),
    )


def signed_headers(claim: Claim, at: datetime) -> dict[str, str]:
    """The Standard Webhooks headers. The timestamp is wall-clock time: receivers check it
    against their own clocks (five minutes' tolerance)."""
    signature = Signer(claim.secret).sign(claim.message_id, at, claim.body)
    return {
        "webhook-id": claim.message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signature,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


class WebhookWorker(OutboxLoop):
    """Claims due deliveries and sends them. One per process; ``webhook_workers`` loops."""

    def __init__(
        self,
        settings: Settings,
        sessionmaker: async_sessionmaker[AsyncSession],
        broker: Broker,
        clock: Clock,
    ) -> None:
        super().__init__(broker, name="webhook", wake_channel=WAKE_CHANNEL)
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.clock = clock
        self.policy = policy(settings)
        self._http: httpx.AsyncClient | None = None
        self._holder = uuid.uuid4().hex[:8]

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        if self.settings.webhook_workers < 1:
            return
        self._http = self._client()
        self._spawn(self.settings.webhook_workers)

    async def close(self) -> None:
        await super().close()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    @property
    def poll_seconds(self) -> float:
        return self.settings.webhook_poll_seconds

    def _client(self) -> httpx.AsyncClient:
        # No redirects (a 3xx could point anywhere, W4) and no proxies from the environment.
        return httpx.AsyncClient(
            timeout=self.settings.webhook_timeout_seconds,
            follow_redirects=False,
            trust_env=False,
        )

    # --- one batch ------------------------------------------------------------------------

    async def run_once(self) -> int:
        """Claim due deliveries, send them concurrently, record the outcomes. Returns how many
        attempts were made."""
        claims = await self.claim()
        if not claims:
            return 0
        http = self._http or self._client()
        try:
            outcomes = await asyncio.gather(*(self.attempt(http, c) for c in claims))
        finally:
            if http is not self._http:
                await http.aclose()
        await self.record(list(outcomes))
        return len(claims)

    async def claim(self) -> list[Claim]:
        now = self.clock.now()
        lease = timedelta(seconds=self.settings.webhook_lease_seconds)
        async with UnitOfWork(self.sessionmaker) as unit:
            due = await WebhookRepository(unit.db).due(now, self.settings.webhook_batch)
            # L3: display fields in each endpoint owner's locale, one statement per batch.
            locales = await LocaleRepository(unit.db).locales_of(
                [w.account_id for _d, w, _e in due]
            )
            claims: list[Claim] = []
            for delivery, webhook, event in due:
                if delivery.attempts > 0:
                    metrics.WEBHOOK_RETRIES.labels(event.type).inc()
                delivery.attempts += 1
                delivery.lease_until = now + lease
                if delivery.first_attempt_at is None:
                    delivery.first_attempt_at = now
                claims.append(
                    Claim(
                        delivery_id=delivery.id,
                        webhook_id=webhook.id,
                        attempt=delivery.attempts,
                        message_id=str(event.id),
                        event_type=event.type,
                        url=webhook.url,
                        secret=webhook.secret,
                        body=json.dumps(
                            for_reader(event.payload, locales.get(webhook.account_id)),
                            separators=(",", ":"),
                            sort_keys=True,
                        ),
                    )
                )
            return claims

    async def attempt(self, http: httpx.AsyncClient, claim: Claim) -> Outcome:
        started = time.perf_counter()
        status: int | None = None
        error: str | None = None
        try:
            # W4 again at send time: the name may resolve elsewhere than when it was made.
            pinned = await check_destination(
                claim.url, allow_loopback=self.settings.webhook_allow_loopback
            )
            # Sent to the address just checked (Host and TLS's SNI keep the name): a second
            # lookup by httpx could answer a private address (DNS rebinding).
            response = await http.post(
                pinned.connect_url,
                content=claim.body,
                headers={**signed_headers(claim, datetime.now(UTC)), **pinned.headers()},
                extensions=pinned.extensions,
            )
            status = response.status_code
            if not rules.delivered(status):
                error = f"HTTP {status}: {response.text[:200]}"
        except rules.DestinationError as exc:
            error = f"refused destination: {exc}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
        duration = int((time.perf_counter() - started) * 1000)
        return Outcome(claim=claim, status_code=status, error=error, duration_ms=duration)

    async def record(self, outcomes: list[Outcome]) -> None:
        """The attempts' log rows and each delivery's next state, in one transaction (three
        statements and one flush for the whole batch, whatever its size)."""
        # The workers queue no runs: a unit with no runner signal (no announce, no wake).
        async with UnitOfWork(self.sessionmaker, self.broker) as uow:
            db = uow.db
            now = self.clock.now()
            stored = WebhookRepository(db)
            deliveries = {
                d.id: d for d in await stored.deliveries([o.claim.delivery_id for o in outcomes])
            }
            webhooks = {
                w.id: w for w in await stored.by_ids({o.claim.webhook_id for o in outcomes})
            }
            attempts = []
            for outcome in outcomes:
                delivery = deliveries.get(outcome.claim.delivery_id)
                webhook = webhooks.get(outcome.claim.webhook_id)
                if delivery is None or webhook is None:
                    continue  # the endpoint was deleted meanwhile
                attempts.append(
                    WebhookAttempt(
                        id=uuid.uuid4(),
                        delivery_id=delivery.id,
                        attempt=outcome.claim.attempt,
                        status_code=outcome.status_code,
                        error=outcome.error,
                        duration_ms=outcome.duration_ms,
                        created_at=now,
                    )
                )
                uow.publish(*await self._record_one(db, outcome, delivery, webhook, now))
            if attempts:
                await db.add(*attempts)

    async def _record_one(
        self,
        db: Db,
        outcome: Outcome,
        delivery: WebhookDelivery,
        webhook: Webhook,
        now: datetime,
    ) -> list[tuple[str, str]]:
        claim = outcome.claim
        ok = rules.delivered(outcome.status_code)
        metrics.WEBHOOK_ATTEMPTS.labels(claim.event_type, "delivered" if ok else "failed").inc()
        delivery.last_status = outcome.status_code
        delivery.last_error = outcome.error
        if ok:
            # At-least-once: a success is a success even if another worker retried meanwhile.
            delivery.status = "delivered"
            delivery.delivered_at = now
            delivery.lease_until = None
            webhook.last_success_at = now
            return []
        if delivery.status != "pending" or delivery.attempts != claim.attempt:
            return []  # another worker owns the next attempt (our lease had expired)
        delivery.lease_until = None
        first = delivery.first_attempt_at or now
        if not self.policy.gives_up(now - first):
            delivery.next_attempt_at = now + self.policy.next_delay(delivery.attempts)
            return []
        delivery.status = "failed"
        metrics.WEBHOOK_FAILED.labels(claim.event_type).inc()
        if webhook.status == "active" and (
            webhook.last_success_at is None or webhook.last_success_at < first
        ):
            return await self._disable(db, webhook, now)
        return []

    async def _disable(self, db: Db, webhook: Webhook, now: datetime) -> list[tuple[str, str]]:
        """W3: stop sending to an endpoint that has failed for a whole retry window, and tell
        its owner in their home room."""
        window = self.settings.webhook_retry_window_hours
        webhook.status = "disabled"
        webhook.disabled_at = now
        webhook.disabled_reason = f"No delivery succeeded for {window:g} h."
        log.warning("webhook_disabled", webhook_id=str(webhook.id))
        pane = await home_pane(db, webhook.account_id)
        if pane is None:
            return []
        body = (
            f"Your webhook to {webhook.url} was turned off: no delivery succeeded for "
            f"{window:g} hours. Fix the endpoint, then turn it back on with enableWebhook; "
            "deliveries still pending resume then."
        )
        _row, publish = await write_line(
            db,
            self.clock,
            pane,
            body,
            author=AuthorKind.SYSTEM,
            key=f"webhook-disabled:{webhook.id.hex}:{int(now.timestamp())}",
        )
        return [publish] if publish is not None else []
