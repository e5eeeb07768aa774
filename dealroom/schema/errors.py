"""Every error leaves with a stable ``extensions.code``; unexpected ones are masked."""

from __future__ import annotations

import structlog
from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from dealroom.domain.errors import DomainError, ErrorCode

log = structlog.get_logger(__name__)


class ErrorCodes(MaskErrors):
    """Masks internal errors outside debug (code INTERNAL) and gives request errors (syntax,
    validation, depth/alias/token limits) the code BAD_USER_INPUT."""

    def __init__(self, debug: bool = False) -> None:
        self.debug = debug
        # A function, not a bound method of this instance: the instance (one per operation,
        # holding its execution context) would otherwise be a reference cycle that only the
        # garbage collector frees.
        super().__init__(
            should_mask_error=_unmasked_in_debug if debug else _masked,
            error_message="Internal error.",
        )

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        masked = super().anonymise_error(error)
        masked.extensions = {"code": str(ErrorCode.INTERNAL)}
        return masked

    def _process_result(self, result: object) -> None:
        # MaskErrors' own test is an isinstance against a runtime-checkable Protocol, which
        # walks the Protocol's members on every result: 0.6 % of a server's samples with
        # every streamed event going through it. The same test, by attribute.
        errors = getattr(result, "errors", None)
        if errors:
            result.errors = self._process_errors(errors)  # type: ignore[attr-defined]

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        processed = super()._process_errors(errors)
        for error in processed:
            # Answered (and an unexpected one logged, with its stack, by _masked): the
            # tracebacks' frames hold the execution, a cycle per failed request that only
            # the garbage collector frees.
            error.__traceback__ = None
            if error.original_error is not None:
                error.original_error.__traceback__ = None
            if "code" in (error.extensions or {}):
                continue
            code = ErrorCode.BAD_USER_INPUT if _is_request_error(error) else ErrorCode.INTERNAL
            error.extensions = {**(error.extensions or {}), "code": str(code)}
        return processed


def _masked(error: GraphQLError) -> bool:
    """Internal errors are logged, then masked: a request error or a DomainError is not."""
    original = error.original_error
    if _is_request_error(error) or isinstance(original, DomainError):
        return False
    log.error("graphql_internal_error", path=error.path, exc_info=original)
    return True


def _unmasked_in_debug(error: GraphQLError) -> bool:
    _masked(error)  # logged all the same
    return False


def _is_request_error(error: GraphQLError) -> bool:
    """Syntax, validation and variable-coercion errors: the request's fault, never masked.
    graphql-core records a bad variable's own GraphQLError as ``original_error``."""
    return error.original_error is None or isinstance(error.original_error, GraphQLError)
