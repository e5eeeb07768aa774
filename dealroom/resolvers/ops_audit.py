"""Recording an operator's read before it is answered, for the ``OpsAudit`` schema hook."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLResolveInfo

from dealroom.domain.errors import DomainError
from dealroom.domain.scopes import key_may_call
from dealroom.services.ops import audit


def is_ops_read(parent_type: str, field: str) -> bool:
    return audit.is_ops_read(parent_type, field)


async def record_read(info: GraphQLResolveInfo[Any], root: Any, arguments: dict[str, Any]) -> None:
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
