"""The services an account offers (domain/service_parts.py): its own list, read and set by
itself (or by a manager acting as it). A service's name and key are public (they are in its
link); what durable memory holds for it is not."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from dealroom.domain import service_parts
from dealroom.domain.errors import DomainError, ErrorCode, not_found, unauthenticated
from dealroom.persistence.db import Db
from dealroom.persistence.durable import DurableRepository
from dealroom.persistence.models import Service
from dealroom.persistence.offered_services import ServiceRepository
from dealroom.services.accounts.identity import Identity


async def services_of(db: Db, account_id: uuid.UUID) -> list[Service]:
    return await ServiceRepository(db).of_account(account_id)


async def offered_service(db: Db, host_id: uuid.UUID, service: str | None) -> Service | None:
    """The host's service a link names by key or name (None when it names none); NOT_FOUND for
    one the host does not offer."""
    if service is None or not service.strip():
        return None
    offered = await ServiceRepository(db).by_key(host_id, service_parts.service_key(service))
    if offered is None:
        raise not_found("Service")
    return offered


async def set_services(
    db: Db, identity: Identity, names: Sequence[str], now: datetime
) -> list[Service]:
    """Replace the account's list: a name whose key (S4) is already offered keeps its row (and
    the rooms and memory part that go with it), new ones are added, and ones left out are
    removed. CONFLICT when a room is about one left out: its rooms would fall back to the
    shared part and their curator would write that service's facts there."""
    account = identity.account
    if account is None:
        raise unauthenticated()
    cleaned = service_parts.clean_names(names)
    if not await DurableRepository(db).lock_account(account.id):  # one writer of the list
        raise not_found("Account")
    repo = ServiceRepository(db)
    held = {service_parts.service_key(s.name): s for s in await repo.of_account(account.id)}
    wanted = {key for key, _name in cleaned}
    gone = [s for key, s in held.items() if key not in wanted]
    used = await repo.rooms_using([s.id for s in gone])
    if used:
        names_used = ", ".join(sorted(s.name for s in gone if s.id in used))
        raise DomainError(
            ErrorCode.CONFLICT,
            f"Rooms are about {names_used}: it stays offered.",
            field="services",
        )
    await repo.remove([s.id for s in gone])
    for key, name in cleaned:
        if key in held:
            held[key].name = name
    await repo.add(account.id, [name for key, name in cleaned if key not in held], now)
    await db.flush()
    return await repo.of_account(account.id)
