"""Conversation sessions (seed 000 "The transcript is read by session")."""

from __future__ import annotations

from datetime import datetime, timedelta

DEFAULT_PAUSE = timedelta(minutes=30)


def session_number(
    previous_no: int | None,
    previous_at: datetime | None,
    now: datetime,
    pause: timedelta = DEFAULT_PAUSE,
) -> int:
    """S1: a pane's first message opens session 1. S2: a participant returning after a pause
    longer than ``pause`` opens the next session; a continuous sitting is never cut."""
    if previous_no is None or previous_at is None:
        return 1
    return previous_no + 1 if now - previous_at > pause else previous_no
