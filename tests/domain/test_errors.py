"""Typed domain errors and the ``extensions`` the GraphQL layer copies from them."""

from __future__ import annotations

import pytest

from dealroom.domain.errors import (
    DomainError,
    ErrorCode,
    bad_input,
    forbidden,
    not_found,
    unauthenticated,
)


@pytest.mark.parametrize("code", list(ErrorCode))
def test_error_code_value_is_its_stable_name(code: ErrorCode) -> None:
    assert code.value == code.name


def test_error_codes_are_the_stable_set() -> None:
    assert [c.value for c in ErrorCode] == [
        "UNAUTHENTICATED",
        "FORBIDDEN",
        "NOT_FOUND",
        "BAD_USER_INPUT",
        "CONFLICT",
        "RATE_LIMITED",
        "PAYMENT_DECLINED",
        "PAYLOAD_TOO_LARGE",
        "UNAVAILABLE",
        "INTERNAL",
        "BAD_REQUEST",
        "METHOD_NOT_ALLOWED",
        "NOT_ACCEPTABLE",
        "UNSUPPORTED_MEDIA_TYPE",
        "REQUEST_TIMEOUT",
        "PERSISTED_QUERY_NOT_FOUND",
        "PERSISTED_QUERY_NOT_SUPPORTED",
        "PERSISTED_QUERY_NOT_IN_LIST",
    ]


def test_domain_error_message_is_its_string() -> None:
    error = DomainError(ErrorCode.CONFLICT, "The offer changed.")
    assert (str(error), error.message) == ("The offer changed.", "The offer changed.")


def test_domain_error_keeps_its_code() -> None:
    assert DomainError(ErrorCode.CONFLICT, "x").code is ErrorCode.CONFLICT


def test_extensions_carry_the_code_alone_without_details() -> None:
    assert DomainError(ErrorCode.INTERNAL, "x").extensions == {"code": "INTERNAL"}


def test_extensions_carry_the_code_and_every_detail() -> None:
    error = DomainError(ErrorCode.CONFLICT, "x", field="offer", version=3)
    assert error.extensions == {"code": "CONFLICT", "field": "offer", "version": 3}


def test_extensions_code_is_a_plain_string() -> None:
    code = DomainError(ErrorCode.RATE_LIMITED, "x").extensions["code"]
    assert type(code) is str
    assert code == "RATE_LIMITED"


def test_details_are_kept_apart_from_the_code() -> None:
    error = DomainError(ErrorCode.CONFLICT, "x", field="offer")
    assert error.details == {"field": "offer"}


def test_domain_error_can_be_raised_and_caught_as_an_exception() -> None:
    with pytest.raises(DomainError, match=r"^Room not found\.$"):
        raise not_found("Room")


def test_not_found_names_what_was_missing() -> None:
    error = not_found("Room")
    assert (error.code, error.message, error.extensions) == (
        ErrorCode.NOT_FOUND,
        "Room not found.",
        {"code": "NOT_FOUND"},
    )


def test_forbidden_has_a_default_message() -> None:
    error = forbidden()
    assert (error.code, error.message) == (ErrorCode.FORBIDDEN, "You may not do that.")


def test_forbidden_takes_a_custom_message() -> None:
    assert forbidden("Only the host may do that.").message == "Only the host may do that."


def test_unauthenticated_asks_to_sign_in() -> None:
    error = unauthenticated()
    assert (error.code, error.message, error.extensions) == (
        ErrorCode.UNAUTHENTICATED,
        "Sign in first.",
        {"code": "UNAUTHENTICATED"},
    )


def test_bad_input_with_field_carries_the_field_in_extensions() -> None:
    error = bad_input("Too long.", "body")
    assert (error.code, error.message, error.extensions) == (
        ErrorCode.BAD_USER_INPUT,
        "Too long.",
        {"code": "BAD_USER_INPUT", "field": "body"},
    )


def test_bad_input_without_field_carries_only_the_code() -> None:
    assert bad_input("Nope.").extensions == {"code": "BAD_USER_INPUT"}
