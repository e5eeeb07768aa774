"""The throttles this API applies, over ``services/accounts/throttle.py``:

* posts by one participant (account or guest key) across all its rooms per minute: the
  per-pane limit alone multiplied with every room opened;
* rooms created and guest keys minted per client IP per hour (anonymous visits);
* ``signIn`` failures per email and client IP, with an exponential backoff;
* invitations sent by one account per hour (each one emails an address it names).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import TypeVar

from dealroom.config import Settings
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.persistence.db import Db
from dealroom.services.accounts.identity import Identity, digest
from dealroom.services.accounts.throttle import Backoff, Limit, clear, hit, hit_at_commit, record

T = TypeVar("T")

SIGN_IN_WAIT_CAP = timedelta(minutes=15)


def posts_across_rooms(settings: Settings) -> Limit:
    return Limit("posts", settings.posts_per_minute_across_rooms, timedelta(minutes=1))


def sign_in_failures(settings: Settings) -> Backoff:
    return Backoff(
        Limit("sign-in-failures", 1 << 30, timedelta(hours=1)),
        free=settings.sign_in_free_failures,
        cap=SIGN_IN_WAIT_CAP,
    )


async def count_post(db: Db, settings: Settings, identity: Identity, now: datetime) -> None:
    """Last in postMessage's unit, for a post stored (a retry is not counted): RATE_LIMITED past
    the cross-room limit, which rolls the post back. On PostgreSQL counted at the commit, in one
    statement with the post's runs and its room's watch, and on an autocommitted post in its
    append's statement (``Db.write_autocommit``)."""
    viewer = identity.viewer
    subject = f"a:{viewer.account_id}" if viewer.account_id else f"g:{viewer.guest_key_hash}"
    limit = posts_across_rooms(settings)
    await hit_at_commit(
        db, limit, subject, now, f"At most {limit.count} messages a minute across your rooms."
    )


async def count_visit(
    db: Db, settings: Settings, ip: str, now: datetime, *, created: bool, minted: bool
) -> None:
    """Inside openVisitorRoom's transaction, after it: a room created or a guest key minted
    counts against the client's IP (a refusal rolls the room back)."""
    per_hour = timedelta(hours=1)
    if created:
        rooms = Limit("rooms-per-ip", settings.rooms_per_ip_per_hour, per_hour)
        await hit(db, rooms, ip, now, f"At most {rooms.count} new rooms an hour from one address.")
    if minted:
        keys = Limit("guest-keys-per-ip", settings.guest_keys_per_ip_per_hour, per_hour)
        await hit(db, keys, ip, now, f"At most {keys.count} guest keys an hour from one address.")


async def count_invitation(
    db: Db, settings: Settings, account_id: uuid.UUID, now: datetime
) -> None:
    """Inside inviteToRoom's transaction, after it: RATE_LIMITED past the hourly limit, which
    rolls the invitation and its email back."""
    limit = Limit("invitations", settings.invitations_per_hour, timedelta(hours=1))
    await hit(db, limit, str(account_id), now, f"At most {limit.count} invitations an hour.")


async def guard_sign_in(
    transaction: Callable[[], AbstractAsyncContextManager[Db]],
    settings: Settings,
    now: datetime,
    *,
    email: str,
    ip: str,
    attempt: Callable[[Db], Awaitable[T]],
) -> T:
    """Run ``attempt`` in a transaction unless this email and IP are waiting out a backoff.
    A success clears their failures; a wrong password is counted after the sign-in's
    transaction rolled back, in one of its own on the same unit of work."""
    backoff = sign_in_failures(settings)
    subject = f"{digest(email.strip().lower())}:{ip}"
    try:
        async with transaction() as db:
            await backoff.check(
                db, subject, now, "Too many failed sign-ins; wait before trying again."
            )
            result = await attempt(db)
            await clear(db, backoff.limit, subject)
            return result
    except DomainError as error:
        if error.code is ErrorCode.UNAUTHENTICATED:
            await record(db, backoff.limit, subject, now)
        raise
