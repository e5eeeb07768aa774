"""API keys (rules K1-K4 in domain/scopes.py): shown once, stored hashed, scoped, revocable,
last-used time; a key never reaches a pane."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from dealroom.domain.cursors import event_cursor
from dealroom.domain.redaction import API_KEY_PLACEHOLDER
from dealroom.persistence.db import Db
from dealroom.persistence.models import ApiKey, Message
from dealroom.services.accounts.identity import digest
from tests.conftest import Server
from tests.support.factories import written_offer
from tests.support.graphql import PANE_EVENTS, post, sign_up, subscribe
from tests.support.offers import OFFER, OFFER_STAGE, ROOM_STAGE, open_deal
from tests.support.partners import API_KEYS, REVOKE_KEY, create_key, key_client

OFFER_ROOM = "query($id: ID!) { offer(id: $id) { id room { id title } } }"
POST_AS_KEY = """
mutation($roomId: ID!) {
  postMessage(input: {roomId: $roomId, body: "hi", clientMessageId: "k1"}) { id }
}
"""


async def test_key_is_shown_once_stored_hashed_and_reads_offers_in_scope(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)
    created = await create_key(d.host, ["offers:read"])
    key = created["key"]
    assert key.startswith("dr_")
    assert created["apiKey"]["prefix"] == key[:10]
    assert created["apiKey"]["lastUsedAt"] is None
    listed = (await d.host.query(API_KEYS))["apiKeys"]
    assert "key" not in listed[0]
    rows = list(await db.scalars(select(ApiKey)))
    stored = [str(value) for r in rows for value in vars(r).values()]
    hashes = [r.key_hash for r in rows]
    await db.close()
    assert hashes == [digest(key)]
    assert all(key not in value for value in stored)

    partner = key_client(server, key)
    offer = (await partner.query(OFFER, {"id": offer_id}))["offer"]
    assert offer["id"] == offer_id
    used = (await d.host.query(API_KEYS))["apiKeys"][0]
    assert used["lastUsedAt"] is not None


async def test_key_without_scope_or_outside_its_fields_is_refused(server: Server) -> None:
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)
    hooks_only = key_client(server, (await create_key(d.host, ["webhooks:manage"]))["key"])
    assert await hooks_only.error_codes(OFFER, {"id": offer_id}) == ["FORBIDDEN"]

    reader = key_client(server, (await create_key(d.host, ["offers:read"]))["key"])
    # K2: no scope opens a pane, a room or the account's own views.
    assert await reader.error_codes(POST_AS_KEY, {"roomId": d.room_id}) == ["FORBIDDEN"]
    assert await reader.error_codes(ROOM_STAGE, {"id": d.room_id}) == ["FORBIDDEN"]
    assert await reader.error_codes(OFFER_ROOM, {"id": offer_id}) == ["FORBIDDEN"]
    assert await reader.error_codes("{ me { id memory { version } } }") == ["FORBIDDEN"]
    assert await reader.error_codes(
        'mutation { createApiKey(name: "wider", scopes: ["webhooks:manage"]) { key } }'
    ) == ["FORBIDDEN"]


async def test_revoked_key_is_unauthenticated(server: Server) -> None:
    owner = server.client()
    await sign_up(owner, "partnerco")
    created = await create_key(owner, ["offers:read"])
    partner = key_client(server, created["key"])
    probe = "query($id: ID!) { offer(id: $id) { id } }"
    assert await partner.error_codes(probe, {"id": str(uuid.uuid4())}) == ["NOT_FOUND"]
    await owner.query(REVOKE_KEY, {"id": created["apiKey"]["id"]})
    assert await partner.error_codes(probe, {"id": str(uuid.uuid4())}) == ["UNAUTHENTICATED"]


async def test_operator_scopes_only_for_operators(server: Server) -> None:
    owner = server.client()
    await sign_up(owner, "partnerco")
    codes = await owner.error_codes(
        'mutation { createApiKey(name: "x", scopes: ["ops:read"]) { key } }'
    )
    assert codes == ["BAD_USER_INPUT"]
    codes = await owner.error_codes(
        'mutation { createApiKey(name: "x", scopes: ["nope"]) { key } }'
    )
    assert codes == ["BAD_USER_INPUT"]


async def test_a_key_typed_into_chat_is_never_stored(server: Server, db: Db) -> None:
    d = await open_deal(server)
    key = (await create_key(d.host, ["offers:read"]))["key"]
    stored = await post(d.host, d.home_id, f"my key is {key} keep it safe")
    assert key not in stored["body"]
    assert API_KEY_PLACEHOLDER in stored["body"]
    bodies = list(await db.scalars(select(Message.body)))
    await db.close()
    assert all(key not in body for body in bodies)


async def test_subscriptions_are_gated_by_scope_too(server: Server) -> None:
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)
    hooks_only = (await create_key(d.host, ["webhooks:manage"]))["key"]
    reader = (await create_key(d.host, ["offers:read"]))["key"]
    init = {"authorization": f"Bearer {hooks_only}"}
    async with subscribe(server.ws_url, OFFER_STAGE, {"offerId": offer_id}, init=init) as sub:
        refused = await sub.next()
    assert [e["extensions"]["code"] for e in refused["errors"]] == ["FORBIDDEN"]
    init = {"authorization": f"Bearer {reader}"}
    async with subscribe(
        server.ws_url, PANE_EVENTS, {"roomId": d.room_id, "seat": "HOST"}, init=init
    ) as sub:
        refused = await sub.next()
    assert [e["extensions"]["code"] for e in refused["errors"]] == ["FORBIDDEN"]
    async with subscribe(
        server.ws_url, OFFER_STAGE, {"offerId": offer_id, "after": event_cursor(0)}, init=init
    ) as sub:
        first = await sub.next()
    assert first.get("data"), first
    assert first["data"]["offerStage"]["offerId"] == offer_id
