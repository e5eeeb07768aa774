"""GraphQL operations and their errors, counted for ``/metrics``. Listed before
``ErrorCodes`` so it reads each error's final ``extensions.code``."""

from __future__ import annotations

from collections.abc import Iterator

from graphql import ExecutionResult as GraphQLExecutionResult
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionResult

from dealroom.services.ops import metrics


class Metrics(SchemaExtension):
    def on_operation(self) -> Iterator[None]:
        yield
        context = self.execution_context
        try:
            operation = context.operation_type.value
        except (RuntimeError, AttributeError):  # the document did not parse
            operation = "invalid"
        metrics.REQUESTS.labels(operation).inc()
        result = context.result
        if not isinstance(result, GraphQLExecutionResult | ExecutionResult):
            result = getattr(result, "initial_result", None)
        errors = getattr(result, "errors", None) or context.pre_execution_errors or []
        for error in errors:
            code = (error.extensions or {}).get("code", "INTERNAL")
            metrics.ERRORS.labels(str(code)).inc()
