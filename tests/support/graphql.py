"""A client app's view of the server: GraphQL over HTTP and over both websocket protocols."""

from __future__ import annotations

import asyncio
import json
import ssl
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
import websockets
from websockets.typing import Subprotocol

TRANSPORT_WS = "graphql-transport-ws"
EVENT_SECONDS = 20.0
"""How long a test waits for an expected websocket message: generous, because a busy shared
machine is slow, and it costs nothing when the message comes (a missing one still fails)."""
LEGACY_WS = "graphql-ws"
TLS: Final = ssl.create_default_context()
"""One TLS context for every test client (``verify=TLS``): httpx otherwise builds a new one per
client and loads the CA bundle into it, about 45 ms of CPU each, for servers that are plain
HTTP on loopback anyway."""


class GraphQLErrors(AssertionError):
    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(json.dumps(errors, indent=1))
        self.errors = errors

    @property
    def codes(self) -> list[str]:
        return [e.get("extensions", {}).get("code") for e in self.errors]


@dataclass
class Client:
    """One client app: its own cookie jar and auth headers."""

    http: httpx.AsyncClient
    headers: dict[str, str] = field(default_factory=dict)

    async def raw(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.http.post(
            "/graphql", json={"query": query, "variables": variables or {}}, headers=self.headers
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def query(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        body = await self.raw(query, variables)
        if body.get("errors"):
            raise GraphQLErrors(body["errors"])
        data: dict[str, Any] = body["data"]
        return data

    async def error_codes(self, query: str, variables: dict[str, Any] | None = None) -> list[str]:
        body = await self.raw(query, variables)
        assert body.get("errors"), f"expected errors, got {body}"
        return [e.get("extensions", {}).get("code") for e in body["errors"]]

    def bearer(self, token: str) -> Client:
        self.headers["Authorization"] = f"Bearer {token}"
        return self


SIGN_UP = """
mutation($input: SignUpInput!) { signUp(input: $input) { token account { id handle displayName } } }
"""
OPEN_ROOM = """
mutation($handle: String!, $new: Boolean! = false) {
  openVisitorRoom(handle: $handle, newConversation: $new) {
    guestKey created room { id title mode kind readerSeat subtitle loginRequired }
  }
}
"""
POST = """
mutation($input: PostMessageInput!) {
  postMessage(input: $input) { id cursor body seat alignment authorKind sessionNo }
}
"""
PANE_EVENTS = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    __typename
    ... on MessageAdded { cursor message { id body seat alignment } }
  }
}
"""


async def sign_up(client: Client, handle: str, name: str | None = None) -> dict[str, Any]:
    data = await client.query(
        SIGN_UP,
        {
            "input": {
                "email": f"{handle}@example.com",
                "password": "correct horse battery",
                "handle": handle,
                "displayName": name or handle.title(),
            }
        },
    )
    payload: dict[str, Any] = data["signUp"]
    client.bearer(payload["token"])
    return payload


async def open_room(client: Client, handle: str, new: bool = False) -> dict[str, Any]:
    data = await client.query(OPEN_ROOM, {"handle": handle, "new": new})
    payload: dict[str, Any] = data["openVisitorRoom"]
    if payload["guestKey"]:
        client.headers["X-Guest-Key"] = payload["guestKey"]
    return payload


async def post(
    client: Client, room_id: str, body: str, cid: str | None = None, **extra: Any
) -> dict[str, Any]:
    data = await client.query(
        POST,
        {
            "input": {
                "roomId": room_id,
                "body": body,
                "clientMessageId": cid or uuid.uuid4().hex,
                **extra,
            }
        },
    )
    message: dict[str, Any] = data["postMessage"]
    return message


class Subscription:
    """One subscription over a websocket, either protocol."""

    def __init__(self, ws: Any, protocol: str, op_id: str) -> None:
        self.ws = ws
        self.protocol = protocol
        self.op_id = op_id

    async def next(self, timeout: float = EVENT_SECONDS) -> dict[str, Any]:
        """The next payload (data and/or errors) for this operation."""
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout)
            message = json.loads(raw)
            kind = message.get("type")
            if kind in ("ping",):
                await self.ws.send(json.dumps({"type": "pong"}))
                continue
            if kind in ("ka", "pong"):
                continue
            if kind in ("next", "data", "error"):
                payload = message.get("payload")
                if isinstance(payload, list):  # graphql-transport-ws "error" carries a list
                    return {"errors": payload}
                result: dict[str, Any] = payload
                return result
            if kind == "complete":
                return {"complete": True}
            raise AssertionError(f"unexpected message {message}")

    async def event(self, timeout: float = EVENT_SECONDS) -> dict[str, Any]:
        payload = await self.next(timeout)
        if payload.get("errors"):
            raise GraphQLErrors(payload["errors"])
        event: dict[str, Any] = payload["data"]["paneEvents"]
        return event

    async def events(self, count: int, timeout: float = EVENT_SECONDS) -> list[dict[str, Any]]:
        return [await self.event(timeout) for _ in range(count)]

    async def nothing_for(self, seconds: float) -> None:
        try:
            message = await asyncio.wait_for(self.ws.recv(), seconds)
        except TimeoutError:
            return
        raise AssertionError(f"expected silence, got {message}")


@asynccontextmanager
async def subscribe(
    ws_url: str,
    query: str,
    variables: dict[str, Any],
    *,
    protocol: str = TRANSPORT_WS,
    init: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    op_id: str | None = None,
) -> AsyncIterator[Subscription]:
    async with websockets.connect(
        ws_url,
        subprotocols=[Subprotocol(protocol)],
        additional_headers=headers or {},
        compression=None,
    ) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": init or {}}))
        while True:
            ack = json.loads(await asyncio.wait_for(ws.recv(), EVENT_SECONDS))
            if ack["type"] == "connection_ack":
                break
            assert ack["type"] == "ka", ack
        op_id = op_id or uuid.uuid4().hex
        start = "subscribe" if protocol == TRANSPORT_WS else "start"
        await ws.send(
            json.dumps(
                {"id": op_id, "type": start, "payload": {"query": query, "variables": variables}}
            )
        )
        yield Subscription(ws, protocol, op_id)


def ws_init_for(client: Client) -> dict[str, Any]:
    """What a browser app sends in connection_init (it cannot set websocket headers)."""
    init: dict[str, Any] = {}
    if "Authorization" in client.headers:
        init["authorization"] = client.headers["Authorization"]
    if "X-Guest-Key" in client.headers:
        init["guestKey"] = client.headers["X-Guest-Key"]
    if "X-Act-As" in client.headers:
        init["actAs"] = client.headers["X-Act-As"]
    return init


async def until_listening(broker: Any, fragment: str, timeout: float = EVENT_SECONDS) -> None:
    """Wait until the server's broker lists a local subscriber on a channel containing
    ``fragment`` (a room id). A subscription without ``after`` read its start before it
    subscribed, so anything posted from now on reaches it."""
    async with asyncio.timeout(timeout):
        while not any(fragment in channel for channel in broker.listening()):  # noqa: ASYNC110  # polled state, no event to wait on
            await asyncio.sleep(0.01)
