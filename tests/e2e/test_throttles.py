"""Throttles stored in the database: posts across rooms, rooms and guest keys per IP, signIn
failures with backoff; RATE_LIMITED with retryAfterSeconds."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.models import Room
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import OPEN_ROOM, Client, open_room, post, sign_up
from tests.support.rooms import count_rows

SIGN_IN = """
mutation($email: String!, $password: String!) {
  signIn(input: {email: $email, password: $password}) { token }
}
"""
PASSWORD = "correct horse battery"


@contextlib.asynccontextmanager
async def throttled(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock, **limits: Any
) -> AsyncIterator[Server]:
    async with serving(settings.model_copy(update=limits), engine, broker, clock) as running:
        yield running


def rate_limited(body: dict[str, Any]) -> dict[str, Any]:
    [error] = body["errors"]
    assert error["extensions"]["code"] == "RATE_LIMITED", error
    assert error["extensions"]["retryAfterSeconds"] >= 1
    extensions: dict[str, Any] = error["extensions"]
    return extensions


async def test_posts_are_limited_per_participant_across_rooms(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> None:
    """The per-pane limit alone was multiplied by every new room."""
    async with throttled(settings, engine, broker, clock, posts_per_minute_across_rooms=3) as s:
        await sign_up(s.client(), "mara", "Mara Ellison")
        guest = s.client()
        first = (await open_room(guest, "mara"))["room"]["id"]
        await post(guest, first, "one")
        await post(guest, first, "two")
        second = (await open_room(guest, "mara", new=True))["room"]["id"]
        await post(guest, second, "three")

        refused = await guest.raw(
            "mutation($i: PostMessageInput!) { postMessage(input: $i) { id } }",
            {"i": {"roomId": second, "body": "four", "clientMessageId": "c4"}},
        )
        rate_limited(refused)

        clock.advance(timedelta(minutes=1))
        await post(guest, second, "a minute later")


async def test_room_creation_is_limited_per_ip_and_a_refused_room_is_not_kept(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock, db: Db
) -> None:
    async with throttled(settings, engine, broker, clock, rooms_per_ip_per_hour=2) as s:
        await sign_up(s.client(), "mara", "Mara Ellison")
        rooms_before = await count_rows(db, Room)
        for _ in range(2):
            await open_room(s.client(), "mara")

        refused = await s.client().raw(OPEN_ROOM, {"handle": "mara"})

        assert rate_limited(refused)["retryAfterSeconds"] <= 3600
        assert await count_rows(db, Room) == rooms_before + 2


async def test_guest_keys_are_limited_per_ip(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> None:
    async with throttled(settings, engine, broker, clock, guest_keys_per_ip_per_hour=1) as s:
        await sign_up(s.client(), "mara", "Mara Ellison")
        guest = s.client()
        await open_room(guest, "mara")
        await open_room(guest, "mara")  # the same guest key again: nothing minted

        rate_limited(await s.client().raw(OPEN_ROOM, {"handle": "mara"}))


async def _sign_in(client: Client, password: str) -> dict[str, Any]:
    return await client.raw(SIGN_IN, {"email": "mara@example.com", "password": password})


async def test_sign_in_backs_off_after_failures_even_for_the_right_password(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> None:
    """Past the free failures even the right password is RATE_LIMITED until the backoff ends, on
    every server process."""
    async with (
        throttled(settings, engine, broker, clock, sign_in_free_failures=3) as first,
        throttled(settings, engine, broker, clock, sign_in_free_failures=3) as second,
    ):
        await sign_up(first.client(), "mara", "Mara Ellison")
        attacker = first.client()
        for _ in range(3):
            body = await _sign_in(attacker, "wrong password")
            assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"

        # Counted in the database: another server process refuses too.
        waited = rate_limited(await _sign_in(second.client(), PASSWORD))
        assert waited["retryAfterSeconds"] <= 2

        clock.advance(timedelta(seconds=waited["retryAfterSeconds"]))
        assert "errors" not in await _sign_in(attacker, PASSWORD)
        # A success clears the failures.
        assert "errors" not in await _sign_in(attacker, PASSWORD)


async def test_the_backoff_grows_with_each_failure(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> None:
    async with throttled(settings, engine, broker, clock, sign_in_free_failures=1) as s:
        await sign_up(s.client(), "mara", "Mara Ellison")
        client = s.client()
        waits = []
        for _ in range(4):
            body = await _sign_in(client, "wrong password")
            code = body["errors"][0]["extensions"]["code"]
            if code == "RATE_LIMITED":
                waits.append(body["errors"][0]["extensions"]["retryAfterSeconds"])
                clock.advance(timedelta(seconds=waits[-1]))
                body = await _sign_in(client, "wrong password")
            assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"

        assert waits == sorted(waits)
        assert waits[-1] > waits[0]
