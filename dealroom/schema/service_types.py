"""GraphQL type of a service an account offers. A service's name and key are public (they are
in its link); what durable memory holds for each service is the owner's only (``Me.memory``)."""

from __future__ import annotations

import strawberry

from dealroom.domain.service_parts import service_key
from dealroom.persistence import models


@strawberry.type(description="Something an account offers (a sponsored post, a keynote).")
class OfferedService:
    key: str = strawberry.field(
        description="The service's key: its name in lower case with every run of other "
        "characters one '_'. The link /z/<handle>/<key> opens a room about it."
    )
    name: str = strawberry.field(description="The service's name, as the account gave it.")

    @classmethod
    def from_row(cls, row: models.Service) -> OfferedService:
        return cls(key=service_key(row.name), name=row.name)
