"""The operator's switches: DEALROOM_INTROSPECTION, DEALROOM_GRAPHIQL, JSON logs for every line
a `dealroom serve` process writes (DEALROOM_LOG_FORMAT=json), and the process and Python
runtime metrics on /metrics."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import Client
from tests.support.processes import free_port, wait_healthy

INTROSPECT = "{ __schema { queryType { name } } }"


@pytest.fixture
async def closed(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    """A server as production might run it: no introspection, no GraphiQL."""
    changed = settings.model_copy(update={"introspection": False, "graphiql": False})
    async with serving(changed, engine, broker, clock) as running:
        yield running


async def test_introspection_is_on_by_default(client: Client) -> None:
    assert await client.query(INTROSPECT) == {"__schema": {"queryType": {"name": "Query"}}}


async def test_introspection_off_refuses_schema_and_type_but_not_typename(closed: Server) -> None:
    client = closed.client()

    for query in (INTROSPECT, '{ __type(name: "Room") { name } }'):
        assert set(await client.error_codes(query)) == {"BAD_USER_INPUT"}
    assert await client.query("{ __typename }") == {"__typename": "Query"}


async def test_graphiql_is_served_to_browsers_by_default(client: Client) -> None:
    response = await client.http.get("/graphql", headers={"accept": "text/html"})

    assert response.status_code == 200
    assert "graphiql" in response.text.lower()


async def test_graphiql_off_is_404(closed: Server) -> None:
    response = await closed.client().http.get("/graphql", headers={"accept": "text/html"})

    assert response.status_code == 404
    assert "graphiql" not in response.text.lower()


async def test_metrics_include_process_and_python_runtime_metrics(client: Client) -> None:
    response = await client.http.get("/metrics")

    families = {family.name for family in text_string_to_metric_families(response.text)}
    assert {
        "process_cpu_seconds",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
        "python_info",
        "python_gc_collections",
    } <= families


# --- every log line is JSON ----------------------------------------------------------------------


async def test_every_line_a_json_logging_server_writes_is_json(tmp_path: Path) -> None:
    """Banner, uvicorn's start-up, access and shutdown lines, strawberry's and our own events,
    and gc_pause lines: each one JSON object."""
    port = free_port()
    log = tmp_path / "serve.log"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DEALROOM_")},
        "DEALROOM_DATA_DIR": str(tmp_path / "data"),
        "DEALROOM_PORT": str(port),
        "DEALROOM_LOG_FORMAT": "json",
        "DEALROOM_DEMO": "0",
        "DEALROOM_WORKERS": "0",
        "DEALROOM_GC_PAUSE_LOG_MS": "0.001",  # every collection writes its line
    }
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: ASYNC220  # wait_healthy polls a Popen
            [sys.executable, "-m", "dealroom.cli", "serve", "--processes", "1"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            await wait_healthy(base, process)
            async with httpx.AsyncClient(base_url=base) as http:
                await http.post("/graphql", json={"query": "{ __typename }"})
                await http.post("/graphql", content=b"{", headers={"content-type": "text/plain"})
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)

    lines = [line for line in log.read_text().splitlines() if line.strip()]
    parsed: list[dict[str, Any]] = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"a line that is not JSON: {line!r}")
    events = [entry.get("event", "") for entry in parsed]
    assert "banner" in events
    assert any("Application startup complete" in event for event in events)
    assert any("Uvicorn running on" in event for event in events)
    assert "gc_pause" in events
    access = [entry for entry in parsed if entry.get("logger") == "uvicorn.access"]
    assert {(entry["method"], entry["path"], entry["status"]) for entry in access} >= {
        ("POST", "/graphql", 200),
        ("POST", "/graphql", 415),
    }
    assert all("timestamp" in entry for entry in parsed if entry.get("event") != "gc_pause")


async def test_refusals_before_the_schema_are_counted_by_code(client: Client) -> None:
    def count(samples: str, code: str) -> float:
        for family in text_string_to_metric_families(samples):
            for sample in family.samples:
                if sample.name == "dealroom_graphql_errors_total" and sample.labels == {
                    "code": code
                }:
                    return sample.value
        return 0.0

    before = (await client.http.get("/metrics")).text
    await client.http.post("/graphql", content=b"{", headers={"content-type": "text/plain"})
    after = (await client.http.get("/metrics")).text

    assert count(after, "UNSUPPORTED_MEDIA_TYPE") == count(before, "UNSUPPORTED_MEDIA_TYPE") + 1
