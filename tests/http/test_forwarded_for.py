"""The client address behind a proxy (README, ``FORWARDED_ALLOW_IPS``): over real uvicorn, the
address the per-address throttles count is the ``X-Forwarded-For`` client only when the
connection comes from an allowed proxy address; from any other peer the header is ignored and
the peer's own address is the client's."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import OPEN_ROOM, Client, open_room, sign_up


@contextlib.asynccontextmanager
async def behind(
    allowed: str | None,
    monkeypatch: pytest.MonkeyPatch,
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
) -> AsyncIterator[Server]:
    """A server allowing one room per client address an hour, whose uvicorn believes
    forwarded headers from ``allowed`` (None: uvicorn's default, loopback)."""
    if allowed is None:
        monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    else:
        monkeypatch.setenv("FORWARDED_ALLOW_IPS", allowed)
    limited = settings.model_copy(update={"rooms_per_ip_per_hour": 1})
    async with serving(limited, engine, broker, clock) as running:
        await sign_up(running.client(), "mara", "Mara Ellison")
        yield running


def forwarded_for(server: Server, address: str) -> Client:
    client = server.client()
    client.headers["X-Forwarded-For"] = address
    return client


async def _refused(client: Client) -> bool:
    body = await client.raw(OPEN_ROOM, {"handle": "mara"})
    codes = [e["extensions"]["code"] for e in body.get("errors") or []]
    assert codes in ([], ["RATE_LIMITED"]), body
    return codes == ["RATE_LIMITED"]


async def test_an_allowed_proxy_names_the_client_each_address_its_own_limit(
    monkeypatch: pytest.MonkeyPatch,
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
) -> None:
    # The test's connections come from loopback, the default allowed proxy.
    async with behind(None, monkeypatch, settings, engine, broker, clock) as s:
        await open_room(forwarded_for(s, "203.0.113.7"), "mara")
        assert not await _refused(forwarded_for(s, "203.0.113.8"))  # another client
        assert await _refused(forwarded_for(s, "203.0.113.7"))  # the first one again


async def test_a_peer_that_is_not_an_allowed_proxy_cannot_choose_its_address(
    monkeypatch: pytest.MonkeyPatch,
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
) -> None:
    # Only 192.0.2.10 is a proxy: the loopback peer's X-Forwarded-For is not believed, so a
    # client rotating the header is still one address to the throttle.
    async with behind("192.0.2.10", monkeypatch, settings, engine, broker, clock) as s:
        await open_room(forwarded_for(s, "203.0.113.7"), "mara")
        assert await _refused(forwarded_for(s, "203.0.113.8"))
