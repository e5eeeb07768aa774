"""The fake clock: the one edge tests move instead of sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ManualClock:
    """Advances by ``step`` on every read so that writes keep a strict order, and jumps when
    a test calls ``advance``."""

    def __init__(
        self, start: datetime | None = None, step: timedelta = timedelta(microseconds=1000)
    ) -> None:
        self._now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._step = step

    def now(self) -> datetime:
        self._now += self._step
        return self._now

    def advance(self, delta: timedelta) -> None:
        self._now += delta
