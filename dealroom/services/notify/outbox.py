"""The notification outbox writer: one row per recipient, in the caller's transaction, so a
notification exists exactly when its fact committed (a rolled-back turn notifies nobody).

What a row becomes is decided here from the recipient's preferences: an email due now
(``pending``; the delivery worker coalesces it with others about the same room), a line of the
daily digest (``digest``), or in-app only (``kept``: no address, or the account turned the kind
off). An unclaimed guest has no account and gets no row; an invitation to an address with no
account is an email-only row (no account: nothing in the app, no preferences, no coalescing).
Visitor-bound text passes the private-value screen first (``screen.py``)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

import structlog

from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchLine
from dealroom.persistence.models import Dispatch, Flag, Notification
from dealroom.persistence.notifications import NotificationRepository, Recipient, RoomFacts
from dealroom.services.notify import screen
from dealroom.services.notify.kinds import Audience, Kind, Mode, mode_for

log = structlog.get_logger(__name__)

Publish = tuple[str, str]
WAKE_CHANNEL = "notify-deliveries"
"""Published after a commit that wrote emails: this process's delivery loop looks at once."""
FLAG_LEVEL = "firewall"


def account_channel(account_id: uuid.UUID) -> str:
    """The channel of an account's ``notificationEvents``."""
    return f"notify:{account_id}"


@dataclass(frozen=True, slots=True)
class Note:
    """A notification to write: for one account, about one room (or none)."""

    account_id: uuid.UUID | None
    """None with ``address``: an email, and nothing in the app, to someone with no account yet
    (an invitation)."""
    kind: Kind
    audience: Audience
    source: str
    title: str
    body: str
    link: str
    reason: str
    room_id: uuid.UUID | None = None
    wait: dict[str, Any] | None = None
    """Set for a wait on the principal: the reminder and escalation timers are armed."""
    address: str | None = None


@dataclass
class Written:
    rows: list[Notification] = field(default_factory=list)
    published: list[Publish] = field(default_factory=list)


def host_link(room_id: uuid.UUID) -> str:
    return f"/r/{room_id}"


def visitor_link(handle: str, room_id: uuid.UUID) -> str:
    return f"/z/{handle}/{room_id}"


async def write(
    db: Db,
    now: datetime,
    notes: Sequence[Note],
    facts: RoomFacts | None = None,
    held: Sequence[Dispatch | DispatchLine] = (),
    *,
    band_percent: Decimal | None = None,
) -> Written:
    """Write ``notes`` (each once: a source already written is skipped). Returns the rows and
    what to publish after commit. A visitor's note passes the exit screen with ``band_percent``,
    the deployment's closeness band."""
    done = Written()
    if not notes:
        return done
    repo = NotificationRepository(db)
    already = await repo.written([n.source for n in notes])
    notes = [n for n in notes if n.source not in already]
    if not notes:
        return done
    recipients = await repo.recipients([n.account_id for n in notes if n.account_id])
    for note in notes:
        recipient = recipients.get(note.account_id) if note.account_id else None
        if recipient is None and (note.account_id is not None or not note.address):
            continue
        if note.audience == Audience.VISITOR:
            note = await _screened(db, note, facts, held, now, band_percent)
        row = _row(note, recipient, now)
        if not await repo.add_once(row):
            continue  # written meanwhile by a unit that committed first
        done.rows.append(row)
        if note.account_id is not None:
            done.published.append(
                (account_channel(note.account_id), json.dumps({"id": str(row.id)}))
            )
    if any(r.status == "pending" for r in done.rows):
        done.published.append((WAKE_CHANNEL, "1"))
    return done


async def _screened(
    db: Db,
    note: Note,
    facts: RoomFacts | None,
    held: Sequence[Dispatch | DispatchLine],
    now: datetime,
    band_percent: Decimal | None,
) -> Note:
    """Seed 000's firewall on this exit too: a visitor's title and body state no host private
    value; one that would is replaced by a fixed line and operators are told."""
    if facts is None:
        return note
    title, body, withheld = screen.visitor_text(
        facts.memory, note.title, note.body, held, band_percent=band_percent
    )
    if not withheld:
        return note
    host = facts.participant_ids.get(Seat.HOST.value)
    if host is not None:
        await db.add(
            Flag(
                room_id=facts.room_id,
                participant_id=host,
                level=FLAG_LEVEL,
                evidence=f"notification {note.source}: text withheld "
                f"({len(withheld)} private value(s) matched)",
                created_at=now,
            )
        )
    log.warning("notification_text_withheld", room_id=str(facts.room_id), kind=note.kind.value)
    return replace(note, title=title, body=body)


def _row(note: Note, recipient: Recipient | None, now: datetime) -> Notification:
    """The row of ``note``; without a recipient account, an email due now to its address."""
    row = Notification(
        id=uuid.uuid4(),
        account_id=note.account_id,
        room_id=note.room_id,
        kind=note.kind.value,
        audience=note.audience.value,
        source=note.source[:160],
        title=note.title[:300],
        body=note.body,
        link=note.link,
        reason=note.reason,
        status="kept" if recipient is not None else "pending",
        email_to=recipient.email if recipient is not None else note.address,
        attempts=0,
        next_attempt_at=now,
        created_at=now,
    )
    if note.wait is not None:
        row.wait = note.wait
        row.wait_state = "waiting"
        row.waiting_since = now
    if recipient is None:
        return row
    mode = mode_for(recipient.settings.modes if recipient.settings else None, note.kind)
    if recipient.email is None or mode == Mode.OFF:
        return row
    # Coalescing is the delivery worker's: it has the window, and the writer stays one insert.
    row.status = "digest" if mode == Mode.DIGEST else "pending"
    return row
