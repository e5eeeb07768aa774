"""The Schema object and how a process builds it: the document bounds checked before parsing
(for queries and streams alike), quiet error processing, the extension stack, and one schema
per distinct ``SCHEMA_SETTINGS``. The root types it is built from are ``schema/root.py``."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Final

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaxAliasesLimiter, ValidationCache
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.execution import PreExecutionError

from dealroom.config import Settings
from dealroom.schema.caching import CachedParser
from dealroom.schema.errors import ErrorCodes
from dealroom.schema.fanout import FanoutExecutor
from dealroom.schema.limits import OperationLimits, depth_rule, document_error
from dealroom.schema.metrics_ext import Metrics
from dealroom.schema.root import Mutation, Query, Subscription
from dealroom.schema.scope_gate import ScopeGate


class Schema(strawberry.Schema):
    settings: Settings

    async def execute(self, query: str | None, *args: Any, **kwargs: Any) -> ExecutionResult:
        """A document over the size, token or literal bounds is refused before parsing."""
        if (error := document_error(query, self.settings)) is not None:
            return ExecutionResult(data=None, errors=[error])
        return await super().execute(query, *args, **kwargs)

    async def stream(self, query: str | None, *args: Any, **kwargs: Any) -> Any:
        """The same bound for websocket operations (``subscribe`` goes through here)."""
        if (error := document_error(query, self.settings)) is not None:
            return _refused(PreExecutionError(data=None, errors=[error]))
        return await super().stream(query, *args, **kwargs)

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Expected errors are answers, not incidents; ErrorCodes logs the unexpected ones."""


async def _refused(result: PreExecutionError) -> AsyncGenerator[PreExecutionError, None]:
    """A stream's refusal is its first (and only) result."""
    yield result


SCHEMA_SETTINGS: Final = (
    "debug",
    "max_query_depth",
    "max_introspection_depth",
    "max_aliases",
    "max_tokens",
    "max_query_chars",
    "max_literal_chars",
)
"""Every setting the schema reads (its limits and error masking): the key of the process's
schemas. A setting the schema starts reading belongs here."""


def create_schema(settings: Settings | None = None) -> strawberry.Schema:
    """The schema for ``settings``, built once per distinct ``SCHEMA_SETTINGS`` in a process:
    building one costs about 35 ms of CPU, which a served process pays once but the test
    suite paid for every server it started. A schema holds no state of its own between
    operations (each gets fresh extensions), so apps may share one."""
    settings = settings or Settings()
    key = tuple(getattr(settings, name) for name in SCHEMA_SETTINGS)
    if (schema := _SCHEMAS.get(key)) is None:
        schema = _SCHEMAS[key] = _build_schema(settings)
    return schema


_SCHEMAS: dict[tuple[object, ...], strawberry.Schema] = {}


def _build_schema(settings: Settings) -> strawberry.Schema:
    # The limiters build their validator classes in __init__. Build them once and hand each
    # operation a fresh extension over the same classes: the validation cache is keyed by
    # them, so a class per request would never hit.
    limits = [
        depth_rule(settings.max_query_depth, settings.max_introspection_depth),
        *MaxAliasesLimiter(max_alias_count=settings.max_aliases).validation_rules,
    ]
    schema = Schema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        # A subscription event is executed once per selection for all its subscribers.
        execution_context_class=FanoutExecutor,
        extensions=[
            # Factories: extensions hold per-operation state, so each operation gets its own.
            # First: the token bound and the rules, read by the two caches after it.
            lambda: OperationLimits(limits, settings.max_tokens),
            # Parsing and validating a document costs ~5 ms; clients send the same few.
            lambda: CachedParser(maxsize=256),
            lambda: ValidationCache(maxsize=256),
            Metrics,  # before ErrorCodes: it counts the codes ErrorCodes leaves
            lambda: ErrorCodes(debug=settings.debug),
            ScopeGate,  # API keys reach only what their scopes open (domain/scopes.py)
        ],
    )
    schema.settings = settings
    return schema
