"""The mutations that set the services an account offers (``Me.services`` reads them) and
choose the one a room is about (``Room.service``)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.resolvers import services
from dealroom.schema.context import Info
from dealroom.schema.room_types import Room
from dealroom.schema.service_types import OfferedService


@strawberry.type(description="Setting the services an account offers.")
class ServicesMutation:
    @strawberry.mutation(
        description="Replace the list of services the signed-in account (or the account acted "
        "as) offers; returns the list. A name whose key is already offered keeps its rooms and "
        "its part of durable memory. BAD_USER_INPUT for a name with no letter or digit, longer "
        "than 120 characters, two names with one key, or more than 20; CONFLICT when a room "
        "is about a service left out; UNAUTHENTICATED when anonymous."
    )
    async def set_services(
        self,
        info: Info,
        names: Annotated[
            list[str], strawberry.argument(description="The services' names, in order.")
        ],
    ) -> list[OfferedService]:
        return await services.set_services(info, names)

    @strawberry.mutation(
        description="Choose the host's service a deal room is about, when its link named none "
        "(any seat holder of the room): the host's agent then reads the host's standing "
        "knowledge for that service from its next turn. Choosing the room's own service again "
        "changes nothing. NOT_FOUND for a room the reader holds no seat in or a service the "
        "host does not offer; CONFLICT when the room is about another service; BAD_USER_INPUT "
        "for a home room."
    )
    async def choose_room_service(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        service: Annotated[str, strawberry.argument(description="The service's key (or name).")],
    ) -> Room:
        return await services.choose_room_service(info, room_id, service)
