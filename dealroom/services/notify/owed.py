"""The Guard's view of a waiting principal: a principal decision with no instruction yet, or a
written offer the brand approved and the host has not, is owed by the host. The Guard's repair
for it is to make sure the reminder path is armed (a wait row exists) — never to answer for the
principal."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.notifications import NotificationRepository
from dealroom.persistence.offers import OfferRepository
from dealroom.services.notify.kinds import Audience, Kind
from dealroom.services.notify.outbox import Note, Publish, host_link, write
from dealroom.services.offers.reads import stage_of


@dataclass
class Armed:
    edits: list[dict[str, str]] = field(default_factory=list)
    """In the Guard's verdict's shape (kind, target, detail)."""
    published: list[Publish] = field(default_factory=list)


def pending_decisions(memory: Mapping[str, Any]) -> list[str]:
    """The keys of principal decisions put to the host with no instruction yet."""
    decisions = memory.get("pendingPrincipalDecisions")
    if not isinstance(decisions, Mapping):
        return []
    return [
        str(key)
        for key, entry in decisions.items()
        if isinstance(entry, Mapping)
        and entry.get("side", Seat.HOST.value) == Seat.HOST.value
        and not entry.get("principalInstruction")
    ]


async def ensure_armed(
    db: Db, room_id: uuid.UUID, memory: Mapping[str, Any], now: datetime
) -> Armed:
    """Arm a wait for what the host owes, unless one is armed already (the Guard's repair,
    run once per quiet room: one read of the offer, more only when something is owed)."""
    armed = Armed()
    decisions = pending_decisions(memory)
    repo = NotificationRepository(db)
    offer = await OfferRepository(db).current(room_id)
    approval = offer is not None and stage_of(offer) == Stage.BRAND_ACKED_AWAITING_TALENT
    if not decisions and not approval:
        return armed
    if await repo.armed(room_id):
        return armed
    facts = await repo.room_facts(room_id)
    if facts is None:
        return armed
    host = str(facts.participant_ids.get(Seat.HOST.value))
    notes: list[Note] = []
    if decisions:
        key = decisions[0]
        notes.append(
            Note(
                account_id=facts.host_account_id,
                kind=Kind.DECISION,
                audience=Audience.HOST,
                source=f"owed:{room_id}:{key}:{now.date().isoformat()}",
                title="Your agent is waiting for your decision",
                body=f"In \u201c{facts.title}\u201d your agent asked you something it may not "
                "decide for you.",
                link=host_link(room_id),
                reason="Your agent asked you something it may not decide for you.",
                room_id=room_id,
                wait={"decision": key, "host": host, "waitingKey": Seat.VISITOR.value},
            )
        )
    if approval and offer is not None:
        notes.append(
            Note(
                account_id=facts.host_account_id,
                kind=Kind.APPROVAL,
                audience=Audience.HOST,
                source=f"owed:{offer.id}:{offer.version}",
                title=f"{facts.title}: the written offer waits for your approval",
                body="The brand approved the written offer; it waits for your approval.",
                link=host_link(room_id),
                reason="You host this deal room.",
                room_id=room_id,
                wait={
                    "offer": str(offer.id),
                    "stage": Stage.BRAND_ACKED_AWAITING_TALENT.value,
                    "version": offer.version,
                    "host": host,
                    "waitingKey": Seat.VISITOR.value,
                },
            )
        )
    written = await write(db, now, notes, facts)
    armed.published += written.published
    armed.edits += [
        {"kind": "reminder", "target": n.kind.value, "detail": "armed for a waiting principal"}
        for n in notes
    ]
    return armed
