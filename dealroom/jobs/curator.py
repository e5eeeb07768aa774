"""The curator step: the second link of a room's quiet chain (seed 000 "Rooms never close;
quiet remains Arvist's catch-up").

When a room has been quiet for ``DEALROOM_CURATOR_QUIET_SECONDS``, the watch asks the curator
step which runs to queue. The step queues one ``arvist`` run per bound participant (one with
an account: a guest has no durable memory to promote into) — but only once a handler for
``AgentName.ARVIST`` is registered on the runner. Until then it queues nothing: no run is
recorded that no agent would do. A scripted or demo room never promotes (D5): it gets one run
in the host's pane, recorded done with no writes and a "skipped: …" reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from dealroom.agents.models.base import AgentName
from dealroom.domain.seats import RoomMode
from dealroom.jobs.arvist import curator_runs
from dealroom.persistence.models import AgentRun, Participant


@dataclass(frozen=True, slots=True)
class Quiet:
    """A room that went quiet: what the curator step may read to decide what to queue."""

    room_id: uuid.UUID
    mode: RoomMode
    generation: int
    participants: Sequence[Participant]
    now: datetime


CuratorStep = Callable[[Quiet], list[AgentRun]]
"""Returns the runs to queue, in the watch's transaction (so each quiet fires them once)."""


def arvist_step(registered: Callable[[AgentName], bool]) -> CuratorStep:
    """The curator step the runner wires: Arvist per bound participant once it can run; a
    scripted or demo room gets one run recorded done with no writes (D5, ``curator_runs``)."""

    def step(quiet: Quiet) -> list[AgentRun]:
        if not registered(AgentName.ARVIST):
            return []
        return curator_runs(
            quiet.room_id,
            quiet.mode,
            quiet.participants,
            quiet.now,
            watch_generation=quiet.generation,
        )

    return step
