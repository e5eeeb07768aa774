"""GraphQL over HTTP as the specification words it: the spec's own audit suite (graphql-http's
``auditServer``, npm, run by Node) against the live server, then the status and error policy
the README promises, request by request."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from dealroom.http_graphql import GRAPHQL_RESPONSE, negotiate
from tests.conftest import Server
from tests.http.conftest import Node
from tests.support.graphql import Client

GQL_RESPONSE = {"accept": GRAPHQL_RESPONSE, "content-type": "application/json"}
LEGACY = {"accept": "application/json", "content-type": "application/json"}
DEEP = b'{"query": "{ __typename }", "variables": {"v": ' + b"[" * 33 + b"]" * 33 + b"}}"


async def test_every_audit_of_the_graphql_over_http_suite_passes(
    server: Server, node: Node
) -> None:
    """Every MUST, SHOULD and MAY audit of graphql-http's suite (61 in the locked version)."""
    results = await node.run_json("audit.mjs", f"{server.base_url}/graphql")

    failed = [result for result in results if result["status"] != "ok"]
    assert not failed, failed
    names = [result["name"] for result in results]
    assert sum(name.startswith("MUST") for name in names) >= 13
    assert sum(name.startswith("SHOULD") for name in names) >= 23
    assert len(results) >= 61


# --- content negotiation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        (None, "application/json"),
        ("", "application/json"),
        ("*/*", "application/json"),
        ("application/json", "application/json"),
        (GRAPHQL_RESPONSE, GRAPHQL_RESPONSE),
        (f"{GRAPHQL_RESPONSE},application/json;q=0.9", GRAPHQL_RESPONSE),
        (f"application/json, {GRAPHQL_RESPONSE}", "application/json"),
        (f"application/json;q=0.5, {GRAPHQL_RESPONSE}", GRAPHQL_RESPONSE),
        (f"{GRAPHQL_RESPONSE};charset=latin1, application/json", "application/json"),
        ("text/html", None),
        ("application/xml, text/plain;q=0.5", None),
        ("application/json;q=0", None),
    ],
)
def test_the_response_type_follows_accept(accept: str | None, media: str | None) -> None:
    assert negotiate(accept) == media


async def test_graphql_response_json_is_answered_in_kind(client: Client) -> None:
    response = await client.http.post(
        "/graphql", json={"query": "{ __typename }"}, headers=GQL_RESPONSE
    )

    assert response.status_code == 200
    assert response.headers["content-type"] == f"{GRAPHQL_RESPONSE}; charset=utf-8"
    assert response.json() == {"data": {"__typename": "Query"}}


async def test_an_unacceptable_accept_is_406_naming_what_is_served(client: Client) -> None:
    response = await client.http.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"accept": "text/csv"}
    )

    assert response.status_code == 406
    assert GRAPHQL_RESPONSE in response.headers["accept"]
    assert codes(response) == ["NOT_ACCEPTABLE"]


# --- every refusal has a status and a code ------------------------------------------------------


def codes(response: httpx.Response) -> list[str]:
    return [error["extensions"]["code"] for error in response.json()["errors"]]


@pytest.mark.parametrize("accept", ["application/json", GRAPHQL_RESPONSE])
@pytest.mark.parametrize(
    ("request_args", "status", "code"),
    [
        ({"content": b'{"query": "{ __typename }"', "ct": "application/json"}, 400, "BAD_REQUEST"),
        ({"content": b"", "ct": "application/json"}, 400, "BAD_REQUEST"),
        ({"content": b"\xff\xfe{}", "ct": "application/json"}, 400, "BAD_REQUEST"),
        ({"content": b"{ __typename }", "ct": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
        (
            {"content": b"{ __typename }", "ct": "application/graphql"},
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        ({"content": b'{"query": "{ __typename }"}', "ct": None}, 415, "UNSUPPORTED_MEDIA_TYPE"),
        (
            {"content": b'{"query": "{ __typename }"}', "ct": "application/json; charset=latin1"},
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        ({"json": [{"query": "{ __typename }"}] * 2}, 400, "BAD_REQUEST"),
        ({"json": "{ __typename }"}, 400, "BAD_REQUEST"),
        ({"json": {"qeury": "{ __typename }"}}, 400, "BAD_REQUEST"),
        ({"json": {"query": ["{ __typename }"]}}, 400, "BAD_REQUEST"),
        ({"json": {"query": "{ __typename }", "variables": "{}"}}, 400, "BAD_REQUEST"),
        ({"json": {"query": "{ __typename }", "operationName": 1}}, 400, "BAD_REQUEST"),
        ({"json": {"query": "{ __typename }", "extensions": []}}, 400, "BAD_REQUEST"),
        ({"content": DEEP, "ct": "application/json"}, 400, "BAD_USER_INPUT"),
    ],
)
async def test_a_request_the_server_cannot_read_is_4xx_with_a_code_whatever_is_accepted(
    client: Client, accept: str, request_args: dict[str, Any], status: int, code: str
) -> None:
    headers = {"accept": accept}
    if "ct" in request_args:
        if request_args["ct"] is not None:
            headers["content-type"] = request_args["ct"]
        response = await client.http.post(
            "/graphql", content=request_args["content"], headers=headers
        )
    else:
        response = await client.http.post("/graphql", json=request_args["json"], headers=headers)

    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(accept)
    assert codes(response) == [code]
    assert "data" not in response.json()


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
async def test_other_methods_are_405_with_allow(client: Client, method: str) -> None:
    response = await client.http.request(method, "/graphql", json={"query": "{ __typename }"})

    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"
    assert codes(response) == ["METHOD_NOT_ALLOWED"]


async def test_a_mutation_over_get_is_405_and_does_nothing(client: Client) -> None:
    response = await client.http.get(
        "/graphql", params={"query": "mutation { signOut }"}, headers={"accept": GRAPHQL_RESPONSE}
    )

    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert codes(response) == ["METHOD_NOT_ALLOWED"]


async def test_queries_run_over_get_with_json_parameters(client: Client) -> None:
    response = await client.http.get(
        "/graphql",
        params={
            "query": "query Q($h: String!) { account(handle: $h) { handle } }",
            "variables": '{"h": "nobody-here"}',
            "operationName": "Q",
        },
    )

    assert response.status_code == 200
    assert "data" in response.json()


# --- request errors: 400 for graphql-response+json, 200 for legacy application/json --------------

REQUEST_ERRORS = [
    ({"query": "{"}, "Syntax Error"),  # parse
    ({"query": "{ noSuchField }"}, "Cannot query field"),  # validation
    ({"query": "query Q($id: ID!) { __typename }"}, "Variable '$id'"),  # variable coercion
    (
        {"query": "query A { __typename }", "operationName": "B"},
        "Unknown operation",
    ),  # which operation
    ({"query": 'subscription { paneEvents(roomId: "r", seat: HOST) { __typename } }'}, "websocket"),
]


@pytest.mark.parametrize(("body", "message"), REQUEST_ERRORS)
async def test_a_request_error_is_400_without_data_in_graphql_response_json(
    client: Client, body: dict[str, str], message: str
) -> None:
    response = await client.http.post("/graphql", json=body, headers=GQL_RESPONSE)

    assert response.status_code == 400, response.text
    answer = response.json()
    assert "data" not in answer
    assert codes(response) == ["BAD_USER_INPUT"] * len(answer["errors"])
    assert message in answer["errors"][0]["message"]


@pytest.mark.parametrize(("body", "message"), REQUEST_ERRORS)
async def test_a_request_error_is_200_for_legacy_application_json(
    client: Client, body: dict[str, str], message: str
) -> None:
    response = await client.http.post("/graphql", json=body, headers=LEGACY)

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert "data" not in response.json()
    assert set(codes(response)) == {"BAD_USER_INPUT"}


async def test_a_field_error_is_200_with_data_beside_it(client: Client) -> None:
    """Execution began: the response has ``data`` (null where the field failed) and 2xx."""
    response = await client.http.post(
        "/graphql",
        json={"query": '{ room(id: "not-a-room-id") { id } }'},
        headers=GQL_RESPONSE,
    )

    assert response.status_code == 200
    body = response.json()
    assert "data" in body
    assert codes(response)[0] in {"NOT_FOUND", "BAD_USER_INPUT"}
    assert body["errors"][0]["path"] == ["room"]
