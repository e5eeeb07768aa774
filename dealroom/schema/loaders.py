"""Per-request DataLoaders: one statement per kind of thing a page needs, whatever its size."""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar

from strawberry.dataloader import DataLoader

from dealroom.persistence.db import Db
from dealroom.persistence.guest_posts import guest_capped_rooms
from dealroom.persistence.links import LinkRepository
from dealroom.persistence.models import (
    Account,
    AccountMemory,
    Message,
    Offer,
    Participant,
    PerceivedLink,
    Service,
)
from dealroom.persistence.offered_services import ServiceRepository
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.repositories import AccountRepository, MessageRepository, RoomRepository

K = TypeVar("K")
V = TypeVar("V")


class Loader(Generic[K, V]):
    """A DataLoader whose shared futures survive one waiter's cancellation.

    graphql-core cancels sibling fields once a non-null error nulls their parent; a cancelled
    waiter would cancel the batch future every other field of the page is awaiting too."""

    def __init__(self, load_fn: Callable[[Sequence[K]], Awaitable[Sequence[V]]]) -> None:
        self._loader: DataLoader[K, V] = DataLoader(load_fn)

    async def load(self, key: K) -> V:
        return await asyncio.shield(self._loader.load(key))

    def prime(self, key: K, value: V) -> None:
        self._loader.prime(key, value)


@dataclass
class Loaders:
    participants: Loader[uuid.UUID, list[Participant]]
    accounts: Loader[uuid.UUID, Account | None]
    last_message: Loader[uuid.UUID, Message | None]
    """Keyed by pane (participant id)."""
    memory: Loader[uuid.UUID, AccountMemory | None]
    login_required: Loader[uuid.UUID, bool]
    held_effects: Loader[uuid.UUID, int]
    current_offer: Loader[uuid.UUID, Offer | None]
    """Keyed by room: its current written offer (the stage is derived from it)."""
    services: Loader[uuid.UUID, Service | None]
    """Keyed by service id: the service a room is about."""
    links: Loader[uuid.UUID, list[PerceivedLink]]
    """Keyed by message id: the links perceived in it."""


def create_loaders(
    db: Db, guest_cap: int | None = None, now: Callable[[], datetime] | None = None
) -> Loaders:
    """``now`` reads the clock for the guest cap's window (the app's clock)."""
    now = now or (lambda: datetime.now(UTC))
    rooms = RoomRepository(db)
    accounts = AccountRepository(db)
    messages = MessageRepository(db)

    async def load_participants(keys: Sequence[uuid.UUID]) -> list[list[Participant]]:
        grouped: dict[uuid.UUID, list[Participant]] = defaultdict(list)
        for row in await rooms.participants_of(list(keys)):
            grouped[row.room_id].append(row)
        return [grouped.get(key, []) for key in keys]

    async def load_accounts(keys: Sequence[uuid.UUID]) -> list[Account | None]:
        found = {row.id: row for row in await accounts.by_ids(list(keys))}
        return [found.get(key) for key in keys]

    async def load_last_message(keys: Sequence[uuid.UUID]) -> list[Message | None]:
        found = {row.participant_id: row for row in await messages.last_in_panes(list(keys))}
        return [found.get(key) for key in keys]

    async def load_memory(keys: Sequence[uuid.UUID]) -> list[AccountMemory | None]:
        found = {row.account_id: row for row in await accounts.memories(list(keys))}
        return [found.get(key) for key in keys]

    async def load_login_required(keys: Sequence[uuid.UUID]) -> list[bool]:
        held = await rooms.unclaimed_rooms_with_held_effects(list(keys))
        if guest_cap is not None:
            held |= await guest_capped_rooms(db, list(keys), guest_cap, now())
        return [key in held for key in keys]

    async def load_held_effects(keys: Sequence[uuid.UUID]) -> list[int]:
        found = await rooms.held_effects(list(keys))
        return [found.get(key, 0) for key in keys]

    async def load_current_offer(keys: Sequence[uuid.UUID]) -> list[Offer | None]:
        found = await OfferRepository(db).current_for_rooms(list(keys))
        return [found.get(key) for key in keys]

    async def load_services(keys: Sequence[uuid.UUID]) -> list[Service | None]:
        found = {row.id: row for row in await ServiceRepository(db).by_ids(list(keys))}
        return [found.get(key) for key in keys]

    async def load_links(keys: Sequence[uuid.UUID]) -> list[list[PerceivedLink]]:
        grouped: dict[uuid.UUID, list[PerceivedLink]] = defaultdict(list)
        for row in await LinkRepository(db).by_messages(list(keys)):
            grouped[row.message_id].append(row)
        return [grouped.get(key, []) for key in keys]

    return Loaders(
        participants=Loader(load_participants),
        accounts=Loader(load_accounts),
        last_message=Loader(load_last_message),
        memory=Loader(load_memory),
        login_required=Loader(load_login_required),
        held_effects=Loader(load_held_effects),
        current_offer=Loader(load_current_offer),
        services=Loader(load_services),
        links=Loader(load_links),
    )
