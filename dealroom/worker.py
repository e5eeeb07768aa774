"""The ``dealroom worker`` process (no HTTP): its collector and its loop. Any number of these
may share one database and Redis."""

from __future__ import annotations

import asyncio

from dealroom.config import Settings


def settle_worker(settings: Settings) -> None:
    """The collector of a worker process, as ``serve`` tunes its own once started: what
    start-up made is frozen, young collections come every ``gc_young_threshold`` net
    allocations, and long pauses are logged (issue 17; with CPython's collector a worker's
    collections took 0.2-0.3 ms of a turn's 17-21 ms of CPU in ``bench/turn_machine.py
    --gcs default tuned``, tuned under 0.05 ms). Without freezing what survives later
    collections: a worker holds no subscriptions, and a turn's leftover cycles must stay
    collectable."""
    from dealroom.gc_tuning import settle_after_startup

    settle_after_startup(
        young_threshold=settings.gc_young_threshold,
        log_pauses_over_ms=settings.gc_pause_log_ms,
        log_format=settings.log_format,
        survivors=False,
    )


async def run(settings: Settings) -> None:
    """Agent turns and webhook deliveries until cancelled."""
    from dealroom.persistence.engine import create_engine, create_sessionmaker
    from dealroom.realtime import create_broker
    from dealroom.services.agents import (
        create_model_client,
        create_payment_provider,
        create_runner,
    )
    from dealroom.services.clock import SystemClock
    from dealroom.services.webhook_worker import WebhookWorker

    engine = create_engine(settings.resolved_database_url)
    broker = create_broker(settings.redis_url)
    model = create_model_client(settings)
    clock = SystemClock()
    payments = create_payment_provider(settings, clock)
    sessionmaker = create_sessionmaker(engine)
    runner = create_runner(settings, sessionmaker, broker, clock, model, payments)
    webhooks = WebhookWorker(settings, sessionmaker, broker, clock)
    settle_worker(settings)
    await broker.start()
    await runner.start()
    await webhooks.start()
    try:
        await asyncio.Event().wait()
    finally:
        await webhooks.close()
        await runner.close()
        await model.close()
        await broker.close()
        await engine.dispose()
