"""Real npm clients against the live server (tests/js/clients.mjs, run by Node): Apollo Client
and urql each sign up (a mutation), read ``me`` twice (a query) and post a message (a mutation)
with automatic persisted queries on, and receive the message on a ``paneEvents`` subscription
over graphql-ws authorised by ``connectionParams: {authorization: "Bearer …"}``."""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.http.conftest import Node


@pytest.mark.parametrize("kind", ["apollo", "urql"])
async def test_a_real_client_queries_mutates_and_subscribes_with_persisted_queries(
    server: Server, node: Node, kind: str
) -> None:
    [result] = await node.run_json("clients.mjs", kind, f"{server.base_url}/graphql")

    assert "error" not in result, result
    assert result["me"] == [result["handle"]] * 2
    assert result["received"] == f"hello from {kind}"
    requests = result["requests"]
    # Every operation went out as a hash first; an unknown one was answered
    # PERSISTED_QUERY_NOT_FOUND in the spec's media type, and the client sent the document.
    assert all(request["withHash"] for request in requests)
    assert all(
        request["contentType"] == "application/graphql-response+json; charset=utf-8"
        for request in requests
    )
    misses = [request for request in requests if request["codes"] == ["PERSISTED_QUERY_NOT_FOUND"]]
    assert [miss["status"] for miss in misses] == [400, 400, 400]  # SignUp, Me, Post
    assert all(miss["hashOnly"] for miss in misses)
    # The second `me` was served from the hash alone.
    hits = [r for r in requests if r["hashOnly"] and r["status"] == 200 and not r["codes"]]
    assert len(hits) == 1
