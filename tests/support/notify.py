"""Row factories and reads for the notification tests: a host and a signed-in brand in a deal
room, made straight in the database, and the outbox as stored."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.passwords import OWASP_MINIMUM
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Account, Notification, Room
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.identity import Identity
from dealroom.services.accounts.passwords import passwords_for
from dealroom.services.clock import Clock
from dealroom.services.notify.kinds import Audience, Kind
from dealroom.services.notify.outbox import Note, host_link, visitor_link
from dealroom.services.rooms import service as rooms


@dataclass(frozen=True)
class People:
    host: Account
    brand: Account
    room_id: uuid.UUID


async def _account(db: Db, clock: Clock, handle: str, name: str) -> Account:
    signed = await accounts.sign_up(
        db,
        clock,
        passwords_for(OWASP_MINIMUM),
        email=f"{handle}@example.com",
        password="long enough",
        handle=handle,
        display_name=name,
        ttl_days=1,
    )
    return signed.account


async def host_and_brand(
    engine: AsyncEngine, clock: Clock, *, memory: dict[str, Any] | None = None
) -> People:
    """A host (devraman) and a signed-in brand (acmebrand) in a deal room; ``memory`` is the
    room's memory (a host's private rules for the canary tests)."""
    db = Db(create_sessionmaker(engine))
    try:
        host = await _account(db, clock, "devraman", "Dev Raman")
        brand = await _account(db, clock, "acmebrand", "Acme Brand")
        opened = await rooms.open_visitor_room(
            db,
            clock,
            Identity(signed_in=brand, account=brand, guest_key=None),
            handle="devraman",
            new_conversation=False,
            greet=False,
        )
        if memory is not None:
            room = await db.get(Room, opened.room.id)
            assert room is not None
            room.memory = memory
        await db.commit()
        return People(host=host, brand=brand, room_id=opened.room.id)
    finally:
        await db.close()


def host_note(people: People, n: int = 0, **changes: Any) -> Note:
    fields: dict[str, Any] = {
        "account_id": people.host.id,
        "kind": Kind.DECISION,
        "audience": Audience.HOST,
        "source": f"test:host:{n}",
        "title": f"Acme Brand asked something only you can decide ({n})",
        "body": f"Question number {n}",
        "link": host_link(people.room_id),
        "reason": "Your agent asked you something it may not decide for you.",
        "room_id": people.room_id,
    }
    return Note(**(fields | changes))


def brand_note(people: People, n: int = 0, **changes: Any) -> Note:
    fields: dict[str, Any] = {
        "account_id": people.brand.id,
        "kind": Kind.APPROVAL,
        "audience": Audience.VISITOR,
        "source": f"test:brand:{n}",
        "title": "Dev Raman: A written offer waits for your approval.",
        "body": "In your conversation with Dev Raman: a written offer waits for your approval.",
        "link": visitor_link("devraman", people.room_id),
        "reason": "You are talking with Dev Raman in this room.",
        "room_id": people.room_id,
    }
    return Note(**(fields | changes))


async def stored(engine: AsyncEngine) -> list[Notification]:
    db = Db(create_sessionmaker(engine))
    try:
        return list(
            await db.scalars(
                select(Notification).order_by(Notification.created_at, Notification.id)
            )
        )
    finally:
        await db.close()
