"""Stripe payments benchmark: the webhook round trip and the statements per webhook applied.

Method. One real server (uvicorn, in this process) with the Stripe provider pointed at a
localstripe subprocess; a migrated database (SQLite in a temporary file, or ``--pg``: PostgreSQL
in a throwaway database with Redis as the broker). For each of ``--offers`` booked offers (made
by the offline negotiation): the brand's ``payOffer``, the browser's confirm at localstripe, and
a client subscribed to ``offerStage``. Then a Stripe-signed
``payment_intent.amount_capturable_updated`` is POSTed to ``/webhooks/stripe`` and the clock runs
until the subscribed client receives ``BOOKED_PAYMENT_HELD``.

Figures, medians over the offers:
- held: POST of the webhook → the stage event at the subscribed client;
- duplicate (baseline, same run): the same event POSTed again (verified, found recorded, 200)
  → its response; the ratio held/duplicate is what applying costs over receiving;
- pay → held: ``payOffer`` sent → the stage event (payOffer, the confirm, the webhook);
- statements per webhook applied, and per duplicate, counted on the engine.

localstripe sends no authorization webhook itself (it sends ``succeeded`` after a capture), so
the webhook is signed here the way Stripe signs one; Stripe's own delivery delay is not in these
figures. Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _client import DEFAULT_PG_URL, create_pg_database, drop_pg_database, machine_summary
from sqlalchemy import event as sa_event

from dealroom.config import Settings
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.realtime import create_broker
from dealroom.realtime.broker import Broker
from dealroom.services.offers.stripe_provider import StripeProvider

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.conftest import serving
from tests.support.clock import ManualClock
from tests.support.graphql import (
    Client,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)
from tests.support.localstripe import (
    PUBLISHABLE_KEY,
    SECRET_KEY,
    WEBHOOK_SECRET,
    event,
    running_localstripe,
    signed,
)
from tests.support.offers import OFFER_STAGE, negotiate_to_offer, settle
from tests.support.turns import HOME, RULES, Deal, visitor_client

PAY = """
mutation($offerId: ID!, $method: String!, $key: String!) {
  payOffer(offerId: $offerId, paymentMethod: $method, idempotencyKey: $key) {
    payment { id } clientSecret
  }
}
"""
APPROVE = "mutation($id: ID!) { approveOffer(offerId: $id) { id stage } }"


async def run(offers: int, pg: bool) -> None:
    tmp = tempfile.TemporaryDirectory()
    url = (
        await create_pg_database(DEFAULT_PG_URL, "stripe_bench")
        if pg
        else f"sqlite+aiosqlite:///{tmp.name}/bench.sqlite3"
    )
    engine = create_engine(url)
    await upgrade(engine)
    statements = 0

    def seen(*_args: Any) -> None:
        nonlocal statements
        statements += 1

    sa_event.listen(engine.sync_engine, "before_cursor_execute", seen)
    broker: Broker = create_broker("redis://127.0.0.1:6379/0" if pg else None)
    await broker.start()
    settings = Settings(
        database_url=url,
        model_engine="offline",
        offline_stream_ms=0,
        workers=0,
        webhook_workers=0,
        greet_visitors=False,
        payment_provider="stripe",
        password_hash_memory_kib=8,
        password_hash_time_cost=1,
        password_hash_below_floor=True,
        access_log=False,
    )
    held: list[float] = []
    duplicate: list[float] = []
    pay_to_held: list[float] = []
    applied_statements: list[int] = []
    duplicate_statements: list[int] = []
    try:
        async with running_localstripe() as stripe_server:
            provider = StripeProvider(
                SECRET_KEY,
                publishable_key=PUBLISHABLE_KEY,
                webhook_secret=WEBHOOK_SECRET,
                api_base=stripe_server.base_url,
            )
            async with serving(settings, engine, broker, ManualClock(), payments=provider) as srv:
                http = httpx.AsyncClient(base_url=srv.base_url)
                visitor = await visitor_client(srv)
                for n in range(offers):
                    d = await _deal(srv, visitor, f"host{n}")
                    offer_id = await negotiate_to_offer(srv, d)
                    for client in (d.visitor, d.host):
                        await client.query(APPROVE, {"id": offer_id})
                    method = await stripe_server.card()
                    async with subscribe(
                        srv.ws_url,
                        OFFER_STAGE,
                        {"offerId": offer_id},
                        init=ws_init_for(d.visitor),
                    ) as stream:
                        await _listening(srv.broker, f"offer:{offer_id}")
                        started = time.perf_counter()
                        await d.visitor.query(
                            PAY, {"offerId": offer_id, "method": method, "key": "k"}
                        )
                        intent_id = (await stripe_server.intents())[0]["id"]
                        await stripe_server.confirm(intent_id)
                        obj = await stripe_server.intent(intent_id)
                        await _until(stream, "PENDING_PAY_CAPTURE")
                        body, signature = signed(
                            event("payment_intent.amount_capturable_updated", obj)
                        )
                        headers = {"Stripe-Signature": signature}
                        before = statements
                        posted = time.perf_counter()
                        await http.post("/webhooks/stripe", content=body, headers=headers)
                        applied_statements.append(statements - before)
                        await _until(stream, "BOOKED_PAYMENT_HELD")
                        now = time.perf_counter()
                        held.append(now - posted)
                        pay_to_held.append(now - started)
                        before = statements
                        again = time.perf_counter()
                        await http.post("/webhooks/stripe", content=body, headers=headers)
                        duplicate.append(time.perf_counter() - again)
                        duplicate_statements.append(statements - before)
                    await _flush(stripe_server.base_url)
                await http.aclose()
            await provider.close()
    finally:
        await broker.close()
        await engine.dispose()
        if pg:
            await drop_pg_database(DEFAULT_PG_URL, url)
        tmp.cleanup()
    for line in machine_summary():
        print(line)
    backend = "PostgreSQL + Redis" if pg else "SQLite + in-process broker"
    print(f"backend: {backend}; offers: {offers}")
    ms = 1000
    held_ms = statistics.median(held) * ms
    dup_ms = statistics.median(duplicate) * ms
    print(f"webhook POST -> held at the subscribed client: median {held_ms:.1f} ms")
    print(f"duplicate webhook (baseline) -> 200: median {dup_ms:.1f} ms")
    print(f"ratio held / duplicate: {held_ms / dup_ms:.2f}x")
    pay_ms = statistics.median(pay_to_held) * ms
    print(f"payOffer -> held (pay, confirm, webhook): median {pay_ms:.1f} ms")
    print(f"statements per webhook applied: {statistics.median(applied_statements):.0f}")
    print(f"statements per duplicate webhook: {statistics.median(duplicate_statements):.0f}")


async def _deal(srv: Any, visitor: Client, handle: str) -> Deal:
    """A new host with standing rules and the one brand in a deal room with it."""
    host = srv.client()
    await sign_up(host, handle, handle.title())
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, RULES)
    await settle(srv)
    opened = await open_room(visitor, handle)
    return Deal(host, visitor, home_id, opened["room"]["id"])


async def _until(stream: Any, stage: str) -> None:
    while True:
        payload = await stream.next(30)
        if payload["data"]["offerStage"]["stage"] == stage:
            return


async def _listening(broker: Broker, channel: str) -> None:
    """Until the subscription is live (the broker holds a subscriber for its channel)."""
    for _ in range(1000):
        if channel in broker.listening():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"nobody subscribed to {channel}")


async def _flush(base_url: str) -> None:
    """Empty localstripe between offers, so each offer's intent is the only one listed."""
    async with httpx.AsyncClient(base_url=base_url) as http:
        await http.delete("/_config/data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--offers", type=int, default=10)
    parser.add_argument("--pg", action="store_true", help="PostgreSQL + Redis")
    args = parser.parse_args()
    asyncio.run(run(args.offers, args.pg))


if __name__ == "__main__":
    main()
