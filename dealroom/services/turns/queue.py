"""The agent runs' queue rows: a run's status, a new queued run (and the pair a message
queues), and re-queuing a pane's failed runs when a user asks to re-run the turn. The workers
that claim and execute them are ``turns``."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import NotRequired, TypedDict, Unpack

from dealroom.agents.models.base import AgentName
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun
from dealroom.persistence.runs import RunRepository
from dealroom.services.clock import Clock


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class RunFields(TypedDict):
    """What a new queued run is made of; the rest of its columns are a fresh run's."""

    room_id: uuid.UUID
    participant_id: uuid.UUID
    agent: AgentName
    now: datetime
    trigger_message_id: NotRequired[uuid.UUID | None]
    trigger_dispatch_id: NotRequired[uuid.UUID | None]
    chain_depth: NotRequired[int]
    trigger_event_id: NotRequired[uuid.UUID | None]
    watch_generation: NotRequired[int | None]


def new_run(**fields: Unpack[RunFields]) -> AgentRun:
    return AgentRun(**run_values(**fields))


def run_values(**fields: Unpack[RunFields]) -> dict[str, object]:
    """A new queued run's columns (``new_run`` builds the row from them)."""
    now = fields["now"]
    return {
        "id": uuid.uuid4(),
        "room_id": fields["room_id"],
        "participant_id": fields["participant_id"],
        "agent": fields["agent"].value,
        "trigger_message_id": fields.get("trigger_message_id"),
        "trigger_dispatch_id": fields.get("trigger_dispatch_id"),
        "chain_depth": fields.get("chain_depth", 0),
        "trigger_event_id": fields.get("trigger_event_id"),
        "watch_generation": fields.get("watch_generation"),
        "status": RunStatus.QUEUED.value,
        "attempts": 0,
        "no_op": False,  # every column with a Python-side default set: the raw lane can insert it
        "not_before": now,
        "created_at": now,
    }


async def queue_for_message(
    db: Db, room_id: uuid.UUID, participant_id: uuid.UUID, message_id: uuid.UUID, now: datetime
) -> None:
    """The persona answers; Distil records beside it, never in front of it (seed 000). Their
    runs go with the unit's deferred writes (``RunRepository.queue_later``: one INSERT, no
    mapped rows built)."""
    values = [
        run_values(
            room_id=room_id,
            participant_id=participant_id,
            agent=agent,
            now=now,
            trigger_message_id=message_id,
        )
        for agent in (AgentName.PERSONA, AgentName.DISTIL)
    ]
    await RunRepository(db).queue_later(values)


async def retry_failed(db: Db, clock: Clock, participant_id: uuid.UUID) -> int:
    """Re-queue the pane's failed runs (a user asked to re-run the turn). Effects are
    committed only with a run's success, so a re-run cannot double them."""
    count = 0
    now = clock.now()
    for row in await RunRepository(db).failed_for_pane(participant_id):
        row.status = RunStatus.QUEUED.value
        row.attempts = 0
        row.not_before = now
        row.error = None
        row.finished_at = None
        count += 1
    await db.flush()
    return count
