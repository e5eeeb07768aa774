"""The process's heartbeat for followed streams.

A wake-up can be lost: a publish that failed for good, a process killed between its commit and its
publish. Rather than every followed stream re-reading the database when idle (at 5,000 held
subscriptions, ~170 reads a second doing nothing), the process reads, once per
``subscription_heartbeat_seconds``, where every followed pane and offer ends (one statement per
500, ``persistence/stream_ends.py``), and wakes only the streams behind that end: they re-read as
after a RESYNC. An idle stream that is up to date costs no read."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.persistence.stream_ends import offer_ends, pane_ends
from dealroom.services.live.periodic import Periodic
from dealroom.services.unit_of_work import reading

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """What a stream follows: a pane (its participant) or an offer."""

    kind: Literal["pane", "offer"]
    id: uuid.UUID


@dataclass(eq=False, slots=True)
class Followed:
    """One stream: its end, the cursor it has delivered, and how to wake it."""

    end: StreamEnd
    delivered: Callable[[], int]
    wake: Callable[[], None]


class Heartbeats:
    """The registry, run by the app's lifespan like the re-checks."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], every: float) -> None:
        self._sessionmaker = sessionmaker
        self._followed: set[Followed] = set()
        # Retried at the next beat; meanwhile live wake-ups go on as ever.
        self._loop = Periodic(every, self.beat, "stream_heartbeat_failed")

    def start(self) -> None:
        self._loop.start()

    async def close(self) -> None:
        await self._loop.close()

    def follow(self, followed: Followed) -> None:
        self._followed.add(followed)

    def forget(self, followed: Followed) -> None:
        self._followed.discard(followed)

    async def beat(self) -> int:
        """Read where every followed stream ends; wake those behind. Returns how many."""
        followed = list(self._followed)
        if not followed:
            return 0
        panes = {f.end.id for f in followed if f.end.kind == "pane"}
        offers = {f.end.id for f in followed if f.end.kind == "offer"}
        async with reading(self._sessionmaker) as db:
            ends = {
                **{StreamEnd("pane", k): v for k, v in (await pane_ends(db, panes)).items()},
                **{StreamEnd("offer", k): v for k, v in (await offer_ends(db, offers)).items()},
            }
        woken = 0
        for one in followed:
            if ends.get(one.end, 0) > one.delivered() and one in self._followed:
                one.wake()
                woken += 1
        return woken
