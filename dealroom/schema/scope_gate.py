"""API keys reach only what their scopes open (``domain/scopes.py`` K1/K2).

One gate for every operation, so no resolver has to remember it: a root field is resolved
for a key only when ``ROOT_FIELD_SCOPES`` names it and the key holds that scope, and no field
of a ``KEY_BLOCKED_TYPES`` type resolves for a key however it is reached."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from graphql import GraphQLResolveInfo
from strawberry.extensions import SchemaExtension

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.scopes import (
    API_KEY_PREFIX,
    KEY_BLOCKED_TYPES,
    UNSEEN_WHEN_REFUSED,
    key_may_call,
)

if TYPE_CHECKING:
    from dealroom.services.accounts.identity import Identity

_FLAG = "_presents_api_key"


def presents_api_key(context: Any) -> bool:
    """Whether the request authenticates with an API key (decided once per context)."""
    cached = context.__dict__.get(_FLAG)
    if cached is None:
        token = context.credentials().token
        cached = bool(token and token.startswith(API_KEY_PREFIX))
        context.__dict__[_FLAG] = cached
    return bool(cached)


async def check_root_field(context: Any, field: str) -> None:
    """Raise FORBIDDEN (NOT_FOUND for a field K5 hides) when the request's API key may not call
    ``field``; a session passes."""
    if not presents_api_key(context):
        return
    identity = await context.identity()
    reason = key_may_call(field, identity.scopes or frozenset())
    if reason is not None:
        if field in UNSEEN_WHEN_REFUSED:
            raise DomainError(ErrorCode.NOT_FOUND, "Not found.")
        raise DomainError(ErrorCode.FORBIDDEN, reason)


def require_key_scope(identity: Identity, field: str) -> None:
    """K1 for subscriptions, whose root fields the extension's resolve hook never sees: call
    right after resolving the identity of a subscription operation."""
    if identity.scopes is None:
        return
    reason = key_may_call(field, identity.scopes)
    if reason is not None:
        raise DomainError(ErrorCode.FORBIDDEN, reason)


class ScopeGate(SchemaExtension):
    def resolve(
        self,
        _next: Callable[..., Any],
        root: Any,
        info: GraphQLResolveInfo[Any],
        *args: str,
        **kwargs: Any,
    ) -> Any:
        if not presents_api_key(info.context):
            return _next(root, info, *args, **kwargs)
        if info.path.prev is None:
            return self._gated(_next, root, info, *args, **kwargs)
        if info.parent_type.name in KEY_BLOCKED_TYPES and info.field_name != "id":
            raise DomainError(
                ErrorCode.FORBIDDEN, f"API keys cannot read {info.parent_type.name} fields."
            )
        return _next(root, info, *args, **kwargs)

    async def _gated(
        self,
        _next: Callable[..., Any],
        root: Any,
        info: GraphQLResolveInfo[Any],
        *args: str,
        **kwargs: Any,
    ) -> Any:
        await check_root_field(info.context, info.field_name)
        result = _next(root, info, *args, **kwargs)
        if isinstance(result, Awaitable):
            return await result
        return result
