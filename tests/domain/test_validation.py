"""Input rules for what users type: normalised values, or BAD_USER_INPUT naming the field."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealroom.domain import validation
from dealroom.domain.errors import DomainError, ErrorCode

Rule = Callable[[str], str]


def assert_rejected(rule: Rule, raw: str, field: str) -> None:
    with pytest.raises(DomainError) as caught:
        rule(raw)
    assert caught.value.code is ErrorCode.BAD_USER_INPUT
    assert caught.value.extensions == {"code": "BAD_USER_INPUT", "field": field}


# --- message body: trimmed, then 1..8000 characters ---


def test_message_body_limit_is_8000() -> None:
    assert validation.MAX_BODY == 8000


def test_message_body_is_trimmed() -> None:
    assert validation.message_body("  \n\tHello there \n ") == "Hello there"


def test_message_body_keeps_inner_whitespace() -> None:
    assert validation.message_body("  line one\n\n  line two  ") == "line one\n\n  line two"


def test_message_body_of_one_character_is_accepted() -> None:
    assert validation.message_body("k") == "k"


def test_message_body_of_exactly_8000_characters_is_accepted() -> None:
    body = "x" * 8000
    assert validation.message_body(body) == body


def test_message_body_of_8001_characters_is_rejected() -> None:
    assert_rejected(validation.message_body, "x" * 8001, "body")


def test_message_body_of_8000_characters_padded_with_whitespace_is_accepted() -> None:
    # The limit applies after trimming.
    body = "y" * 8000
    assert validation.message_body(f"   {body}\n\n") == body


def test_message_body_of_8001_characters_after_trimming_is_rejected() -> None:
    assert_rejected(validation.message_body, "  " + "z" * 8001 + "  ", "body")


def test_message_body_limit_counts_characters_not_bytes() -> None:
    body = "é" * 8000  # 16000 bytes in UTF-8
    assert validation.message_body(body) == body


def test_message_body_too_long_message_names_the_limit() -> None:
    with pytest.raises(DomainError, match=r"^A message is at most 8000 characters\.$"):
        validation.message_body("x" * 8001)


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty"),
        pytest.param(" ", id="space"),
        pytest.param(" \t\r\n ", id="mixed-ascii-whitespace"),
        pytest.param("\u00a0\u3000\u2003", id="unicode-spaces"),
        pytest.param(" " * 9000, id="long-whitespace"),
    ],
)
def test_whitespace_only_message_body_is_rejected(raw: str) -> None:
    assert_rejected(validation.message_body, raw, "body")


def test_empty_message_body_asks_for_text() -> None:
    with pytest.raises(DomainError, match=r"^A message needs some text\.$"):
        validation.message_body("   ")


@settings(database=None)
@given(raw=st.text(max_size=8100))
def test_message_body_is_the_trimmed_text_when_1_to_8000_characters(raw: str) -> None:
    trimmed = raw.strip()
    if 1 <= len(trimmed) <= 8000:
        assert validation.message_body(raw) == trimmed
    else:
        assert_rejected(validation.message_body, raw, "body")


# --- clientMessageId: 1..64 of [A-Za-z0-9._:-], unchanged ---


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("a", id="one-char"),
        pytest.param("x" * 64, id="64-chars"),
        pytest.param("msg-1.2_3:4", id="all-punctuation"),
        pytest.param("6f1c2a4e-8b0d-4c3e-9a57-2d1e0f3b4c5a", id="uuid"),
        pytest.param("ABCxyz09", id="mixed-case"),
    ],
)
def test_valid_client_message_id_is_returned_unchanged(raw: str) -> None:
    assert validation.client_message_id(raw) == raw


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty"),
        pytest.param("x" * 65, id="65-chars"),
        pytest.param("has space", id="space"),
        pytest.param(" abc", id="leading-space"),
        pytest.param("a/b", id="slash"),
        pytest.param("a+b", id="plus"),
        pytest.param("café", id="non-ascii"),
        pytest.param("\nabc", id="leading-newline"),
        # `$` in a regex also matches before a final newline.
        pytest.param("abc\n", id="trailing-newline"),
        pytest.param("x" * 64 + "\n", id="64-chars-and-newline"),
    ],
)
def test_invalid_client_message_id_is_rejected(raw: str) -> None:
    assert_rejected(validation.client_message_id, raw, "clientMessageId")


# --- handle: trimmed, lowercased, 3..32 of [a-z0-9_-], alphanumeric at both ends ---


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("abc", "abc", id="three-chars"),
        pytest.param("a" * 32, "a" * 32, id="32-chars"),
        pytest.param("dev-raman_2", "dev-raman_2", id="dash-and-underscore-inside"),
        pytest.param("1ab", "1ab", id="leading-digit"),
        pytest.param("  Dev_Raman  ", "dev_raman", id="trimmed-and-lowercased"),
        pytest.param("A-B", "a-b", id="uppercase"),
    ],
)
def test_valid_handle_is_normalised(raw: str, expected: str) -> None:
    assert validation.handle(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="whitespace"),
        pytest.param("ab", id="two-chars"),
        pytest.param("a" * 33, id="33-chars"),
        pytest.param("-abc", id="leading-dash"),
        pytest.param("abc-", id="trailing-dash"),
        pytest.param("_abc", id="leading-underscore"),
        pytest.param("abc_", id="trailing-underscore"),
        pytest.param("ab c", id="inner-space"),
        pytest.param("ab.c", id="dot"),
        pytest.param("dév", id="non-ascii"),
        pytest.param("a\nbc", id="inner-newline"),
    ],
)
def test_invalid_handle_is_rejected(raw: str) -> None:
    assert_rejected(validation.handle, raw, "handle")


# --- email: trimmed, lowercased, local@domain.tld ---


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("mara@example.com", "mara@example.com", id="plain"),
        pytest.param("  Mara.Ellison@Example.COM \n", "mara.ellison@example.com", id="normalised"),
        pytest.param("a+tag@sub.example.co.uk", "a+tag@sub.example.co.uk", id="subdomains"),
        pytest.param("x" * 64 + "@example.com", "x" * 64 + "@example.com", id="64-char-local"),
    ],
)
def test_valid_email_is_normalised(raw: str, expected: str) -> None:
    assert validation.email(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty"),
        pytest.param("mara", id="no-at"),
        pytest.param("mara@", id="no-domain"),
        pytest.param("@example.com", id="no-local-part"),
        pytest.param("mara@example", id="no-dot-in-domain"),
        pytest.param("mara@example.", id="empty-tld"),
        pytest.param("ma ra@example.com", id="space-in-local-part"),
        pytest.param("mara@exa mple.com", id="space-in-domain"),
        pytest.param("mara@@example.com", id="two-ats"),
        pytest.param("mara@example@com.org", id="at-in-domain"),
        pytest.param("x" * 65 + "@example.com", id="65-char-local"),
    ],
)
def test_invalid_email_is_rejected(raw: str) -> None:
    assert_rejected(validation.email, raw, "email")


# --- password: 8..256 characters, untouched ---


@pytest.mark.parametrize("length", [8, 9, 255, 256])
def test_password_of_8_to_256_characters_is_accepted(length: int) -> None:
    raw = "p" * length
    assert validation.password(raw) == raw


@pytest.mark.parametrize("length", [0, 1, 7, 257, 1000])
def test_password_outside_8_to_256_characters_is_rejected(length: int) -> None:
    assert_rejected(validation.password, "p" * length, "password")


def test_password_is_not_trimmed() -> None:
    assert validation.password("  secret pw  ") == "  secret pw  "


def test_password_length_counts_surrounding_whitespace() -> None:
    # Seven visible characters and one space make eight.
    assert validation.password(" abcdefg") == " abcdefg"


# --- display name: whitespace collapsed, then 1..80 characters ---


def test_display_name_whitespace_is_collapsed_and_trimmed() -> None:
    assert validation.display_name("  Mara \t  Ellison\n ") == "Mara Ellison"


def test_display_name_of_one_character_is_accepted() -> None:
    assert validation.display_name("M") == "M"


def test_display_name_of_80_characters_is_accepted() -> None:
    assert validation.display_name("n" * 80) == "n" * 80


def test_display_name_of_81_characters_is_rejected() -> None:
    assert_rejected(validation.display_name, "n" * 81, "displayName")


def test_display_name_length_is_counted_after_collapsing() -> None:
    raw = "a" + " " * 100 + "b"
    assert validation.display_name(raw) == "a b"


def test_display_name_of_81_characters_after_collapsing_is_rejected() -> None:
    assert_rejected(
        validation.display_name, "  " + "n" * 40 + "   " + "m" * 40 + " ", "displayName"
    )


@pytest.mark.parametrize("raw", ["", " ", "\t\n  "])
def test_blank_display_name_is_rejected(raw: str) -> None:
    assert_rejected(validation.display_name, raw, "displayName")
