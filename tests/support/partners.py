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
