"""The Schema object and how a process builds it: the document bounds checked before parsing
(for queries and streams alike), quiet error processing, the extension stack, and one schema
per distinct ``SCHEMA_SETTINGS``. The root types it is built from are ``schema/root.py``."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Final

import strawberry
from graphql import GraphQLError, NoSchemaIntrospectionCustomRule
from strawberry.extensions import MaxAliasesLimiter, ValidationCache
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.execution import PreExecutionError

from dealroom.config import Settings
from dealroom.domain.errors import ErrorCode
from dealroom.persisted_queries import load_trusted_documents, sha256_hex
from dealroom.schema.caching import CachedParser
from dealroom.schema.errors import ErrorCodes
from dealroom.schema.fanout import FanoutExecutor
from dealroom.schema.limits import OperationLimits, depth_rule, document_error
from dealroom.schema.metrics_ext import Metrics
from dealroom.schema.ops_audit import OpsAudit
from dealroom.schema.root import Mutation, Query, Subscription
from dealroom.schema.scope_gate import ScopeGate


class Schema(strawberry.Schema):
    settings: Settings
    trusted: dict[str, str | None] | None
    """The trusted documents by hash (``DEALROOM_TRUSTED_DOCUMENTS``), or None: any runs."""

    async def execute(self, query: str | None, *args: Any, **kwargs: Any) -> ExecutionResult:
        """A document over the size, token or literal bounds, or not among the trusted
        documents, is refused before parsing."""
        if (error := document_error(query, self.settings) or self._untrusted(query)) is not None:
            return ExecutionResult(data=None, errors=[error])
        return await super().execute(query, *args, **kwargs)

    async def stream(self, query: str | None, *args: Any, **kwargs: Any) -> Any:
        """The same bound for websocket operations (``subscribe`` goes through here), and the
        trusted-documents list."""
        if (error := document_error(query, self.settings) or self._untrusted(query)) is not None:
            return _refused(PreExecutionError(data=None, errors=[error]))
        return await super().stream(query, *args, **kwargs)

    def _untrusted(self, query: str | None) -> GraphQLError | None:
        if self.trusted is None or query is None or sha256_hex(query) in self.trusted:
            return None
        return GraphQLError(
            "This server runs only its trusted documents; this one is not among them.",
            extensions={"code": str(ErrorCode.PERSISTED_QUERY_NOT_IN_LIST)},
        )

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
    "introspection",
    "trusted_documents",
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
        # DEALROOM_INTROSPECTION=false: __schema and __type fail validation (BAD_USER_INPUT);
        # __typename, which clients add to every selection, still works.
        *(() if settings.introspection else (NoSchemaIntrospectionCustomRule,)),
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
            OpsAudit,  # every operator read is recorded before it is answered
        ],
    )
    schema.settings = settings
    schema.trusted = (
        load_trusted_documents(settings.trusted_documents) if settings.trusted_documents else None
    )
    return schema
