"""The live schema, fuzzed: queries and mutations generated from the schema by hypothesis-graphql,
valid and invalid, sent over HTTP to a real server as an anonymous caller and as a signed-in host
with a room. No 5xx, no INTERNAL, no unhandled exception logged. And websocket frames of every
JSON type, before and after connection_init: answered or closed with a protocol code, never a
dropped socket and a traceback.

Bounded and reproducible: a fixed number of examples per mode, derandomized."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import structlog
import websockets
from graphql import StringValueNode
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_graphql import Mode, mutations, queries
from websockets.typing import Subprotocol

from dealroom.schema.build import create_schema
from tests.conftest import Server
from tests.support.graphql import EVENT_SECONDS, TRANSPORT_WS, Client, open_room, sign_up

SDL = create_schema().as_str()
SCALARS = {
    "DateTime": st.just("2026-01-01T00:00:00+00:00").map(lambda v: StringValueNode(value=v)),
    "JSON": st.just('{"a": 1}').map(lambda v: StringValueNode(value=v)),
}
EXAMPLES = 60


def generated(strategy: st.SearchStrategy[object], examples: int) -> list[str]:
    """Draw ``examples`` documents (hypothesis runs the collector once per example)."""
    return [str(document) for document in generated_values(strategy, examples)]


def generated_values(strategy: st.SearchStrategy[object], examples: int) -> list[object]:
    """Draw ``examples`` values, reproducibly."""
    drawn: list[object] = []

    @settings(max_examples=examples, database=None, derandomize=True)
    @given(strategy)
    def collect(value: object) -> None:
        drawn.append(value)

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


# --- websocket frames ----------------------------------------------------------------------------

JSON_VALUES: st.SearchStrategy[object] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
"""Any JSON value: every type at the top level and inside."""
MESSAGE_TYPES = ["connection_init", "ping", "pong", "subscribe", "complete", "start", "stop", "x"]
FRAMES: st.SearchStrategy[object] = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries(
        {"type": st.sampled_from(MESSAGE_TYPES)},
        optional={"id": JSON_VALUES, "payload": JSON_VALUES},
    ),
    st.fixed_dictionaries(
        {"type": st.just("subscribe"), "id": st.text(min_size=1, max_size=4)},
        optional={
            "payload": st.fixed_dictionaries(
                {},
                optional={
                    "query": st.sampled_from(["{ me { id } }", "{", 1, None]),
                    "variables": JSON_VALUES,
                    "operationName": JSON_VALUES,
                },
            )
        },
    ),
)
"""A frame: any JSON value, a message of a known type with any id and payload, or a subscribe
whose payload's fields have any type."""
PROTOCOL_CLOSES = {4400, 4401, 4403, 4409, 4429}
"""What graphql-transport-ws may answer an unreadable or out-of-order frame with."""


async def _answer(ws: Any) -> int | None:
    """Read until the pong sent after the fuzzed frame (None) or the close (its code)."""
    try:
        async with asyncio.timeout(EVENT_SECONDS):
            while True:
                message = json.loads(await ws.recv())
                if message.get("type") == "pong":
                    return None
    except websockets.ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


@pytest.mark.parametrize("after_init", [False, True], ids=["before-init", "after-init"])
async def test_fuzzed_websocket_frames_of_every_json_type_never_fail_the_server(
    server: Server, caplog: pytest.LogCaptureFixture, after_init: bool
) -> None:
    frames = [json.dumps(f) for f in generated_values(FRAMES, EXAMPLES)]
    answers: set[int | None] = set()

    with structlog.testing.capture_logs() as logs:
        for frame in frames:
            async with websockets.connect(
                server.ws_url, subprotocols=[Subprotocol(TRANSPORT_WS)], compression=None
            ) as ws:
                if after_init:
                    await ws.send(json.dumps({"type": "connection_init"}))
                    assert json.loads(await ws.recv())["type"] == "connection_ack"
                await ws.send(frame)
                await ws.send(json.dumps({"type": "ping"}))
                code = await _answer(ws)
                assert code is None or code in PROTOCOL_CLOSES, (frame, code)
                answers.add(code)

    assert 4400 in answers  # the strategy does reach unreadable frames
    internal = [entry for entry in logs if entry.get("log_level") in ("error", "critical")]
    assert not internal, internal
    unhandled = [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert not unhandled, [r.getMessage() for r in unhandled]
