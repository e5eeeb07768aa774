"""Resolvers behind the fields of the signed-in account (``Me``): read through the
repositories and return rows, which the type maps (this module imports no schema type, so the
type can import it without a cycle)."""

from __future__ import annotations

import uuid

from dealroom.persistence import models
from dealroom.persistence.repositories import AccountRepository, RoomRepository
from dealroom.schema.context import Info


async def email(info: Info, account_id: uuid.UUID) -> str | None:
    credential = await AccountRepository(info.context.db).credential_for(account_id)
    return credential.email if credential else None


async def home_room(info: Info, account_id: uuid.UUID) -> models.Room | None:
    return await RoomRepository(info.context.db).home_room(account_id)


async def managed_accounts(info: Info, manager_id: uuid.UUID) -> list[models.Account]:
    """The accounts the signed-in account may act as."""
    return await AccountRepository(info.context.db).managed_by(manager_id)
