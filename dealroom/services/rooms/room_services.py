"""Choosing, in a room, the host's service it is about (when its link named none)."""

from __future__ import annotations

import uuid

from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found
from dealroom.domain.seats import RoomKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import Room
from dealroom.persistence.offered_services import ServiceRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.accounts.offered import offered_service
from dealroom.services.rooms.service import room_for_reader


async def choose_service(db: Db, identity: Identity, room_id: uuid.UUID, service: str) -> Room:
    """Any seat holder of a deal room about no service may choose one of the host's services for
    it; the host's seat then merges the shared part and that service's part at its next turn
    (S1), as a room opened from the service's link was seeded. Choosing the room's own service
    again changes nothing; another is CONFLICT (the room already read its service's part)."""
    room = (await room_for_reader(db, identity, room_id)).room
    if room.kind != RoomKind.DEAL.value:
        raise bad_input("Only a deal room is about a service.", "roomId")
    offered = await offered_service(db, room.host_account_id, service)
    if offered is None:
        raise not_found("Service")
    if room.service_id == offered.id:
        return room
    repo = ServiceRepository(db)
    if room.service_id is not None or not await repo.choose(room.id, offered.id):
        raise DomainError(
            ErrorCode.CONFLICT, "This room is already about another service.", field="service"
        )
    await repo.merge_host_afresh(room.id)
    room.service_id = offered.id
    return room
