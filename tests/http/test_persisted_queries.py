"""Apollo's automatic persisted queries (a bounded memory per process) and trusted-documents
mode (DEALROOM_TRUSTED_DOCUMENTS), over HTTP. The real Apollo Client and urql run the same
protocol in test_js_clients.py."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.http_graphql import GRAPHQL_RESPONSE
from dealroom.persisted_queries import load_trusted_documents
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import SIGN_UP as SIGN_UP_DOC
from tests.support.graphql import Client, subscribe

TYPENAME = "{ __typename }"
OTHER = "query Other { __typename }"


def sha(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


def persisted(document: str, *, send_document: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha(document)}}
    }
    if send_document:
        body["query"] = document
    return body


async def post(client: Client, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = await client.http.post("/graphql", json=body, headers={"accept": GRAPHQL_RESPONSE})
    return response.status_code, response.json()


def codes(body: dict[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body.get("errors", [])]


@pytest.fixture
async def server_with(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Any]:
    """``await server_with(**settings)``: a server with those settings changed."""
    stack: list[Any] = []

    async def start(**changes: Any) -> Server:
        context = serving(settings.model_copy(update=changes), engine, broker, clock)
        stack.append(context)
        return await context.__aenter__()

    yield start
    for context in reversed(stack):
        await context.__aexit__(None, None, None)


async def test_an_unknown_hash_is_persisted_query_not_found_then_registered(
    client: Client,
) -> None:
    status, body = await post(client, persisted(TYPENAME, send_document=False))

    assert (status, codes(body)) == (400, ["PERSISTED_QUERY_NOT_FOUND"])
    assert body["errors"][0]["message"] == "PersistedQueryNotFound"  # what the links match
    assert "data" not in body

    assert await post(client, persisted(TYPENAME, send_document=True)) == (
        200,
        {"data": {"__typename": "Query"}},
    )
    assert await post(client, persisted(TYPENAME, send_document=False)) == (
        200,
        {"data": {"__typename": "Query"}},
    )


async def test_a_hash_that_does_not_match_its_document_is_refused(client: Client) -> None:
    body = persisted(TYPENAME, send_document=True)
    body["query"] = OTHER

    status, answer = await post(client, body)

    assert (status, codes(answer)) == (400, ["BAD_REQUEST"])
    # and the wrong pairing was not remembered
    status, answer = await post(client, persisted(TYPENAME, send_document=False))
    assert codes(answer) == ["PERSISTED_QUERY_NOT_FOUND"]


async def test_persisted_queries_over_get(client: Client) -> None:
    await post(client, persisted(TYPENAME, send_document=True))
    extensions = persisted(TYPENAME, send_document=False)["extensions"]

    response = await client.http.get("/graphql", params={"extensions": json.dumps(extensions)})

    assert response.json() == {"data": {"__typename": "Query"}}


async def test_the_memory_is_bounded_and_forgets_the_least_recently_used(server_with: Any) -> None:
    server: Server = await server_with(persisted_queries=2)
    client = server.client()
    documents = [f"query Q{i} {{ __typename }}" for i in range(3)]
    for document in documents[:2]:
        await post(client, persisted(document, send_document=True))
    await post(client, persisted(documents[0], send_document=False))  # Q0 is used again

    await post(client, persisted(documents[2], send_document=True))  # Q1 goes

    assert codes((await post(client, persisted(documents[1], send_document=False)))[1]) == [
        "PERSISTED_QUERY_NOT_FOUND"
    ]
    for document in (documents[0], documents[2]):
        status, _ = await post(client, persisted(document, send_document=False))
        assert status == 200


async def test_with_no_memory_the_protocol_is_not_supported(server_with: Any) -> None:
    server: Server = await server_with(persisted_queries=0)

    status, body = await post(server.client(), persisted(TYPENAME, send_document=False))

    assert (status, codes(body)) == (400, ["PERSISTED_QUERY_NOT_SUPPORTED"])
    assert body["errors"][0]["message"] == "PersistedQueryNotSupported"


# --- trusted documents -------------------------------------------------------------------------


async def test_trusted_documents_run_only_the_listed_hashes(
    server_with: Any, tmp_path: Path
) -> None:
    listed = tmp_path / "trusted.json"
    listed.write_text(json.dumps([sha(TYPENAME)]))
    client = (await server_with(trusted_documents=listed)).client()

    assert await post(client, {"query": TYPENAME}) == (200, {"data": {"__typename": "Query"}})
    for body in ({"query": OTHER}, persisted(OTHER, send_document=True)):
        status, answer = await post(client, body)
        assert (status, codes(answer)) == (400, ["PERSISTED_QUERY_NOT_IN_LIST"])
        assert "data" not in answer
    # A listed hash whose text the file does not carry is registered like any APQ.
    assert codes((await post(client, persisted(TYPENAME, send_document=False)))[1]) == [
        "PERSISTED_QUERY_NOT_FOUND"
    ]
    assert (await post(client, persisted(TYPENAME, send_document=True)))[0] == 200
    assert (await post(client, persisted(TYPENAME, send_document=False)))[0] == 200


async def test_a_manifest_with_documents_runs_them_by_hash_from_the_first_request(
    server_with: Any, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        json.dumps(
            {
                "format": "apollo-persisted-query-manifest",
                "version": 1,
                "operations": [{"id": sha(OTHER), "name": "Other", "type": "query", "body": OTHER}],
            }
        )
    )
    client = (await server_with(trusted_documents=manifest)).client()

    assert await post(client, persisted(OTHER, send_document=False)) == (
        200,
        {"data": {"__typename": "Query"}},
    )
    assert codes((await post(client, {"query": TYPENAME}))[1]) == ["PERSISTED_QUERY_NOT_IN_LIST"]


def test_a_listed_document_under_another_hash_is_refused_at_start(tmp_path: Path) -> None:
    listed = tmp_path / "trusted.json"
    listed.write_text(json.dumps({sha(TYPENAME): OTHER}))

    with pytest.raises(ValueError, match="another hash"):
        load_trusted_documents(listed)


async def test_trusted_documents_hold_for_websocket_operations_too(
    server_with: Any, tmp_path: Path
) -> None:
    """A page could otherwise run any document over the websocket."""
    listed = tmp_path / "trusted.json"
    listed.write_text(json.dumps([sha(SIGN_UP_DOC)]))
    server: Server = await server_with(trusted_documents=listed)
    stranger = 'subscription { paneEvents(roomId: "r1", seat: HOST) { __typename } }'

    async with subscribe(server.ws_url, stranger, {}) as subscription:
        payload = await subscription.next()

    assert [error["extensions"]["code"] for error in payload["errors"]] == [
        "PERSISTED_QUERY_NOT_IN_LIST"
    ]
