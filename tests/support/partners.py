"""GraphQL documents and helpers for API key, webhook and ops tests."""

from __future__ import annotations

from typing import Any

from tests.conftest import Server
from tests.support.graphql import Client

CREATE_KEY = """
mutation($name: String!, $scopes: [String!]!) {
  createApiKey(name: $name, scopes: $scopes) {
    key apiKey { id name prefix scopes createdAt lastUsedAt revokedAt }
  }
}
"""
REVOKE_KEY = "mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }"
API_KEYS = "{ apiKeys { id name prefix scopes lastUsedAt revokedAt } }"


async def create_key(client: Client, scopes: list[str], name: str = "partner") -> dict[str, Any]:
    data = await client.query(CREATE_KEY, {"name": name, "scopes": scopes})
    created: dict[str, Any] = data["createApiKey"]
    return created


def key_client(server: Server, key: str) -> Client:
    """A partner integration: no cookies, only its API key."""
    return server.client().bearer(key)


CREATE_WEBHOOK = """
mutation($url: String!, $events: [String!]!) {
  createWebhook(url: $url, events: $events) { secret webhook { id url events status } }
}
"""
WEBHOOKS = "{ webhooks { id url events status disabledReason lastSuccessAt } }"
DELIVERIES = """
query($id: ID!, $first: Int! = 50, $after: String) {
  webhookDeliveries(webhookId: $id, first: $first, after: $after) {
    hasNextPage endCursor
    nodes {
      id eventId eventType status attempts lastStatus lastError deliveredAt nextAttemptAt
      attemptLog { attempt statusCode error }
    }
  }
}
"""
REDELIVER = "mutation($id: ID!) { redeliverWebhook(deliveryId: $id) { id status eventId } }"
ENABLE = "mutation($id: ID!) { enableWebhook(id: $id) { id status } }"

ALL_EVENTS = ["offer.created", "offer.stage_changed", "payment.captured", "payment.declined"]


async def create_webhook(
    client: Client, url: str, events: list[str] | None = None
) -> dict[str, Any]:
    data = await client.query(CREATE_WEBHOOK, {"url": url, "events": events or ALL_EVENTS})
    created: dict[str, Any] = data["createWebhook"]
    return created


async def delivery_log(client: Client, webhook_id: str) -> list[dict[str, Any]]:
    """The endpoint's deliveries, oldest first."""
    data = await client.query(DELIVERIES, {"id": webhook_id})
    nodes: list[dict[str, Any]] = data["webhookDeliveries"]["nodes"]
    return list(reversed(nodes))


async def make_operator(db: Any, client: Client, handle: str) -> Client:
    """Sign ``client`` up as ``handle`` and mark it an operator (the CLI's way)."""
    from dealroom.services.accounts.service import set_operator
    from tests.support.graphql import sign_up

    await sign_up(client, handle)
    try:
        await set_operator(db, handle=handle, operator=True)
        await db.commit()
    finally:
        await db.close()
    return client
