"""Written offers, read: an offer's rule state and its stage, the room's live stage, and
who may read or act on an offer (ARCHITECTURE "Offers and the stage vocabulary"; rules O1-O9
in ``domain/offers.py``). Changing one is ``offer_actions`` and ``offer_payments``; its stage
events are ``offer_events``.

Every change to an offer takes the room's row lock first and re-reads the offer under it
(:func:`locked_offer`), so two clicks (both sides at once, or a double click) decide one after
the other.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from dealroom.domain import offers as rules
from dealroom.domain.errors import DomainError, ErrorCode, not_found
from dealroom.domain.offer_stage import OfferRow, OfferStatus, Stage, derive_stage
from dealroom.domain.seats import Seat, is_lead
from dealroom.persistence.db import Db
from dealroom.persistence.models import Offer
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.rooms import guests
from dealroom.services.rooms.service import RoomAccess, parse_id, room_for_reader


def state_of(offer: Offer) -> rules.OfferState:
    return rules.OfferState(OfferStatus(offer.status), offer.brand_approved_at, offer.version)


def stage_of(offer: Offer | None) -> Stage:
    if offer is None:
        return derive_stage(None)
    return derive_stage(OfferRow(OfferStatus(offer.status), offer.brand_approved_at))


async def room_stage(db: Db, room_id: uuid.UUID) -> Stage:
    """The live stage of a room, projected from its current offers row (ST1)."""
    return stage_of(await OfferRepository(db).current(room_id))


@dataclass(frozen=True, slots=True)
class OfferAccess:
    offer: Offer
    room: RoomAccess


async def offer_for_reader(db: Db, identity: Identity, offer_id: uuid.UUID) -> OfferAccess:
    """Participants only: anyone else gets NOT_FOUND, as for rooms."""
    offer = await OfferRepository(db).by_id(offer_id)
    if offer is None:
        raise not_found("Offer")
    try:
        room = await room_for_reader(db, identity, offer.room_id)
    except DomainError as exc:
        if exc.code is ErrorCode.NOT_FOUND:
            raise not_found("Offer") from None
        raise
    return OfferAccess(offer, room)


def parse_offer_id(raw: str) -> uuid.UUID:
    return parse_id(raw, "offer")


async def locked_offer(db: Db, offer_id: uuid.UUID, room_id: uuid.UUID) -> Offer:
    """The offer re-read under its room's lock: decisions are made on committed state."""
    await RoomRepository(db).lock(room_id)
    offer = await OfferRepository(db).by_id(offer_id, fresh=True)
    if offer is None:
        raise not_found("Offer")
    return offer


def approver(room: RoomAccess, seat: Seat) -> None:
    """The written offer names two parties, and they approve it: the host (its manager acting
    as the host through act-as holds the host's own seat) and the buying account, with the
    members of the buyer's side it allowed (``may_approve``); anyone on the buyer's side may
    pay."""
    if is_lead(key := room.reader_key):
        return
    member = room.by_key(key)
    if seat is Seat.VISITOR and member is not None and member.may_approve:
        return
    raise DomainError(
        ErrorCode.FORBIDDEN,
        "Only the host books the written offer."
        if seat is Seat.HOST
        else "Only the buying account, or someone it allowed, approves the written offer.",
        reason="NOT_AN_APPROVER",
    )


def signed_in_buyer(room: RoomAccess, seat: Seat, verb: str) -> None:
    """A guest visitor may not approve or pay until the room is claimed (the login gate)."""
    visitor = room.participant(Seat.VISITOR)
    if seat is Seat.VISITOR and visitor is not None and visitor.account_id is None:
        raise guests.login_required(f"Sign in to {verb} the written offer.")
