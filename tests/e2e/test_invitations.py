"""inviteToRoom and acceptInvitation over HTTP: the link adds the signed-in account to the
inviter's side, and each refusal answers its code and reason in ``extensions``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.models import Invitation, Notification
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import Client, open_room, sign_up
from tests.support.partners import create_key, key_client

INVITE = """
mutation($roomId: ID!, $email: String!) {
  inviteToRoom(roomId: $roomId, email: $email) { id side email expiresAt link }
}
"""
ACCEPT = """
mutation($token: String!) {
  acceptInvitation(token: $token) { id readerSeat participants { key seat isYou } }
}
"""


async def refusal(client: Client, query: str, variables: dict[str, Any]) -> tuple[str, str]:
    body = await client.raw(query, variables)
    errors = body.get("errors") or []
    assert len(errors) == 1, body
    extensions = errors[0].get("extensions", {})
    return extensions.get("code"), extensions.get("reason")


def token_of(link: str) -> str:
    return link.rsplit("/invite/", 1)[1]


async def test_an_invitation_link_joins_the_inviters_side_once(server: Server) -> None:
    host = server.client()
    await sign_up(host, "talent")
    buyer = server.client()
    await sign_up(buyer, "brand")
    room_id = (await open_room(buyer, "talent"))["room"]["id"]

    invited = (await buyer.query(INVITE, {"roomId": room_id, "email": "colleague@example.com"}))[
        "inviteToRoom"
    ]
    assert (invited["side"], invited["email"]) == ("VISITOR", "colleague@example.com")
    assert invited["link"].startswith(server.state.settings.public_url.rstrip("/") + "/invite/")
    token = token_of(invited["link"])

    anonymous = server.client()
    assert await refusal(anonymous, ACCEPT, {"token": token}) == (
        "UNAUTHENTICATED",
        "LOGIN_REQUIRED",
    )
    colleague = server.client()
    await sign_up(colleague, "colleague")
    joined = (await colleague.query(ACCEPT, {"token": token}))["acceptInvitation"]
    assert (joined["id"], joined["readerSeat"]) == (room_id, "VISITOR")
    mine = [p for p in joined["participants"] if p["isYou"]]
    assert mine == [{"key": "visitor_2", "seat": "VISITOR", "isYou": True}]

    late = server.client()
    await sign_up(late, "late")
    assert await refusal(late, ACCEPT, {"token": token}) == ("CONFLICT", "INVITATION_USED")
    assert await refusal(late, ACCEPT, {"token": token + "x"}) == (
        "NOT_FOUND",
        "INVITATION_INVALID",
    )

    to_host_side = (await host.query(INVITE, {"roomId": room_id, "email": "brand@example.org"}))[
        "inviteToRoom"
    ]
    assert to_host_side["side"] == "HOST"
    assert await refusal(buyer, ACCEPT, {"token": token_of(to_host_side["link"])}) == (
        "CONFLICT",
        "ALREADY_ON_OTHER_SIDE",
    )
    assert await refusal(buyer, INVITE, {"roomId": room_id, "email": "Brand@Example.com"}) == (
        "BAD_USER_INPUT",
        "INVITE_SELF",
    )

    guest = server.client()
    guest_room = (await open_room(guest, "talent"))["room"]["id"]
    assert await refusal(guest, INVITE, {"roomId": guest_room, "email": "x@example.com"}) == (
        "FORBIDDEN",
        "GUEST_CANNOT_INVITE",
    )

    # An account mutation: an API key is refused like the others.
    key = key_client(server, (await create_key(host, ["offers:read"]))["key"])
    assert await key.error_codes(INVITE, {"roomId": room_id, "email": "x@example.com"}) == [
        "FORBIDDEN"
    ]


@pytest.fixture
async def limited_server(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    tuned = settings.model_copy(update={"invitations_per_hour": 2})
    async with serving(tuned, engine, broker, clock) as running:
        yield running


async def test_invitations_past_the_hourly_limit_are_refused_and_write_nothing(
    limited_server: Server, db: Db
) -> None:
    """Each invitation emails an address the inviter names: an account sends at most
    DEALROOM_INVITATIONS_PER_HOUR of them, every room together; the one past it is refused
    with a retry time, and neither an invitation nor an email is written for it."""
    server = limited_server
    await sign_up(server.client(), "talent")
    await sign_up(server.client(), "other")
    buyer = server.client()
    await sign_up(buyer, "brand")
    first = (await open_room(buyer, "talent"))["room"]["id"]
    second = (await open_room(buyer, "other"))["room"]["id"]
    await buyer.query(INVITE, {"roomId": first, "email": "a@example.com"})
    await buyer.query(INVITE, {"roomId": second, "email": "b@example.com"})
    body = await buyer.raw(INVITE, {"roomId": second, "email": "c@example.com"})
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "RATE_LIMITED"
    assert 0 < error["extensions"]["retryAfterSeconds"] <= 3600
    try:
        invited = set(await db.scalars(select(Invitation.email)))
        emailed = set(await db.scalars(select(Notification.email_to)))
    finally:
        await db.close()
    assert invited == {"a@example.com", "b@example.com"}
    assert emailed == {"a@example.com", "b@example.com"}

    server.clock.advance(timedelta(hours=1))  # the next window
    again = await buyer.query(INVITE, {"roomId": second, "email": "c@example.com"})
    assert again["inviteToRoom"]["email"] == "c@example.com"
