"""Notification email delivery: the outbox's worker loop, in every ``serve`` and ``worker``.

- ND1  Claimed with a lease: one worker at a time decides the emails to an account about a
       room (on PostgreSQL a transaction advisory lock another worker skips, not waits for),
       re-reading each row under its row lock, so two workers never hold the same send; each
       send first renews its lease and is skipped if another worker claimed it since (a
       batch's later sends can outlast the lease taken at claim). A worker killed mid-send
       loses nothing — its lease expires and the email goes again with the same
       ``Message-ID`` (at most one duplicate, which a mail client drops by that id).
- ND2  Coalescing at claim: one email per room and recipient per
       ``DEALROOM_NOTIFY_COALESCE_MINUTES``; an email due inside the window after the last one
       waits for the window's end, one due while the room's email is out waits for its
       outcome, and every unclaimed email to the same account about the same room joins the
       one claimed (its body lists them all).
- ND3  A 5xx (a bad or bouncing address) fails the notification with the server's reason and
       never retries; a 4xx, a refused connection or a timeout retries with bounded
       exponential backoff, ``notify_max_attempts`` at most, then fails with its last reason.
- ND4  No SMTP configured: each due notification is ``kept`` — in the outbox and the app's
       list, one log line each — and none is marked sent.
- ND5  Digests: an account's digested notifications go as one email once the oldest is a
       day old.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from email.utils import parseaddr

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.config import Settings
from dealroom.jobs.outbox_loop import OutboxLoop
from dealroom.persistence.models import Notification
from dealroom.persistence.notifications import NotificationRepository
from dealroom.realtime.broker import Broker
from dealroom.services.clock import Clock
from dealroom.services.notify import preferences, render, smtp
from dealroom.services.notify.kinds import Kind
from dealroom.services.notify.outbox import WAKE_CHANNEL
from dealroom.services.unit_of_work import UnitOfWork

log = structlog.get_logger(__name__)

DIGEST_EVERY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Claim:
    notification_id: uuid.UUID
    attempt: int
    to: str
    email: EmailMessage


def backoff(settings: Settings, attempts: int) -> timedelta:
    """ND3: base, 2×base, 4×base… up to the cap (deterministic: the clock is injected)."""
    seconds = settings.notify_retry_base_seconds * 2 ** max(0, attempts - 1)
    return timedelta(seconds=min(settings.notify_retry_cap_seconds, seconds))


class NotifyWorker(OutboxLoop):
    """One per process; its loop claims due emails, sends them and records the outcomes."""

    def __init__(
        self,
        settings: Settings,
        sessionmaker: async_sessionmaker[AsyncSession],
        broker: Broker,
        clock: Clock,
    ) -> None:
        super().__init__(broker, name="notify", wake_channel=WAKE_CHANNEL)
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.clock = clock
        self.target = smtp.SmtpTarget.parse(settings.smtp_url) if settings.smtp_url else None
        self.sender = parseaddr(settings.mail_from)[1] or settings.mail_from

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self._spawn()

    @property
    def poll_seconds(self) -> float:
        return self.settings.notify_poll_seconds

    # --- one pass -------------------------------------------------------------------------

    async def run_once(self) -> int:
        """Gather due digests, claim due emails, send them, record the outcomes. Returns how
        many sends were attempted."""
        await self.gather_digests()
        return await self.deliver(await self.claim())

    async def deliver(self, claims: list[Claim]) -> int:
        """Send ``claims`` one by one, each only while it is still this worker's, recording
        each outcome before the next send. Returns how many sends were attempted."""
        if not claims or self.target is None:
            return 0
        target = self.target
        sent = 0
        for claim in claims:
            # ND1: a batch's later sends can outlast the lease taken at claim; one whose
            # lease ran out may be another worker's by now, and is then not sent twice.
            if not await self.renew(claim):
                continue
            outcome = await smtp.send(
                target,
                claim.email,
                sender=self.sender,
                to=claim.to,
                timeout=self.settings.smtp_timeout_seconds,
            )
            # ND1: recorded before the next send, so a worker killed now leaves at most the
            # send in flight to be repeated, never the batch's.
            await self.record([(claim, outcome)])
            sent += 1
        return sent

    async def renew(self, claim: Claim) -> bool:
        """Extend the claim's lease to cover its send, if the claim is still this worker's."""
        lease = timedelta(seconds=self.settings.notify_lease_seconds)
        async with UnitOfWork(self.sessionmaker) as unit:
            repo = NotificationRepository(unit.db)
            return await repo.renew(claim.notification_id, claim.attempt, self.clock.now() + lease)

    async def gather_digests(self) -> int:
        """ND5: for each account whose oldest digested notification is a day old, one email
        carrying them all."""
        now = self.clock.now()
        async with UnitOfWork(self.sessionmaker) as unit:
            repo = NotificationRepository(unit.db)
            accounts = await repo.digests_due(now - DIGEST_EVERY, self.settings.notify_batch)
            for account_id in accounts:
                rows = await repo.digested(account_id)
                if not rows:
                    continue
                carrier = Notification(
                    id=uuid.uuid4(),
                    account_id=account_id,
                    room_id=None,
                    kind=Kind.DIGEST.value,
                    audience=rows[0].audience,
                    source=f"digest:{account_id}:{int(now.timestamp())}",
                    title=f"Your daily digest: {len(rows)} update(s)",
                    body="",
                    link=rows[-1].link,
                    reason="You chose a daily digest for these updates.",
                    status="pending",
                    email_to=rows[-1].email_to,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                )
                await unit.db.add(carrier)
                for row in rows:
                    row.status = "joined"
                    row.carried_by = carrier.id
                await unit.db.flush()
            return len(accounts)

    async def claim(self) -> list[Claim]:
        now = self.clock.now()
        settings = self.settings
        window = timedelta(minutes=settings.notify_coalesce_minutes)
        async with UnitOfWork(self.sessionmaker) as unit:
            db = unit.db
            repo = NotificationRepository(db)
            due = await repo.due(now, settings.notify_batch)
            claimed: list[Notification] = []
            handled: set[uuid.UUID] = set()
            for candidate in due:
                if candidate.id in handled:
                    continue
                await db.flush()  # the re-reads below refresh rows from the database
                if not await repo.hold_room(candidate.account_id, candidate.room_id):
                    continue  # another worker is deciding this room's email right now
                row = await repo.claimable(candidate.id, now)
                if row is None:
                    continue  # claimed or joined since it was read
                handled.add(row.id)
                if self.target is None:
                    # ND4: kept, visibly, and never claimed to be sent.
                    row.status = "kept"
                    log.info(
                        "notification_kept",
                        to=row.email_to,
                        kind=row.kind,
                        subject=row.title,
                        link=render.absolute(settings.public_url, render.loggable(row.link)),
                        reason="no SMTP configured",
                    )
                    continue
                if row.kind != Kind.DIGEST.value and window and row.account_id is not None:
                    last = await repo.last_email_at(row.account_id, row.room_id, now - window)
                    if last is not None:
                        row.next_attempt_at = last + window  # ND2: after the window
                        continue
                    unsent = await repo.unsent_email(row) if row.attempts == 0 else None
                    if unsent is not None:
                        # ND2: an email about the room is out or awaits its retry; this one
                        # joins that retry or waits for the window its sending opens.
                        lease = unsent.lease_until or now
                        row.next_attempt_at = max(lease, unsent.next_attempt_at, now)
                        continue
                    for other in await repo.same_room_open(row):
                        other.status = "joined"
                        other.carried_by = row.id
                        handled.add(other.id)
                row.attempts += 1
                row.lease_until = now + timedelta(seconds=settings.notify_lease_seconds)
                claimed.append(row)
            await db.flush()
            carried = await repo.carried([r.id for r in claimed])
            recipients = await repo.recipients([r.account_id for r in claimed if r.account_id])
            claims = []
            for row in claimed:
                recipient = recipients.get(row.account_id) if row.account_id else None
                to = row.email_to or (recipient.email if recipient else None)
                if to is None or (recipient is None and row.account_id is not None):
                    row.status, row.lease_until = "kept", None
                    continue
                url: str | None = None  # an address with no account has nothing to turn off
                if recipient is not None:
                    prefs = recipient.settings or await preferences.ensure(
                        db, recipient.account_id, now
                    )
                    url = render.unsubscribe_url(
                        settings.public_url,
                        preferences.unsubscribe_token(prefs, tokens_kind(row), now),
                    )
                mine = [c for c in carried if c.carried_by == row.id]
                rendered = render.render(
                    row,
                    mine,
                    name=recipient.display_name if recipient else None,
                    public_url=settings.public_url,
                    unsubscribe=url,
                )
                email = render.message(
                    row,
                    rendered,
                    mail_from=settings.mail_from,
                    to=to,
                    public_url=settings.public_url,
                    unsubscribe=url,
                )
                claims.append(Claim(row.id, row.attempts, to, email))
            return claims

    async def record(self, outcomes: list[tuple[Claim, smtp.Outcome]]) -> None:
        now = self.clock.now()
        settings = self.settings
        async with UnitOfWork(self.sessionmaker) as unit:
            repo = NotificationRepository(unit.db)
            rows = {r.id: r for r in await repo.by_ids([c.notification_id for c, _ in outcomes])}
            for claim, outcome in outcomes:
                row = rows.get(claim.notification_id)
                if row is None:
                    continue
                if outcome.verdict == smtp.Verdict.SENT:
                    # ND1: a success is a success even if our lease had run out meanwhile.
                    row.status, row.sent_at, row.lease_until = "sent", now, None
                    row.last_error = None
                    log.info("notification_sent", id=str(row.id), kind=row.kind)
                    continue
                if row.status != "pending" or row.attempts != claim.attempt:
                    continue  # another worker owns the next attempt
                row.lease_until = None
                row.last_error = outcome.reason
                if outcome.verdict == smtp.Verdict.FAILED or (
                    row.attempts >= settings.notify_max_attempts
                ):
                    row.status = "failed"
                    log.warning("notification_failed", id=str(row.id), reason=outcome.reason)
                    continue
                row.next_attempt_at = now + backoff(settings, row.attempts)
                log.info("notification_retry", id=str(row.id), reason=outcome.reason)
            await unit.db.flush()


def tokens_kind(row: Notification) -> str:
    """What the email's unsubscribe link turns off: its kind (a digest: every kind)."""
    return "all" if row.kind == Kind.DIGEST.value else row.kind
