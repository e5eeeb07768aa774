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
        super().__init__(should_mask_error=self._should_mask, error_message="Internal error.")

    def _should_mask(self, error: GraphQLError) -> bool:
        original = error.original_error
        if _is_request_error(error) or isinstance(original, DomainError):
            return False
        log.error("graphql_internal_error", path=error.path, exc_info=original)
        return not self.debug

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        masked = super().anonymise_error(error)
        masked.extensions = {"code": str(ErrorCode.INTERNAL)}
        return masked

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        processed = super()._process_errors(errors)
        for error in processed:
            if "code" in (error.extensions or {}):
                continue
            code = ErrorCode.BAD_USER_INPUT if _is_request_error(error) else ErrorCode.INTERNAL
            error.extensions = {**(error.extensions or {}), "code": str(code)}
        return processed


def _is_request_error(error: GraphQLError) -> bool:
    """Syntax, validation and variable-coercion errors: the request's fault, never masked.
    graphql-core records a bad variable's own GraphQLError as ``original_error``."""
    return error.original_error is None or isinstance(error.original_error, GraphQLError)
