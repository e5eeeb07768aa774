"""The notification API over HTTP and websockets: the reader's own list (newest first, the
unread count, paging), marking read, preferences (kinds validated), the live stream, and the
one-click unsubscribe route (RFC 8058) with its refusals."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.notifications import NotificationRepository
from dealroom.services.notify import outbox, preferences, tokens
from dealroom.services.notify.kinds import Audience, Kind
from dealroom.services.unit_of_work import UnitOfWork
from tests.conftest import Server
from tests.support.graphql import Client, sign_up, subscribe, until_listening, ws_init_for

LIST = """
query($first: Int!, $after: String) {
  notifications(first: $first, after: $after) {
    unreadCount hasNextPage endCursor
    nodes { id kind title body link roomId read emailStatus reason }
  }
}
"""
MARK = "mutation($ids: [ID!]) { markNotificationsRead(ids: $ids) }"
PREFS = "{ notificationPreferences { kind mode } }"
SET = """
mutation($p: [NotificationPreferenceInput!]!) {
  setNotificationPreferences(preferences: $p) { kind mode }
}
"""
EVENTS = "subscription { notificationEvents { unreadCount notification { id title kind } } }"


async def _account(server: Server, handle: str) -> tuple[Client, uuid.UUID]:
    client = server.client()
    payload = await sign_up(client, handle, handle.title())
    return client, uuid.UUID(payload["account"]["id"])


async def _notify(server: Server, account_id: uuid.UUID, n: int) -> None:
    note = outbox.Note(
        account_id=account_id,
        kind=Kind.STAGE,
        audience=Audience.HOST,
        source=f"api-test:{account_id}:{n}",
        title=f"Update {n}",
        body=f"Body {n}",
        link="/",
        reason="test",
    )
    async with UnitOfWork(create_sessionmaker(server.engine), server.broker) as unit:
        written = await outbox.write(unit.db, server.clock.now(), [note])
        unit.publish(*written.published)


async def test_the_list_is_the_readers_own_newest_first_with_the_unread_count(
    server: Server,
) -> None:
    dev, dev_id = await _account(server, "devraman")
    other, other_id = await _account(server, "acmebrand")
    for n in range(3):
        await _notify(server, dev_id, n)
    await _notify(server, other_id, 99)
    first = (await dev.query(LIST, {"first": 2}))["notifications"]
    assert [n["title"] for n in first["nodes"]] == ["Update 2", "Update 1"]
    assert first["unreadCount"] == 3
    assert first["hasNextPage"]
    rest = (await dev.query(LIST, {"first": 2, "after": first["endCursor"]}))["notifications"]
    assert [n["title"] for n in rest["nodes"]] == ["Update 0"]
    assert not rest["hasNextPage"]
    assert first["nodes"][0]["kind"] == "STAGE"
    assert (await other.query(LIST, {"first": 10}))["notifications"]["unreadCount"] == 1
    # marking read: one, then all; another reader's ids do nothing
    theirs = (await other.query(LIST, {"first": 10}))["notifications"]["nodes"][0]["id"]
    left = await dev.query(MARK, {"ids": [first["nodes"][0]["id"], theirs]})
    assert left["markNotificationsRead"] == 2
    assert (await other.query(LIST, {"first": 10}))["notifications"]["unreadCount"] == 1
    assert (await dev.query(MARK, {"ids": None}))["markNotificationsRead"] == 0
    anonymous = server.client()
    assert await anonymous.error_codes(LIST, {"first": 5}) == ["UNAUTHENTICATED"]
    assert await dev.error_codes(LIST, {"first": 0}) == ["BAD_USER_INPUT"]


async def test_preferences_have_defaults_and_validate_kinds(server: Server) -> None:
    dev, _ = await _account(server, "devraman")
    modes = {p["kind"]: p["mode"] for p in (await dev.query(PREFS))["notificationPreferences"]}
    assert modes["DECISION"] == "IMMEDIATE"
    assert modes["APPROVAL"] == "IMMEDIATE"
    assert modes["STAGE"] == "DIGEST"
    assert modes["OPERATOR_ALERT"] == "OFF"
    changed = await dev.query(SET, {"p": [{"kind": "STAGE", "mode": "OFF"}]})
    assert {"kind": "STAGE", "mode": "OFF"} in changed["setNotificationPreferences"]
    codes = await dev.error_codes(SET, {"p": [{"kind": "DIGEST", "mode": "OFF"}]})
    assert codes == ["BAD_USER_INPUT"]
    modes = {p["kind"]: p["mode"] for p in (await dev.query(PREFS))["notificationPreferences"]}
    assert modes["STAGE"] == "OFF"


async def test_new_notifications_arrive_live(server: Server) -> None:
    dev, dev_id = await _account(server, "devraman")
    async with subscribe(server.ws_url, EVENTS, {}, init=ws_init_for(dev)) as sub:
        await until_listening(server.broker, str(dev_id))
        await _notify(server, dev_id, 7)
        payload = await sub.next()
    event = payload["data"]["notificationEvents"]
    assert event["notification"]["title"] == "Update 7"
    assert event["unreadCount"] == 1


async def _token(engine: AsyncEngine, account_id: uuid.UUID, kind: str) -> tuple[str, str]:
    db = Db(create_sessionmaker(engine))
    try:
        row = await preferences.ensure(db, account_id, datetime.now(UTC))
        await db.commit()
        return preferences.unsubscribe_token(row, kind, row.updated_at), row.secret
    finally:
        await db.close()


async def _mode(server: Server, client: Client, kind: str) -> str:
    prefs: list[dict[str, Any]] = (await client.query(PREFS))["notificationPreferences"]
    return str(next(p["mode"] for p in prefs if p["kind"] == kind))


async def test_one_click_unsubscribe_turns_the_kind_off_without_signing_in(
    server: Server,
) -> None:
    dev, dev_id = await _account(server, "devraman")
    token, _secret = await _token(server.engine, dev_id, "decision")
    anonymous = server.client()
    url = f"/notifications/unsubscribe?t={quote(token)}"
    page = await anonymous.http.get(url)
    assert page.status_code == 200
    assert "<form method='post'" in page.text
    assert await _mode(server, dev, "DECISION") == "IMMEDIATE"  # a GET changes nothing
    done = await anonymous.http.post(url, content="List-Unsubscribe=One-Click")
    assert done.status_code == 200
    assert "Unsubscribed" in done.text
    assert await _mode(server, dev, "DECISION") == "OFF"


@pytest.mark.parametrize("fault", ["forged", "expired", "another account", "garbage"])
async def test_a_bad_unsubscribe_token_is_refused_with_a_plain_page(
    server: Server, fault: str
) -> None:
    dev, dev_id = await _account(server, "devraman")
    _other, other_id = await _account(server, "acmebrand")
    good, secret = await _token(server.engine, dev_id, "decision")
    _, other_secret = await _token(server.engine, other_id, "decision")
    now = server.clock.now()
    token = {
        "forged": good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB"),
        "expired": tokens.sign(secret, dev_id, "decision", now - tokens.LIFETIME * 2),
        # claims devraman, signed with acmebrand's secret
        "another account": tokens.sign(other_secret, dev_id, "decision", now),
        "garbage": "not-a-token",
    }[fault]
    anonymous = server.client()
    url = f"/notifications/unsubscribe?t={quote(token)}"
    for response in (await anonymous.http.get(url), await anonymous.http.post(url)):
        assert response.status_code == 400
        assert "not valid" in response.text
    assert await _mode(server, dev, "DECISION") == "IMMEDIATE"
    async with UnitOfWork(create_sessionmaker(server.engine)) as unit:
        row = await NotificationRepository(unit.db).settings_of(dev_id)
        assert row is not None
        assert row.modes == {}
