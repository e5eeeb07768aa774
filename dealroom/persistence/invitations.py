"""Queries for invitations to a room's side and for the participants they add or a removal
takes out (``invitations``, ``participants``). Repositories flush, never commit."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import func, select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Invitation, Participant


class InvitationRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def add(self, invitation: Invitation) -> None:
        await self.db.add(invitation)
        await self.db.flush()

    async def by_token_hash(self, token_hash: str, *, lock: bool = False) -> Invitation | None:
        """The invitation with this digest; ``lock`` holds its row until the transaction ends
        and re-reads it over what the session holds (a second accept waits, then sees it used)."""
        statement = select(Invitation).where(Invitation.token_hash == token_hash)
        if lock:
            statement = statement.with_for_update().execution_options(populate_existing=True)
        return await self.db.scalar(statement)

    async def mark_used(self, invitation: Invitation, account_id: uuid.UUID, now: datetime) -> None:
        invitation.used_at = now
        invitation.used_by = account_id
        await self.db.flush()

    async def active_count(self, room_id: uuid.UUID) -> int:
        """The room's participants that were not removed."""
        count = await self.db.scalar(
            select(func.count())
            .select_from(Participant)
            .where(Participant.room_id == room_id, Participant.removed_at.is_(None))
        )
        return int(count or 0)

    async def participants(self, room_id: uuid.UUID) -> list[Participant]:
        """Every participant of the room, removed ones included, re-read over what the session
        holds (call it under the room's lock: a decision is made on committed rows)."""
        return list(
            await self.db.scalars(
                select(Participant)
                .where(Participant.room_id == room_id)
                .order_by(Participant.key)
                .execution_options(populate_existing=True)
            )
        )

    async def add_participant(self, participant: Participant) -> None:
        await self.db.add(participant)
        await self.db.flush()

    async def remove_participant(self, participant: Participant, now: datetime) -> None:
        """Unbind the participant (its account and guest key) so it holds nothing; its pane
        stays for the host side to read."""
        participant.removed_at = now
        participant.account_id = None
        participant.guest_key_hash = None
        await self.db.flush()

    async def set_shared(self, participant: Participant, shared: bool) -> None:
        participant.shared = shared
        await self.db.flush()

    async def set_may_approve(self, participant: Participant, allowed: bool) -> None:
        participant.may_approve = allowed
        await self.db.flush()
