"""What a guest may do before signing in: the message cap (it rides on the login gate, with
gentler copy), no approvals or payments, and how often one address may mint guest keys.

Kept small and local on purpose: a generic throttle may take the per-IP count over later.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from dealroom.agents.models.base import AgentName
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.guest_keys import GuestKeyRepository
from dealroom.persistence.models import AgentRun, GuestKeyMint, Participant
from dealroom.persistence.offers import pane_end
from dealroom.persistence.repositories import WriterSeat
from dealroom.services.accounts.identity import digest
from dealroom.services.live.events import LoginRequiredChangedEvent, pane_channel
from dealroom.services.turns.queue import new_run

Publish = tuple[str, str]

LOGIN_REQUIRED = "LOGIN_REQUIRED"


def login_required(message: str) -> DomainError:
    """FORBIDDEN with ``extensions.reason = LOGIN_REQUIRED``: sign in, then try again."""
    return DomainError(ErrorCode.FORBIDDEN, message, reason=LOGIN_REQUIRED)


def gate_run(room_id: uuid.UUID, visitor_id: uuid.UUID, now: datetime) -> AgentRun:
    """The gate's line, said by the guest's own agent (``jobs/gate_line.py``)."""
    return new_run(room_id=room_id, participant_id=visitor_id, agent=AgentName.GATE, now=now)


async def login_required_changed(
    db: Db, room_id: uuid.UUID, visitor_id: uuid.UUID, value: bool
) -> Publish:
    after = await pane_end(db, room_id, visitor_id)
    return (
        pane_channel(room_id, Seat.VISITOR),
        LoginRequiredChangedEvent(after=after, login_required=value).encode(),
    )


async def check_guest_post(
    db: Db, participant: Participant | WriterSeat, *, cap: int, now: datetime, made: int | None
) -> tuple[list[AgentRun], list[Publish]]:
    """A guest's post under the cap: refused past it (never silently dropped); the post that
    reaches it raises the gate (its line and ``LoginRequiredChanged``). Signed-in, act-as and
    demo visitors are bound to an account and never counted. ``made``: the guest's charged
    posts, counted up to ``cap`` with the room (``room_for_writer``'s ``count``); None for a
    seat that is not an unclaimed guest's."""
    if participant.account_id is not None or participant.guest_key_hash is None:
        return [], []
    assert made is not None  # an unclaimed guest's seat is always counted
    if made >= cap:
        raise login_required(
            f"Guests may send {cap} messages; sign in or create an account to keep going."
        )
    if made + 1 < cap:
        return [], []
    run = gate_run(participant.room_id, participant.id, now)
    changed = await login_required_changed(db, participant.room_id, participant.id, True)
    return [run], [changed]


async def mint_allowed(
    db: Db, client_ip: str | None, guest_key_hash: str, *, per_hour: int, now: datetime
) -> None:
    """Count a guest key handed to ``client_ip``; RATE_LIMITED past ``per_hour`` an hour.
    The key is recorded with the address: the message cap counts the address's keys."""
    ip_hash = digest(client_ip or "unknown")
    since = now - timedelta(hours=1)
    minted = await GuestKeyRepository(db).minted_since(ip_hash, since)
    if minted >= per_hour:
        raise DomainError(
            ErrorCode.RATE_LIMITED,
            "Too many new guest visits from this address; sign in or try again later.",
            retryAfterSeconds=3600,
        )
    await db.add(
        GuestKeyMint(
            id=uuid.uuid4(), ip_hash=ip_hash, guest_key_hash=guest_key_hash, created_at=now
        )
    )
