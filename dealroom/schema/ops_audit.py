"""Every operator read is recorded before it is answered (``resolvers/ops_audit.py``): one hook
for every ops read field, so no resolver has to remember it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from graphql import GraphQLResolveInfo
from graphql.language import OperationType
from strawberry.extensions import SchemaExtension

from dealroom.resolvers import ops_audit


class OpsAudit(SchemaExtension):
    def resolve(
        self,
        _next: Callable[..., Any],
        root: Any,
        info: GraphQLResolveInfo[Any],
        *args: str,
        **kwargs: Any,
    ) -> Any:
        if info.operation.operation is not OperationType.QUERY or not ops_audit.is_ops_read(
            info.parent_type.name, info.field_name
        ):
            return _next(root, info, *args, **kwargs)
        return self._recorded(_next, root, info, *args, **kwargs)

    async def _recorded(
        self,
        _next: Callable[..., Any],
        root: Any,
        info: GraphQLResolveInfo[Any],
        *args: str,
        **kwargs: Any,
    ) -> Any:
        await ops_audit.record_read(info, root, kwargs)
        result = _next(root, info, *args, **kwargs)
        if isinstance(result, Awaitable):
            return await result
        return result
