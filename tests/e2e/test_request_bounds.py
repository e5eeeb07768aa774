"""Bounds a request meets before anything parses it: body and websocket message size, JSON nesting,
document size/tokens/literals, introspection depth."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets
from graphql import get_introspection_query
from websockets.typing import Subprotocol

from dealroom.config import Settings
from tests.conftest import Server
from tests.support.graphql import TRANSPORT_WS, Client, subscribe

LIMIT = 256 * 1024


@pytest.fixture
def client(server: Server) -> Client:
    return server.client()


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body["errors"]]


# --- bytes -----------------------------------------------------------------------------------


async def test_a_body_over_the_byte_limit_is_413_with_a_code(client: Client) -> None:
    query = "{ __typename }\n#" + "x" * LIMIT

    response = await client.http.post("/graphql", json={"query": query})

    assert response.status_code == 413
    assert codes(response.json()) == ["PAYLOAD_TOO_LARGE"]
    assert "DEALROOM_MAX_REQUEST_BYTES" in response.json()["errors"][0]["message"]


async def test_a_chunked_body_over_the_limit_is_413_too(client: Client) -> None:
    """No Content-Length to trust: the limit counts the bytes as they arrive."""

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"query": "{ __typename }", "variables": {"pad": "'
        for _ in range(LIMIT // 4096 + 1):
            yield b"x" * 4096
        yield b'"}}'

    response = await client.http.post(
        "/graphql", content=chunks(), headers={"content-type": "application/json"}
    )

    assert response.status_code == 413
    assert codes(response.json()) == ["PAYLOAD_TOO_LARGE"]


async def test_a_body_just_under_the_limit_is_served(client: Client) -> None:
    request = {"query": "{ __typename }", "extensions": {"pad": "x" * (LIMIT - 200)}}

    response = await client.http.post("/graphql", json=request)

    assert response.json() == {"data": {"__typename": "Query"}}


async def test_a_websocket_message_over_the_limit_closes_with_1009(server: Server) -> None:
    async with websockets.connect(
        server.ws_url, subprotocols=[Subprotocol(TRANSPORT_WS)], max_size=None
    ) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {"pad": "x" * LIMIT}}))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()

    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009


# --- JSON nesting ------------------------------------------------------------------------------


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [33, 1000, 100_000])
async def test_deeply_nested_variables_are_bad_user_input_never_500(
    client: Client, levels: int
) -> None:
    body = '{"query": "{ __typename }", "variables": {"v": ' + deep(levels) + "}}"

    response = await client.http.post(
        "/graphql", content=body, headers={"content-type": "application/json"}
    )

    assert response.status_code == 400
    assert codes(response.json()) == ["BAD_USER_INPUT"]
    # 100,000 levels is also over the item bound, which is counted first.
    bound = "more than 10000 items" if levels > 5000 else "nested deeper than 32"
    assert bound in response.json()["errors"][0]["message"]


async def test_nesting_within_the_bound_is_served(client: Client) -> None:
    body = '{"query": "{ __typename }", "variables": {"v": ' + deep(30) + "}}"

    response = await client.http.post(
        "/graphql", content=body, headers={"content-type": "application/json"}
    )

    assert response.json() == {"data": {"__typename": "Query"}}


async def test_a_deeply_nested_websocket_frame_is_closed_4400(server: Server) -> None:
    async with websockets.connect(server.ws_url, subprotocols=[Subprotocol(TRANSPORT_WS)]) as ws:
        await ws.send('{"type": "connection_init", "payload": {"v": ' + deep(1000) + "}}")
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()

    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4400


# --- documents -----------------------------------------------------------------------------------


async def test_comments_count_as_tokens(client: Client) -> None:
    query = "{ __typename }" + "\n#c" * 2000

    body = await client.raw(query)

    assert codes(body) == ["BAD_USER_INPUT"]
    assert "more than 2000 tokens" in body["errors"][0]["message"]


async def test_a_long_comment_is_refused_before_parsing(client: Client) -> None:
    body = await client.raw("{ __typename }\n#" + "x" * 9000)

    assert codes(body) == ["BAD_USER_INPUT"]
    assert "longer than 8192" in body["errors"][0]["message"]


async def test_a_long_string_literal_is_refused(client: Client) -> None:
    body = await client.raw('{ account(handle: "' + "x" * 9000 + '") { handle } }')

    assert codes(body) == ["BAD_USER_INPUT"]
    assert "pass long values as variables" in body["errors"][0]["message"]


async def test_a_long_document_is_refused(client: Client) -> None:
    body = await client.raw("{ __typename " + " " * 20_000 + "}")

    assert codes(body) == ["BAD_USER_INPUT"]
    assert "longer than 16384 characters" in body["errors"][0]["message"]


async def test_a_subscription_document_is_bounded_too(server: Server) -> None:
    """A valid subscription but for its comment: ``subscription { __typename }`` was refused
    by validation (an introspection root) whether or not the bound held."""
    query = 'subscription { offerStage(offerId: "x") { cursor } }\n#' + "x" * 9000
    async with subscribe(server.ws_url, query, {}) as sub:
        payload = await sub.next()

    assert [e["extensions"]["code"] for e in payload["errors"]] == ["BAD_USER_INPUT"]
    assert "longer than 8192" in payload["errors"][0]["message"]


# --- introspection counts for depth ------------------------------------------------------------


def of_type(levels: int) -> str:
    return (
        '{ __type(name: "Query") { fields { type '
        + "{ ofType " * levels
        + "{ name }"
        + " }" * levels
        + " } } }"
    )


async def test_deep_introspection_is_refused_by_the_depth_limit(client: Client) -> None:
    body = await client.raw(of_type(24))

    assert codes(body) == ["BAD_USER_INPUT"]
    assert "maximum operation depth of 16" in body["errors"][0]["message"]


async def test_graphiqls_introspection_query_is_within_the_limits(client: Client) -> None:
    body = await client.raw(get_introspection_query())

    assert "errors" not in body, body.get("errors")
    assert body["data"]["__schema"]["queryType"]["name"] == "Query"


async def test_the_limits_follow_the_settings(settings: Settings) -> None:
    """The defaults above are the documented ones."""
    assert settings.max_request_bytes == LIMIT
    assert settings.max_json_depth == 32
    assert (settings.max_query_chars, settings.max_literal_chars) == (16 * 1024, 8 * 1024)


# --- a malformed Authorization header -----------------------------------------------------------


@pytest.mark.parametrize("header", ["s_sometoken", "Token s_sometoken", "Bearer"])
async def test_an_authorization_header_without_bearer_is_unauthenticated_with_a_hint(
    client: Client, header: str
) -> None:
    """A malformed header is refused with a hint, never read as a silently anonymous caller."""
    client.headers["Authorization"] = header

    body = await client.raw("{ me { handle } }")

    assert codes(body) == ["UNAUTHENTICATED"]
    assert "Bearer <token>" in body["errors"][0]["message"]
