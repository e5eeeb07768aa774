"""Typed errors carrying a stable code; the GraphQL layer maps them to ``extensions.code``."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    BAD_USER_INPUT = "BAD_USER_INPUT"
    CONFLICT = "CONFLICT"
    RATE_LIMITED = "RATE_LIMITED"
    PAYMENT_DECLINED = "PAYMENT_DECLINED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    UNAVAILABLE = "UNAVAILABLE"
    """The server is momentarily at capacity (not the caller's fault, unlike RATE_LIMITED):
    retry after ``retryAfterSeconds``."""
    INTERNAL = "INTERNAL"
    # Transport: the request is not a GraphQL request this server can read (http_graphql.py).
    BAD_REQUEST = "BAD_REQUEST"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    NOT_ACCEPTABLE = "NOT_ACCEPTABLE"
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    PERSISTED_QUERY_NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
    """Apollo's automatic persisted queries: the hash is unknown; send it again with the
    document (clients do this by themselves)."""
    PERSISTED_QUERY_NOT_SUPPORTED = "PERSISTED_QUERY_NOT_SUPPORTED"
    PERSISTED_QUERY_NOT_IN_LIST = "PERSISTED_QUERY_NOT_IN_LIST"
    """Trusted-documents mode: the document is not one the server was deployed with."""


class DomainError(Exception):
    """An expected failure: shown to the client with its code, never masked."""

    def __init__(self, code: ErrorCode, message: str, **details: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    @property
    def extensions(self) -> dict[str, object]:
        # graphql-core copies an original error's ``extensions`` dict onto the GraphQLError.
        return {"code": str(self.code), **self.details}


def not_found(what: str) -> DomainError:
    return DomainError(ErrorCode.NOT_FOUND, f"{what} not found.")


def forbidden(message: str = "You may not do that.") -> DomainError:
    return DomainError(ErrorCode.FORBIDDEN, message)


def bad_input(message: str, field: str | None = None) -> DomainError:
    if field is None:
        return DomainError(ErrorCode.BAD_USER_INPUT, message)
    return DomainError(ErrorCode.BAD_USER_INPUT, message, field=field)


def unauthenticated(message: str = "Sign in first.") -> DomainError:
    return DomainError(ErrorCode.UNAUTHENTICATED, message)
