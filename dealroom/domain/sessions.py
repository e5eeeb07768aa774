"""Conversation sessions (seed 000 "The transcript is read by session")."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import assert_never

DEFAULT_PAUSE = timedelta(minutes=30)


class SessionRule(StrEnum):
    """How a message stored in a pane picks its session (S1 holds for all three)."""

    SITTING = "sitting"
    """S2: a participant's post; a pause longer than the limit opens the next session."""
    OPENS = "opens"
    """S3: an agent reaching out unprompted (a delivery, a stage notice) into a pane that went
    quiet for longer than the pause opens the next session; into a live sitting it continues
    it, since a continuous sitting is never cut (seed 000) and the agent must know what was
    just said there."""
    CONTINUES = "continues"
    """S4: the agent's reply, a system line, a held send's question or an operator's line
    continues the pane's current session, however long it has been."""


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


def next_session(
    rule: SessionRule,
    previous_no: int | None,
    previous_at: datetime | None,
    now: datetime,
    pause: timedelta = DEFAULT_PAUSE,
) -> int:
    """The session of a message stored now in a pane whose newest message has session
    ``previous_no`` and was stored at ``previous_at`` (S1-S4). The pane log's statement on
    PostgreSQL writes the same rule in SQL."""
    match rule:
        case SessionRule.SITTING:
            return session_number(previous_no, previous_at, now, pause)
        case SessionRule.OPENS:
            return session_number(previous_no, previous_at, now, pause)
        case SessionRule.CONTINUES:
            return 1 if previous_no is None or previous_at is None else previous_no
        case _:
            assert_never(rule)
