"""Conversation sessions (rules S1-S4 of dealroom.domain.sessions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealroom.domain.sessions import DEFAULT_PAUSE, SessionRule, next_session, session_number

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def test_default_pause_is_thirty_minutes() -> None:
    assert timedelta(minutes=30) == DEFAULT_PAUSE


def test_first_message_in_a_pane_opens_session_one() -> None:
    # S1: a pane's first message opens session 1.
    assert session_number(None, None, T0) == 1


def test_missing_previous_session_number_opens_session_one() -> None:
    # S1: without a previous message's session there is no session to continue.
    assert session_number(None, T0 - timedelta(hours=5), T0) == 1


def test_reply_within_the_pause_stays_in_the_session() -> None:
    # S2: a continuous sitting is never cut.
    assert session_number(4, T0, T0 + timedelta(minutes=5)) == 4


def test_reply_exactly_thirty_minutes_later_stays_in_the_session() -> None:
    # S2: only a pause *longer* than 30 minutes opens the next session.
    assert session_number(4, T0, T0 + timedelta(minutes=30)) == 4


def test_reply_just_over_thirty_minutes_later_opens_the_next_session() -> None:
    # S2: a pause longer than 30 minutes, by one microsecond, opens the next session.
    assert session_number(4, T0, T0 + timedelta(minutes=30) + MICROSECOND) == 5


def test_reply_just_under_thirty_minutes_later_stays_in_the_session() -> None:
    assert session_number(4, T0, T0 + timedelta(minutes=30) - MICROSECOND) == 4


def test_return_after_days_opens_only_one_new_session() -> None:
    # S2: a long absence is one pause, not one session per pause length.
    assert session_number(4, T0, T0 + timedelta(days=3)) == 5


def test_message_at_the_same_instant_stays_in_the_session() -> None:
    assert session_number(2, T0, T0) == 2


def test_exactly_a_custom_pause_stays_in_the_session() -> None:
    # S2: the pause is configurable; its exact length is still not a new session.
    assert session_number(1, T0, T0 + timedelta(minutes=5), pause=timedelta(minutes=5)) == 1


def test_just_over_a_custom_pause_opens_the_next_session() -> None:
    later = T0 + timedelta(minutes=5) + MICROSECOND
    assert session_number(1, T0, later, pause=timedelta(minutes=5)) == 2


def test_long_continuous_sitting_is_never_cut() -> None:
    # S2: a message every 29 minutes for ten hours stays in session 1.
    previous_no: int | None = None
    previous_at: datetime | None = None
    numbers = []
    for i in range(21):
        now = T0 + i * timedelta(minutes=29)
        previous_no = session_number(previous_no, previous_at, now)
        previous_at = now
        numbers.append(previous_no)
    assert numbers == [1] * 21


def test_sitting_split_by_pauses_numbers_sessions_consecutively() -> None:
    # S1 + S2: gaps of 10 min, 31 min, 30 min, 2 h, 1 min give sessions 1,1,2,2,3,3.
    gaps = [timedelta(minutes=m) for m in (10, 31, 30, 120, 1)]
    at = T0
    no = session_number(None, None, at)
    numbers = [no]
    for gap in gaps:
        no = session_number(no, at, at + gap)
        at += gap
        numbers.append(no)
    assert numbers == [1, 1, 2, 2, 3, 3]


@settings(database=None)
@given(
    previous_no=st.integers(min_value=1, max_value=10_000),
    gap=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=30)),
    pause=st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=1)),
)
def test_session_advances_by_one_exactly_when_the_gap_exceeds_the_pause(
    previous_no: int, gap: timedelta, pause: timedelta
) -> None:
    # S2 as a property: same session up to and including the pause, the next one after it.
    expected = previous_no + 1 if gap > pause else previous_no
    assert session_number(previous_no, T0, T0 + gap, pause=pause) == expected


@pytest.mark.parametrize("rule", list(SessionRule))
def test_every_rule_opens_session_one_in_an_empty_pane(rule: SessionRule) -> None:
    # S1 whoever writes first
    assert next_session(rule, None, None, T0) == 1


def test_an_agent_reaching_out_unprompted_opens_the_next_session_only_after_a_pause() -> None:
    # S3: into a pane quiet for longer than the pause, a delivery opens the next session
    assert next_session(SessionRule.OPENS, 2, T0, T0 + timedelta(minutes=31)) == 3
    # ... and into a live sitting it continues it: a continuous sitting is never cut
    assert next_session(SessionRule.OPENS, 2, T0, T0 + timedelta(minutes=1)) == 2


def test_a_reply_or_a_system_line_continues_the_session_after_any_pause() -> None:
    # S4: the agent answering (or the platform noting) after a long model call does not cut
    assert next_session(SessionRule.CONTINUES, 2, T0, T0 + timedelta(days=2)) == 2


def test_a_participants_post_follows_the_pause_rule() -> None:
    # S2 through next_session
    assert next_session(SessionRule.SITTING, 2, T0, T0 + timedelta(minutes=31)) == 3
    assert next_session(SessionRule.SITTING, 2, T0, T0 + timedelta(minutes=29)) == 2
