"""The batched reads behind held subscriptions' re-checks (``services/live/rechecks.py``): each
answers for every credential or room held in the process in one statement per chunk of ids
(the rooms' seats in one statement in all on PostgreSQL, ``id_lists``), so a round costs the
same whether one subscription or thousands hold them."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from dealroom.domain.access import SeatHolder
from dealroom.persistence import id_lists
from dealroom.persistence.db import Db
from dealroom.persistence.models import AccountManager, ApiKey, AuthSession, Participant

_SEAT_ROWS = select(
    Participant.room_id,
    Participant.key,
    Participant.id,
    Participant.account_id,
    Participant.guest_key_hash,
    Participant.shared,
)
_SEATS_OF_ROOMS = _SEAT_ROWS.where(id_lists.any_of(Participant.room_id, "room_ids"))


@dataclass(frozen=True, slots=True)
class KeyStanding:
    account_id: uuid.UUID
    scopes: frozenset[str]


@dataclass(frozen=True, slots=True)
class RoomSeats:
    """Who holds a room's seats, and each seat's participant (a pane's id)."""

    holders: tuple[SeatHolder, ...]
    panes: tuple[tuple[str, uuid.UUID], ...]
    """Each participant's key and id."""


class StandingRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def live_sessions(
        self, token_hashes: Collection[str], now: datetime
    ) -> dict[str, uuid.UUID]:
        """The account of each live (unexpired, unrevoked) session among ``token_hashes``."""
        found: dict[str, uuid.UUID] = {}
        for chunk in id_lists.chunks(token_hashes):
            rows = await self.db.execute(
                select(AuthSession.token_hash, AuthSession.account_id).where(
                    AuthSession.token_hash.in_(chunk),
                    AuthSession.expires_at > now,
                    AuthSession.revoked_at.is_(None),
                )
            )
            found.update((row.token_hash, row.account_id) for row in rows)
        return found

    async def live_keys(self, key_hashes: Collection[str]) -> dict[str, KeyStanding]:
        """The account and scopes of each unrevoked API key among ``key_hashes`` (a key's
        account's deletion cascades to its keys)."""
        found: dict[str, KeyStanding] = {}
        for chunk in id_lists.chunks(key_hashes):
            rows = await self.db.execute(
                select(ApiKey.key_hash, ApiKey.account_id, ApiKey.scopes).where(
                    ApiKey.key_hash.in_(chunk), ApiKey.revoked_at.is_(None)
                )
            )
            for row in rows:
                found[row.key_hash] = KeyStanding(row.account_id, frozenset(row.scopes or ()))
        return found

    async def manager_edges(
        self, manager_ids: Collection[uuid.UUID]
    ) -> set[tuple[uuid.UUID, uuid.UUID]]:
        """Every (manager, managed) edge from ``manager_ids`` (an account's deletion cascades
        to its edges, so an edge's target exists)."""
        found: set[tuple[uuid.UUID, uuid.UUID]] = set()
        for chunk in id_lists.chunks(manager_ids):
            rows = await self.db.execute(
                select(AccountManager.manager_id, AccountManager.managed_id).where(
                    AccountManager.manager_id.in_(chunk)
                )
            )
            found.update((row.manager_id, row.managed_id) for row in rows)
        return found

    async def room_seats(self, room_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, RoomSeats]:
        """Each room's seat bindings; a room that is gone is absent (its participants
        cascade with it)."""
        holders: dict[uuid.UUID, list[SeatHolder]] = {}
        panes: dict[uuid.UUID, list[tuple[str, uuid.UUID]]] = {}
        rows = await id_lists.rows_for(
            self.db,
            room_ids,
            as_array=_SEATS_OF_ROOMS,
            param="room_ids",
            in_list=lambda chunk: _SEAT_ROWS.where(Participant.room_id.in_(chunk)),
        )
        for row in rows:
            holding = SeatHolder(row.key, row.account_id, row.guest_key_hash, row.shared)
            holders.setdefault(row.room_id, []).append(holding)
            panes.setdefault(row.room_id, []).append((row.key, row.id))
        return {
            room_id: RoomSeats(tuple(held), tuple(sorted(panes[room_id])))
            for room_id, held in holders.items()
        }
