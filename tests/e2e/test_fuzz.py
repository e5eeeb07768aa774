"""The live schema, fuzzed: queries and mutations generated from the schema by hypothesis-graphql,
valid and invalid, sent over HTTP to a real server as an anonymous caller and as a signed-in host
with a room. No 5xx, no INTERNAL, no unhandled exception logged.

Bounded and reproducible: a fixed number of examples per mode, derandomized."""

from __future__ import annotations

from typing import Any

import pytest
import structlog
from graphql import StringValueNode
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_graphql import Mode, mutations, queries

from dealroom.schema.build import create_schema
from tests.conftest import Server
from tests.support.graphql import Client, open_room, sign_up

SDL = create_schema().as_str()
SCALARS = {
    "DateTime": st.just("2026-01-01T00:00:00+00:00").map(lambda v: StringValueNode(value=v)),
    "JSON": st.just('{"a": 1}').map(lambda v: StringValueNode(value=v)),
}
EXAMPLES = 60


def generated(strategy: st.SearchStrategy[object], examples: int) -> list[str]:
    """Draw ``examples`` documents (hypothesis runs the collector once per example)."""
    drawn: list[str] = []

    @settings(max_examples=examples, database=None, derandomize=True)
    @given(strategy)
    def collect(document: object) -> None:
        drawn.append(str(document))

    collect()
    return drawn


@pytest.mark.parametrize(
    ("name", "strategy"),
    [
        ("queries", queries(SDL, custom_scalars=SCALARS)),
        ("mutations", mutations(SDL, custom_scalars=SCALARS)),
        ("invalid-queries", queries(SDL, custom_scalars=SCALARS, mode=Mode.NEGATIVE)),
        ("invalid-mutations", mutations(SDL, custom_scalars=SCALARS, mode=Mode.NEGATIVE)),
    ],
)
async def test_fuzzed_operations_never_fail_the_server(
    server: Server, caplog: pytest.LogCaptureFixture, name: str, strategy: Any
) -> None:
    anonymous = server.client()
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = server.client()
    await open_room(guest, "mara")
    callers: list[Client] = [anonymous, host, guest]

    with structlog.testing.capture_logs() as logs:
        for index, document in enumerate(generated(strategy, EXAMPLES)):
            caller = callers[index % len(callers)]
            response = await caller.http.post(
                "/graphql", json={"query": document}, headers=caller.headers
            )
            assert response.status_code < 500, (document, response.text)
            if response.headers.get("content-type", "").startswith("application/json"):
                body = response.json()
                codes = [e.get("extensions", {}).get("code") for e in body.get("errors") or []]
                assert "INTERNAL" not in codes, (document, body)

    internal = [entry for entry in logs if entry.get("log_level") in ("error", "critical")]
    assert not internal, internal
    unhandled = [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert not unhandled, [r.getMessage() for r in unhandled]
