"""Opaque event and room cursors: they round-trip, and anything else is BAD_USER_INPUT."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dealroom.domain.cursors import (
    event_cursor,
    parse_event_cursor,
    parse_room_cursor,
    room_cursor,
)
from dealroom.domain.errors import DomainError, ErrorCode

ROOM_ID = UUID("6f1c2a4e-8b0d-4c3e-9a57-2d1e0f3b4c5a")
STAMP = datetime(2025, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)
MAX_SEQ = 2**63 - 1  # a BIGINT sequence

URLSAFE = re.compile(r"^[A-Za-z0-9_-]+$")

Parser = Callable[[str], object]


def forge(text: str) -> str:
    """A cursor in the server's encoding around text it never issued (a tampered cursor)."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def forge_bytes(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def assert_rejected(parse: Parser, cursor: str) -> None:
    with pytest.raises(DomainError) as caught:
        parse(cursor)
    assert caught.value.code is ErrorCode.BAD_USER_INPUT
    assert caught.value.extensions == {"code": "BAD_USER_INPUT", "field": "cursor"}


fixed_offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
stamps = st.datetimes(timezones=st.none() | st.just(UTC) | fixed_offsets)


# --- event cursors ---


@settings(database=None)
@given(seq=st.integers(min_value=0, max_value=MAX_SEQ))
def test_event_cursor_round_trips(seq: int) -> None:
    assert parse_event_cursor(event_cursor(seq)) == seq


@settings(database=None)
@given(seq=st.integers(min_value=0, max_value=MAX_SEQ))
def test_event_cursor_is_url_safe_without_padding(seq: int) -> None:
    assert URLSAFE.match(event_cursor(seq))


@settings(database=None)
@given(a=st.integers(min_value=0, max_value=MAX_SEQ), b=st.integers(min_value=0, max_value=MAX_SEQ))
def test_distinct_sequences_give_distinct_event_cursors(a: int, b: int) -> None:
    assert (event_cursor(a) == event_cursor(b)) == (a == b)


def test_event_cursor_does_not_show_the_sequence_in_clear() -> None:
    assert "12345" not in event_cursor(12345)


def test_event_cursor_for_sequence_zero_round_trips() -> None:
    assert parse_event_cursor(event_cursor(0)) == 0


# --- room cursors ---


@settings(database=None)
@given(stamp=stamps, room_id=st.uuids())
def test_room_cursor_round_trips(stamp: datetime, room_id: UUID) -> None:
    parsed_stamp, parsed_id = parse_room_cursor(room_cursor(stamp, room_id))
    assert parsed_id == room_id
    assert parsed_stamp.replace(tzinfo=None) == stamp.replace(tzinfo=None)
    assert parsed_stamp.utcoffset() == stamp.utcoffset()


def test_room_cursor_round_trips_an_aware_utc_stamp() -> None:
    assert parse_room_cursor(room_cursor(STAMP, ROOM_ID)) == (STAMP, ROOM_ID)


def test_room_cursor_keeps_a_naive_stamp_naive() -> None:
    naive = STAMP.replace(tzinfo=None)
    parsed_stamp, _ = parse_room_cursor(room_cursor(naive, ROOM_ID))
    assert (parsed_stamp, parsed_stamp.tzinfo) == (naive, None)


@settings(database=None)
@given(stamp=stamps, room_id=st.uuids())
def test_room_cursor_is_url_safe_without_padding(stamp: datetime, room_id: UUID) -> None:
    assert URLSAFE.match(room_cursor(stamp, room_id))


def test_room_cursors_differ_by_room_at_the_same_instant() -> None:
    other = UUID("00000000-0000-4000-8000-000000000000")
    assert room_cursor(STAMP, ROOM_ID) != room_cursor(STAMP, other)


# --- garbage, foreign and tampered cursors ---

GARBAGE = [
    pytest.param("", id="empty"),
    pytest.param("not a cursor", id="prose"),
    pytest.param("%%%%", id="symbols"),
    pytest.param("Z", id="one-char"),
    pytest.param("ZTo", id="truncated"),
    pytest.param("\ud800", id="lone-surrogate"),
    pytest.param(forge_bytes(b"\xff\xfe\xfa"), id="not-utf8"),
    pytest.param(forge("x:5"), id="unknown-prefix"),
]


@pytest.mark.parametrize("cursor", GARBAGE)
def test_garbage_event_cursor_is_bad_user_input(cursor: str) -> None:
    assert_rejected(parse_event_cursor, cursor)


@pytest.mark.parametrize("cursor", GARBAGE)
def test_garbage_room_cursor_is_bad_user_input(cursor: str) -> None:
    assert_rejected(parse_room_cursor, cursor)


def test_room_cursor_is_not_an_event_cursor() -> None:
    assert_rejected(parse_event_cursor, room_cursor(STAMP, ROOM_ID))


def test_event_cursor_is_not_a_room_cursor() -> None:
    assert_rejected(parse_room_cursor, event_cursor(7))


def test_event_cursor_prefix_in_the_wrong_case_is_rejected() -> None:
    assert_rejected(parse_event_cursor, forge("E:7"))


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param("e:", id="no-seq"),
        pytest.param("e:-1", id="negative"),
        pytest.param("e:+1", id="plus-sign"),
        pytest.param("e:1.5", id="fraction"),
        pytest.param("e: 5", id="leading-space"),
        pytest.param("e:5 ", id="trailing-space"),
        pytest.param("e:5\n", id="trailing-newline"),
        pytest.param("e:abc", id="letters"),
        pytest.param("e:0x10", id="hex"),
        pytest.param("e:1_000", id="underscore"),
        # str.isdigit() accepts these; int() chokes on the first and reads the second as 12.
        pytest.param("e:²", id="superscript-digit"),
        pytest.param("e:١٢", id="arabic-indic-digits"),
        # int() refuses strings of more than 4300 digits with ValueError.
        pytest.param("e:" + "9" * 5000, id="five-thousand-digits"),
    ],
)
def test_tampered_event_cursor_is_bad_user_input(payload: str) -> None:
    assert_rejected(parse_event_cursor, forge(payload))


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param("r:", id="empty"),
        pytest.param(f"r:{STAMP.isoformat()}", id="no-room-id"),
        pytest.param(f"r:|{ROOM_ID}", id="no-stamp"),
        pytest.param(f"r:yesterday|{ROOM_ID}", id="bad-stamp"),
        pytest.param(f"r:2025-13-01T00:00:00|{ROOM_ID}", id="month-13"),
        pytest.param(f"r:{STAMP.isoformat()}|not-a-uuid", id="bad-room-id"),
        pytest.param(f"r:{STAMP.isoformat()}|{ROOM_ID}|extra", id="extra-field"),
        pytest.param(f"r:{STAMP.isoformat()}|{str(ROOM_ID)[:-1]}", id="short-room-id"),
    ],
)
def test_tampered_room_cursor_is_bad_user_input(payload: str) -> None:
    assert_rejected(parse_room_cursor, forge(payload))


def test_cursor_error_message_says_the_server_did_not_issue_it() -> None:
    with pytest.raises(DomainError, match=r"^That cursor is not one this server issued\.$"):
        parse_event_cursor("garbage")


def attempt(parse: Parser, cursor: str) -> tuple[object, ErrorCode | None]:
    """The parsed value, or the code of the DomainError; any other exception propagates."""
    try:
        return parse(cursor), None
    except DomainError as error:
        return None, error.code


@settings(database=None, derandomize=True)
@given(cursor=st.text())
@example(cursor="")
def test_parsing_any_string_as_an_event_cursor_fails_only_with_bad_user_input(
    cursor: str,
) -> None:
    _, code = attempt(parse_event_cursor, cursor)
    assert code in (None, ErrorCode.BAD_USER_INPUT)


@settings(database=None, derandomize=True)
@given(seq=st.text())
@example(seq="²")
@example(seq="١٢")
@example(seq="9" * 5000)
def test_forged_event_cursor_parses_only_to_its_ascii_decimal_sequence(seq: str) -> None:
    # Whatever follows the prefix, the parser returns that ASCII number or BAD_USER_INPUT.
    parsed, code = attempt(parse_event_cursor, forge(f"e:{seq}"))
    assert code in (None, ErrorCode.BAD_USER_INPUT)
    if code is None:
        assert re.fullmatch(r"[0-9]+", seq)
        assert parsed == int(seq)


@settings(database=None, derandomize=True)
@given(cursor=st.text())
def test_parsing_any_string_as_a_room_cursor_fails_only_with_bad_user_input(
    cursor: str,
) -> None:
    _, code = attempt(parse_room_cursor, cursor)
    assert code in (None, ErrorCode.BAD_USER_INPUT)


@settings(database=None, derandomize=True)
@given(stamp=st.text(), room_id=st.text())
def test_forged_room_cursor_fails_only_with_bad_user_input(stamp: str, room_id: str) -> None:
    _, code = attempt(parse_room_cursor, forge(f"r:{stamp}|{room_id}"))
    assert code in (None, ErrorCode.BAD_USER_INPUT)
