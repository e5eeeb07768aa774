"""Prometheus metrics, served at ``/metrics`` (README "Metrics").

Counters and histograms live in this process's registry and move as things happen; gauges
that describe shared state (queue depth, outbox backlog) are read from the database when
``/metrics`` is scraped, so any process reports the same truth."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from decimal import Decimal
from typing import TypeVar

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from dealroom import gc_tuning
from dealroom.agents.models.base import Usage
from dealroom.persistence.db import Db
from dealroom.persistence.runs import RunRepository
from dealroom.persistence.webhooks import WebhookRepository

T = TypeVar("T")

REGISTRY = CollectorRegistry(auto_describe=True)
# The prometheus client's own: process_* (CPU, resident memory, open descriptors, start time),
# python_info and python_gc_* (collections and objects per generation). Ours are dealroom_*.
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)

REQUESTS = Counter(
    "dealroom_graphql_requests",
    "GraphQL operations executed, by operation type (query, mutation, subscription).",
    ["operation"],
    registry=REGISTRY,
)
ERRORS = Counter(
    "dealroom_graphql_errors",
    "GraphQL errors returned, by extensions.code.",
    ["code"],
    registry=REGISTRY,
)
SUBSCRIPTIONS_OPEN = Gauge(
    "dealroom_subscriptions_open",
    "Subscriptions open in this process, by field.",
    ["field"],
    registry=REGISTRY,
)
SUBSCRIPTION_EXECUTIONS = Counter(
    "dealroom_subscription_event_executions",
    "Subscription events by how their selection was executed: shared (once for every "
    "subscriber with that selection), reused (a shared result written again), own (executed "
    "for one subscriber).",
    ["path"],
    registry=REGISTRY,
)
SUBSCRIPTION_SERIALISATIONS = Counter(
    "dealroom_subscription_payload_serialisations",
    "Shared subscription results encoded to JSON (once each, however many subscribers).",
    registry=REGISTRY,
)
SUBSCRIPTION_STARTS = Counter(
    "dealroom_subscription_starts",
    "Subscription start-ups by admission (services/live/admission.py): immediate (a slot was "
    "free), waited (queued, then admitted), refused (UNAVAILABLE: no slot within the wait).",
    ["outcome"],
    registry=REGISTRY,
)
POSTS = Counter(
    "dealroom_posts",
    "Lines posted into panes, by author kind (participant, operator).",
    ["author"],
    registry=REGISTRY,
)
TURN_SECONDS = Histogram(
    "dealroom_agent_run_seconds",
    "Wall time of an agent run's execution, by agent.",
    ["agent"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120),
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    "dealroom_agent_runs_queued",
    "Agent runs queued and due or running, by agent (read from the database at scrape).",
    ["agent", "status"],
    registry=REGISTRY,
)
RUN_FAILURES = Counter(
    "dealroom_agent_run_failures",
    "Agent run attempts that raised (each is retried or marked failed), by agent.",
    ["agent"],
    registry=REGISTRY,
)
MODEL_TOKENS = Counter(
    "dealroom_model_tokens",
    "Model tokens used, by agent, model and kind (input, output, cached).",
    ["agent", "model", "kind"],
    registry=REGISTRY,
)
MODEL_SPEND = Counter(
    "dealroom_model_spend_usd",
    "Model spend in USD from the price table, by agent and model.",
    ["agent", "model"],
    registry=REGISTRY,
)
MODEL_UNPRICED = Counter(
    "dealroom_model_unpriced_calls",
    "Model calls whose model is missing from the price table (not in the spend sum).",
    ["agent", "model"],
    registry=REGISTRY,
)
WEBHOOK_ATTEMPTS = Counter(
    "dealroom_webhook_attempts",
    "Webhook delivery attempts, by event type and outcome (delivered, failed).",
    ["event", "outcome"],
    registry=REGISTRY,
)
WEBHOOK_RETRIES = Counter(
    "dealroom_webhook_retries",
    "Webhook attempts that were retries (a delivery's second or later attempt).",
    ["event"],
    registry=REGISTRY,
)
WEBHOOK_FAILED = Counter(
    "dealroom_webhook_deliveries_failed",
    "Webhook deliveries given up after their retry window.",
    ["event"],
    registry=REGISTRY,
)
WEBHOOK_BACKLOG = Gauge(
    "dealroom_webhook_deliveries_pending",
    "Webhook deliveries waiting to be delivered (read from the database at scrape).",
    registry=REGISTRY,
)


class GcPauses(Collector):
    """Garbage-collection pauses of this process (``gc_tuning.PAUSES``), read at scrape: the
    collector's callback cannot safely touch a metric's lock."""

    def collect(self) -> Iterator[Metric]:
        stats = gc_tuning.PAUSES
        count = CounterMetricFamily(
            "dealroom_gc_pauses",
            "Garbage collections in this process since start-up, by generation.",
            labels=["generation"],
        )
        seconds = CounterMetricFamily(
            "dealroom_gc_pause_seconds",
            "Time this process spent paused in garbage collection, by generation.",
            labels=["generation"],
        )
        longest = GaugeMetricFamily(
            "dealroom_gc_pause_longest_seconds",
            "The longest garbage-collection pause of this process since start-up, by "
            "generation (target: under 0.05 s).",
            labels=["generation"],
        )
        for generation in gc_tuning.GENERATIONS:
            label = [str(generation)]
            count.add_metric(label, stats.count[generation])
            seconds.add_metric(label, stats.seconds[generation])
            longest.add_metric(label, stats.longest[generation])
        refreezes = CounterMetricFamily(
            "dealroom_gc_refreezes",
            "Times this process froze what its held subscriptions keep after a burst of "
            "subscribes settled (a thaw-and-collect after many closes counts too).",
            value=gc_tuning.refreezes,
        )
        yield from (count, seconds, longest, refreezes)


REGISTRY.register(GcPauses())


def model_call(agent: str, model: str, usage: Usage, price_usd: Decimal | None) -> None:
    MODEL_TOKENS.labels(agent, model, "input").inc(usage.input_tokens)
    MODEL_TOKENS.labels(agent, model, "output").inc(usage.output_tokens)
    MODEL_TOKENS.labels(agent, model, "cached").inc(usage.cached_tokens)
    if price_usd is None:
        MODEL_UNPRICED.labels(agent, model).inc()
    else:
        MODEL_SPEND.labels(agent, model).inc(float(price_usd))


def timed(agent: str, handler: Callable[[T], Awaitable[None]]) -> Callable[[T], Awaitable[None]]:
    """An agent run handler, timed and its failures counted."""

    async def run(snapshot: T) -> None:
        started = time.perf_counter()
        try:
            await handler(snapshot)
        except Exception:
            RUN_FAILURES.labels(agent).inc()
            raise
        finally:
            TURN_SECONDS.labels(agent).observe(time.perf_counter() - started)

    return run


async def refresh(db: Db) -> None:
    """Gauges of shared state, read from the database at scrape time."""
    QUEUE_DEPTH.clear()
    for agent, status, count in await RunRepository(db).queue_depth():
        QUEUE_DEPTH.labels(agent, status).set(count)
    WEBHOOK_BACKLOG.set(await WebhookRepository(db).pending_deliveries())
