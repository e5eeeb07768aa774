"""The ``dealroom worker`` process (no HTTP): its loop. Any number of these may share one
database and Redis.

Its collector is left as CPython sets it: tuned as ``serve`` tunes its own, a turn's collections
shrink but no round of ``bench/turn_machine.py --gcs default tuned`` runs faster
(docs/BENCHMARKS.md, "The collector")."""

from __future__ import annotations

import asyncio

from dealroom.config import Settings


async def run(settings: Settings) -> None:
    """Agent turns, webhook deliveries and notification emails until cancelled."""
    from dealroom.jobs.notify_delivery import NotifyWorker
    from dealroom.jobs.webhook_delivery import WebhookWorker
    from dealroom.jobs.wiring import (
        create_model_client,
        create_payment_provider,
        create_runner,
    )
    from dealroom.persistence.engine import create_engine, create_sessionmaker
    from dealroom.realtime import create_broker
    from dealroom.services.clock import SystemClock

    engine = create_engine(settings.resolved_database_url)
    broker = create_broker(settings.redis_url)
    model = create_model_client(settings)
    clock = SystemClock()
    payments = create_payment_provider(settings, clock)
    sessionmaker = create_sessionmaker(engine)
    runner = create_runner(settings, sessionmaker, broker, clock, model, payments)
    webhooks = WebhookWorker(settings, sessionmaker, broker, clock)
    notify = NotifyWorker(settings, sessionmaker, broker, clock)
    await broker.start()
    await runner.start()
    await webhooks.start()
    if settings.notify_workers:
        await notify.start()
    try:
        await asyncio.Event().wait()
    finally:
        await notify.close()
        await webhooks.close()
        await runner.close()
        await model.close()
        await broker.close()
        await engine.dispose()
