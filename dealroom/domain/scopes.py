"""What an API key may reach. Pure: no I/O.

- K1  A key reaches only the root fields its scopes name. A root field missing from
      ``ROOT_FIELD_SCOPES`` is refused to every key (fail closed: a new field is session-only
      until someone decides which scope opens it).
- K2  No scope opens a pane: a key can neither post nor read messages (no field of a Room or
      of Me resolves for a key, ``KEY_BLOCKED_TYPES``), and key management
      (``createApiKey``) is session-only, so a key cannot mint a wider key.
- K3  A key typed into chat is removed before storage (``domain/redaction.py`` RD3).
- K4  Operator scopes (``ops:*``) are granted only to operator accounts, and an ops resolver
      still checks the account's operator flag: a scope never makes an operator.
- K5  A field listed in ``UNSEEN_WHEN_REFUSED`` refuses a key as NOT_FOUND, not FORBIDDEN.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

API_KEY_PREFIX: Final = "dr_"


class Scope(StrEnum):
    OFFERS_READ = "offers:read"
    WEBHOOKS_MANAGE = "webhooks:manage"
    OPS_READ = "ops:read"
    OPS_WRITE = "ops:write"


OPERATOR_SCOPES: Final = frozenset({Scope.OPS_READ, Scope.OPS_WRITE})

ANY_KEY: Final = "*"
"""A root field every valid key may call (none yet)."""

KEY_BLOCKED_TYPES: Final = frozenset({"Room", "Me"})
"""K2: a key-authenticated request never resolves a field of these types, wherever they are
reached from (``Offer.room``) but ``id``: panes, messages and memory live under them."""

ROOT_FIELD_SCOPES: Final[dict[str, str]] = {
    "offer": Scope.OFFERS_READ,
    "offerStage": Scope.OFFERS_READ,
    "webhooks": Scope.WEBHOOKS_MANAGE,
    "webhookConnection": Scope.WEBHOOKS_MANAGE,
    "webhookDeliveries": Scope.WEBHOOKS_MANAGE,
    "createWebhook": Scope.WEBHOOKS_MANAGE,
    "deleteWebhook": Scope.WEBHOOKS_MANAGE,
    "enableWebhook": Scope.WEBHOOKS_MANAGE,
    "redeliverWebhook": Scope.WEBHOOKS_MANAGE,
    "roomOps": Scope.OPS_READ,
    "opsRooms": Scope.OPS_READ,
    "opsRoom": Scope.OPS_READ,
    "opsAccount": Scope.OPS_READ,
    "agentPrompts": Scope.OPS_READ,
    "opsActions": Scope.OPS_READ,
    "setRoomModels": Scope.OPS_WRITE,
    "overrideGoal": Scope.OPS_WRITE,
    "takeOverPane": Scope.OPS_WRITE,
    "releasePane": Scope.OPS_WRITE,
    "operatorPost": Scope.OPS_WRITE,
    "roomMemoryHistory": Scope.OPS_READ,
    "editRoomMemory": Scope.OPS_WRITE,
    "revertRoomMemoryChange": Scope.OPS_WRITE,
    "opsSearchRooms": Scope.OPS_READ,
    "opsSearchOffers": Scope.OPS_READ,
    "opsSearchAccounts": Scope.OPS_READ,
    "opsQueue": Scope.OPS_READ,
    "acknowledgeQueueItem": Scope.OPS_WRITE,
    "assignQueueItem": Scope.OPS_WRITE,
    "resolveQueueItem": Scope.OPS_WRITE,
    "opsPayments": Scope.OPS_READ,
    "opsReleasePayment": Scope.OPS_WRITE,
    "opsRefundPayment": Scope.OPS_WRITE,
    "revertMemoryChange": Scope.OPS_WRITE,
}


UNSEEN_WHEN_REFUSED: Final = frozenset(
    field for field, scope in ROOT_FIELD_SCOPES.items() if scope in OPERATOR_SCOPES
)
"""K5: the operators' fields are NOT_FOUND, not FORBIDDEN, to a key that may not call them, as
they are to anyone but an operator: what is refused does not show that it exists."""


def key_may_call(field: str, scopes: frozenset[str]) -> str | None:
    """K1: None when a key with ``scopes`` may call the root ``field``; otherwise the reason."""
    needed = ROOT_FIELD_SCOPES.get(field)
    if needed is None:
        return f"API keys cannot call {field}; sign in instead."
    if needed != ANY_KEY and needed not in scopes:
        return f"This API key lacks the {needed} scope."
    return None


def parse_scopes(raw: list[str], *, operator: bool) -> frozenset[Scope]:
    """The scopes asked for, validated (K4). Raises ValueError naming the first bad one."""
    if not raw:
        raise ValueError("Name at least one scope.")
    scopes: set[Scope] = set()
    for name in raw:
        try:
            scope = Scope(name.strip())
        except ValueError:
            raise ValueError(f"Unknown scope {name!r}.") from None
        if scope in OPERATOR_SCOPES and not operator:
            raise ValueError(f"Only operators may hold {scope.value}.")
        scopes.add(scope)
    return frozenset(scopes)
