"""/metrics: Prometheus text that the Prometheus parser reads, whose counters move with real
traffic."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import PANE_EVENTS, post, subscribe, ws_init_for
from tests.support.offers import open_deal, settle

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(server: Server, token: str | None = None) -> Samples:
    client = server.client()
    headers = {"authorization": f"Bearer {token}"} if token else {}
    response = await client.http.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
async def metered(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    chosen = settings.model_copy(update={"metrics_token": "scrape-me"})
    async with serving(chosen, engine, broker, clock) as running:
        yield running


async def test_metrics_parse_and_move_with_traffic(metered: Server) -> None:
    server = metered
    assert (await server.client().http.get("/metrics")).status_code == 401
    before = await scrape(server, "scrape-me")
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "We'd like a sponsored post")
    assert await d.visitor.error_codes("{ agentPrompts { name } }") == ["NOT_FOUND"]
    queued = await scrape(server, "scrape-me")
    assert value(queued, "dealroom_agent_runs_queued", agent="persona", status="queued") == 1
    await settle(server)
    variables = {"roomId": d.room_id, "seat": "VISITOR"}
    async with subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(d.visitor)):
        for _ in range(100):
            during = await scrape(server, "scrape-me")
            if value(during, "dealroom_subscriptions_open", field="paneEvents") >= 1:
                break
    # The client's close reaches the server asynchronously: the subscription's generator ends
    # (and the gauge falls) when the server reads the close, a moment after the client leaves.
    for _ in range(200):
        after = await scrape(server, "scrape-me")
        if value(after, "dealroom_subscriptions_open", field="paneEvents") == 0:
            break
        await asyncio.sleep(0.05)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert value(during, "dealroom_subscriptions_open", field="paneEvents") == 1
    assert value(after, "dealroom_subscriptions_open", field="paneEvents") == 0
    assert moved("dealroom_graphql_requests_total", operation="mutation") >= 3
    assert moved("dealroom_graphql_requests_total", operation="query") >= 1
    assert moved("dealroom_graphql_errors_total", code="NOT_FOUND") == 1
    assert moved("dealroom_posts_total", author="participant") == 2  # the rules, the ask
    assert moved("dealroom_agent_run_seconds_count", agent="persona") == 2
    assert moved("dealroom_agent_run_seconds_count", agent="distil") == 2
    assert value(after, "dealroom_agent_runs_queued", agent="persona", status="queued") == 0
    tokens = sum(
        v - before.get(k, 0.0) for k, v in after.items() if k[0] == "dealroom_model_tokens_total"
    )
    assert tokens > 0
    assert ("dealroom_webhook_deliveries_pending", ()) in after
