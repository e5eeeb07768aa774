"""Request limits, error codes and masking, health and GraphiQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
import strawberry

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.schema.errors import ErrorCodes
from tests.conftest import Server
from tests.support.graphql import Client

DEPTH_LIMIT = 12
ALIAS_LIMIT = 30
TOKEN_LIMIT = 2000


def coded_errors(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The response's errors, asserting that there are some and that each carries a code."""
    errors: list[dict[str, Any]] = response.get("errors") or []
    assert errors, f"expected errors, got {response}"
    for error in errors:
        assert isinstance(error.get("extensions", {}).get("code"), str), error
    return errors


def codes(errors: list[dict[str, Any]]) -> set[str]:
    return {e["extensions"]["code"] for e in errors}


def messages(errors: list[dict[str, Any]]) -> str:
    return " | ".join(str(e.get("message")) for e in errors)


def nested(depth: int) -> str:
    """A selection ``depth`` levels deep, the leaf included: ``{ a { a { ... { leaf } } } }``
    (``nested(1)`` is ``{ leaf }``)."""
    return "{ " + "a { " * (depth - 1) + "leaf" + " }" * (depth - 1) + " }"


@pytest.fixture
def client(server: Server) -> Client:
    return server.client()


# --- depth, aliases, tokens ----------------------------------------------------------------
# Every object path in the schema ends within ~8 levels, so no valid query can reach the depth
# limit; the limiter runs with the other validation rules, so its error is looked for among them.


async def test_a_query_deeper_than_the_depth_limit_is_rejected(client: Client) -> None:
    errors = coded_errors(await client.raw(nested(DEPTH_LIMIT + 1)))

    assert f"exceeds maximum operation depth of {DEPTH_LIMIT}" in messages(errors)
    assert codes(errors) == {"BAD_USER_INPUT"}


async def test_depth_counts_from_one_so_13_levels_fail_a_limit_of_12(client: Client) -> None:
    """The root field is level 1 and the leaf is a level: 13 fields deep is over 12."""
    assert DEPTH_LIMIT == 12
    query = nested(13)
    assert query.count("{") == 13  # 12 fields with selections and the leaf inside them

    errors = coded_errors(await client.raw(query))

    assert "exceeds maximum operation depth of 12" in messages(errors)


async def test_a_query_at_the_depth_limit_is_not_rejected_for_depth(client: Client) -> None:
    errors = coded_errors(await client.raw(nested(DEPTH_LIMIT)))  # unknown fields, still

    assert "maximum operation depth" not in messages(errors)


async def test_more_than_30_aliases_are_rejected(client: Client) -> None:
    query = "{ " + " ".join(f"a{i}: __typename" for i in range(ALIAS_LIMIT + 1)) + " }"

    response = await client.raw(query)

    errors = coded_errors(response)
    assert codes(errors) == {"BAD_USER_INPUT"}
    assert "aliases" in messages(errors)
    assert response.get("data") is None


async def test_30_aliases_are_accepted(client: Client) -> None:
    query = "{ " + " ".join(f"a{i}: __typename" for i in range(ALIAS_LIMIT)) + " }"

    response = await client.raw(query)

    assert "errors" not in response
    assert len(response["data"]) == ALIAS_LIMIT


def tokens(count: int) -> str:
    """A valid query of ``count`` tokens (count = 8n + 2): ``{ __typename @include(if: true) ...}``.

    Few fields on purpose: graphql-core aborts validation of ~800 sibling fields on its own."""
    repeats, rest = divmod(count - 2, 8)
    assert rest == 0, count
    return "{" + " __typename @include(if: true)" * repeats + " }"


async def test_more_than_2000_tokens_are_rejected(client: Client) -> None:
    query = tokens(TOKEN_LIMIT + 2)

    response = await client.raw(query)

    errors = coded_errors(response)
    assert codes(errors) == {"BAD_USER_INPUT"}
    assert "tokens" in messages(errors)
    assert response.get("data") is None


async def test_a_query_of_just_under_2000_tokens_is_accepted(client: Client) -> None:
    query = tokens(TOKEN_LIMIT - 6)

    response = await client.raw(query)

    assert response == {"data": {"__typename": "Query"}}


# --- request errors get codes --------------------------------------------------------------


async def test_a_syntax_error_is_bad_user_input(client: Client) -> None:
    errors = coded_errors(await client.raw("{ me { id "))

    assert codes(errors) == {"BAD_USER_INPUT"}
    assert "Syntax Error" in messages(errors)


async def test_an_unknown_field_is_bad_user_input(client: Client) -> None:
    errors = coded_errors(await client.raw("{ noSuchField }"))

    assert codes(errors) == {"BAD_USER_INPUT"}


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("query($id: ID!) { room(id: $id) { id } }", {}),
        ("query($id: ID!) { room(id: $id) { id } }", {"id": {"not": "an id"}}),
        ("query($n: Int!) { rooms(first: $n) { totalCount } }", {"n": "ten"}),
        ("query($n: Int!) { rooms(first: $n) { totalCount } }", {"n": 2**40}),
        ('query($s: Seat!) { room(id: "x") { pane(seat: $s) { seat } } }', {"s": "NOPE"}),
    ],
    ids=["missing", "object-for-id", "string-for-int", "int-overflow", "unknown-enum-value"],
)
async def test_a_bad_variable_is_bad_user_input_not_an_internal_error(
    client: Client, query: str, variables: dict[str, Any]
) -> None:
    errors = coded_errors(await client.raw(query, variables))

    assert codes(errors) == {"BAD_USER_INPUT"}, errors
    assert "Internal error." not in messages(errors)


async def test_a_domain_error_over_http_keeps_its_code_and_message(client: Client) -> None:
    errors = coded_errors(await client.raw('{ account(handle: "nobody-here") { id } }'))

    assert codes(errors) == {"NOT_FOUND"}
    assert messages(errors) == "Account not found."


async def test_a_subscription_sent_over_http_is_a_client_error(client: Client) -> None:
    query = (
        "subscription { paneEvents(roomId: "
        '"00000000-0000-0000-0000-000000000000", seat: HOST) { __typename } }'
    )

    errors = coded_errors(await client.raw(query))

    assert "INTERNAL" not in codes(errors), errors


# --- masking (a tiny schema using the same extension) --------------------------------------


@strawberry.type
class _Query:
    @strawberry.field
    def broken(self) -> str | None:
        raise RuntimeError("secret detail")

    @strawberry.field
    def refused(self) -> str | None:
        raise DomainError(ErrorCode.CONFLICT, "That handle is taken.", field="handle")


def tiny_schema(*, debug: bool) -> strawberry.Schema:
    return strawberry.Schema(query=_Query, extensions=[lambda: ErrorCodes(debug=debug)])


async def formatted_errors(schema: strawberry.Schema, query: str) -> list[dict[str, Any]]:
    result = await schema.execute(query)
    assert result.errors, result
    return [dict(error.formatted) for error in result.errors]


async def test_an_internal_error_is_masked_outside_debug() -> None:
    errors = await formatted_errors(tiny_schema(debug=False), "{ broken }")

    assert [(e["message"], e["extensions"]["code"]) for e in errors] == [
        ("Internal error.", "INTERNAL")
    ]
    assert "secret detail" not in json.dumps(errors)
    assert "RuntimeError" not in json.dumps(errors)


async def test_a_domain_error_keeps_its_message_and_code_outside_debug() -> None:
    errors = await formatted_errors(tiny_schema(debug=False), "{ refused }")

    assert [(e["message"], e["extensions"]) for e in errors] == [
        ("That handle is taken.", {"code": "CONFLICT", "field": "handle"})
    ]


async def test_masking_one_field_leaves_a_domain_error_beside_it_intact() -> None:
    errors = await formatted_errors(tiny_schema(debug=False), "{ broken refused }")

    by_path = {tuple(e["path"]): (e["message"], e["extensions"]["code"]) for e in errors}
    assert by_path == {
        ("broken",): ("Internal error.", "INTERNAL"),
        ("refused",): ("That handle is taken.", "CONFLICT"),
    }


async def test_debug_shows_the_internal_error_message() -> None:
    errors = await formatted_errors(tiny_schema(debug=True), "{ broken }")

    assert [e["message"] for e in errors] == ["secret detail"]
    assert errors[0]["extensions"]["code"] == "INTERNAL"


# --- health and GraphiQL -------------------------------------------------------------------


async def test_health_returns_ok(client: Client) -> None:
    response = await client.http.get("/health")

    assert response.status_code == 200
    assert response.json()["status"] == "ok"


async def test_graphiql_is_served_to_a_browser(client: Client) -> None:
    response = await client.http.get("/graphql", headers={"Accept": "text/html"})

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "graphiql" in response.text.lower()
