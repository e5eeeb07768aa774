"""Resolvers behind the fields of Room, Offer, Pane and Message: read through the services and
repositories, return their values. The schema types map those values themselves, so they can
import this module without an import cycle (it imports no schema type)."""

from __future__ import annotations

import uuid

from dealroom.domain import access, money
from dealroom.domain import offers as rules
from dealroom.domain.cursors import parse_event_cursor, parse_room_cursor
from dealroom.domain.errors import bad_input
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import Seat
from dealroom.persistence import models
from dealroom.persistence.links import LinkRepository
from dealroom.persistence.offers import OfferRepository
from dealroom.schema.context import Info
from dealroom.services.offers import reads as offer_reads
from dealroom.services.offers.quotes import quote_for
from dealroom.services.rooms import messages as message_service
from dealroom.services.rooms.service import RoomAccess


async def room_access(info: Info, room: models.Room) -> RoomAccess:
    """The room as this reader sees it (the same projection the services use)."""
    participants = await info.context.loaders.participants.load(room.id)
    identity = await info.context.identity()
    keys = access.keys_of(identity.viewer, access.holders(participants))
    return RoomAccess(room, participants, keys)


async def room_offers(
    info: Info, room: models.Room, first: int, after: str | None
) -> tuple[Seat, list[models.Offer]]:
    """The reader's seat and a page of the room's offers, newest first (one more than
    ``first`` when more follow)."""
    cap = info.context.app.settings.max_page_size
    if not 0 < first <= cap:
        raise bad_input(f"first must be between 1 and {cap}.", "first")
    seat = (await room_access(info, room)).reader_seat
    rows = await OfferRepository(info.context.db).page(
        room.id, before=parse_room_cursor(after) if after else None, limit=first + 1
    )
    return seat, rows


def offer_stage(offer: models.Offer | None) -> Stage:
    return offer_reads.stage_of(offer)


def offer_actions(offer: models.Offer, seat: Seat) -> list[rules.Action]:
    """What the reader may do now, from its seat."""
    return rules.viewer_actions(offer_reads.state_of(offer), seat)


def offer_quote(offer: models.Offer) -> money.Quote | None:
    return quote_for(offer)


async def offer_payments(info: Info, offer_id: uuid.UUID) -> list[models.Payment]:
    return await OfferRepository(info.context.db).payments(offer_id)


async def offer_room(info: Info, room_id: uuid.UUID) -> models.Room:
    """The room an offer belongs to (one always does)."""
    row = await info.context.db.get(models.Room, room_id)
    assert row is not None
    return row


async def latest_agreement(info: Info, offer_id: uuid.UUID) -> models.Agreement | None:
    return await OfferRepository(info.context.db).latest_agreement(offer_id)


def _optional_cursor(value: str | None) -> int | None:
    return parse_event_cursor(value) if value is not None else None


async def pane_messages(
    info: Info,
    participant_id: uuid.UUID,
    key: str,
    first: int | None,
    after: str | None,
    last: int | None,
    before: str | None,
) -> message_service.MessagePage:
    limit_cap = info.context.app.settings.max_page_size
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 0 < value <= limit_cap:
            raise bad_input(f"{name} must be between 1 and {limit_cap}.", name)
    if first is not None and last is not None:
        raise bad_input("Pass first or last, not both.", "last")
    return await message_service.page_messages(
        info.context.db,
        participant_id,
        key,
        first=first,
        after=_optional_cursor(after),
        last=last,
        before=_optional_cursor(before),
    )


async def message_links(info: Info, message_id: uuid.UUID) -> list[models.PerceivedLink]:
    if info.context.is_websocket:
        # A socket holds no request transaction: a short read of its own.
        async with info.context.reading() as db:
            return await LinkRepository(db).by_messages([message_id])
    return await info.context.loaders.links.load(message_id)
