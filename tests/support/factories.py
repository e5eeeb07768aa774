"""State for tests that are not about the chat that would produce it: the rows a flow leaves,
made by the services that make them, in one unit of work, with no HTTP and no agent turns.

Each factory says which flow it stands for; the flow itself keeps its own end-to-end test.
"""

from __future__ import annotations

import uuid

from dealroom.agents import offer_gen
from dealroom.agents.models.base import AgentName
from dealroom.domain.seats import Seat
from dealroom.persistence.models import Room
from dealroom.persistence.repositories import RoomRepository
from dealroom.services.offers.actions import queue_agreement
from dealroom.services.offers.draw import draw
from dealroom.services.turns.context import RunSnapshot
from tests.conftest import Server
from tests.support.offers import settle

AGREED = offer_gen.OfferGenOutput(
    deliverables=["sponsored post"],
    fee_amount="8000",
    currency="USD",
    dates=["2027-03-15"],
    usage_rights=None,
    exclusivity=None,
    due_slice_percent="50",
    open_questions=[offer_gen.OPEN_USAGE_RIGHTS, offer_gen.OPEN_EXCLUSIVITY],
)
"""What Offer-Gen extracts from ``offers.negotiate_to_offer``'s chat (the offline engine's
reading of it, asserted in tests/e2e/test_offers.py)."""


async def written_offer(
    server: Server, room_id: str, agreed: offer_gen.OfferGenOutput = AGREED
) -> str:
    """The room's first written offer, as Offer-Gen's apply mints it when the chat agrees
    (``offers.draw`` then the agreement draft, in one unit of work), with the stage notices and
    the agreement run settled as ``negotiate_to_offer`` leaves them; returns the offer's id."""
    deps = server.runner.deps
    room_uuid = uuid.UUID(room_id)
    async with deps.unit() as uow:
        db = uow.db
        now = deps.clock.now()
        rooms = RoomRepository(db)
        await rooms.lock(room_uuid)
        room = await db.get(Room, room_uuid)
        assert room is not None, room_id
        seats = {p.key: p for p in await rooms.participants(room_uuid)}
        host, visitor = seats[Seat.HOST.value], seats[Seat.VISITOR.value]
        run = RunSnapshot(
            uuid.uuid4(), room.id, visitor.id, AgentName.OFFER_GEN.value, None, None, 0, 1
        )
        published = await draw(
            db,
            deps.clock,
            run,
            room,
            host,
            visitor,
            offer_gen.to_terms(agreed),
            now,
            band_percent=deps.settings.firewall_band_percent,
        )
        await db.add(queue_agreement(room.id, host.id, now))
        uow.publish(*published)
        uow.announce()
        offer_id = str(memory_offer(room))
    await settle(server)
    return offer_id


def memory_offer(room: Room) -> str:
    """The id the room's memory records for its first offer (``new-offer``)."""
    offers = (room.memory or {}).get("offers", {})
    offer_id: str = offers["new-offer"]["offerId"]
    return offer_id
