"""Every operator read is recorded before it is answered (``services/ops/audit.py``): one hook
for every ops read field, so no resolver has to remember it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from graphql import GraphQLResolveInfo
from graphql.language import OperationType
from strawberry.extensions import SchemaExtension

from dealroom.domain.errors import DomainError
from dealroom.domain.scopes import key_may_call
from dealroom.services.ops import audit


class OpsAudit(SchemaExtension):
    def resolve(
        self,
        _next: Callable[..., Any],
        root: Any,
        info: GraphQLResolveInfo[Any],
        *args: str,
        **kwargs: Any,
    ) -> Any:
        if info.operation.operation is not OperationType.QUERY or not audit.is_ops_read(
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
        await _record(info, root, kwargs)
        result = _next(root, info, *args, **kwargs)
        if isinstance(result, Awaitable):
            return await result
        return result


async def _record(info: GraphQLResolveInfo[Any], root: Any, arguments: dict[str, Any]) -> None:
    context = info.context
    try:
        identity = await context.identity()
    except DomainError:
        return  # the field itself answers with the same error
    if identity.account is None or not identity.account.is_operator:
        return
    nested = info.path.prev is not None
    if identity.scopes is not None and (nested or key_may_call(info.field_name, identity.scopes)):
        return  # the scope gate refuses it (no key reads a Room's fields): nothing was read
    if nested:
        arguments = {"roomId": str(getattr(root, "id", "")), **arguments}
    async with context.transaction() as db:
        await audit.record_read(
            db,
            context.app.clock,
            identity,
            f"{info.parent_type.name}.{info.field_name}" if nested else info.field_name,
            arguments,
        )
