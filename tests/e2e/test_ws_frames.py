"""Websocket frames the protocols cannot read are closed 4400 with one log line (no traceback),
before and after connection_init; and connection_init takes the credentials clients send
(``authorization``/``Authorization``/``authToken``, Bearer or bare, the session cookie), closing
4401 when one is present but not valid instead of going on as anonymous."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import MutableMapping
from typing import Any

import pytest
import structlog
import websockets
from websockets.typing import Subprotocol

from tests.conftest import Server
from tests.support.graphql import (
    EVENT_SECONDS,
    LEGACY_WS,
    TRANSPORT_WS,
    Client,
    open_room,
    sign_up,
    subscribe,
)

NOT_OBJECTS = ["[1]", "null", "1", '"x"', "true", "[]", "1.5"]
BAD_SUBSCRIBES = [
    {"id": "1", "type": "subscribe", "payload": [1]},
    {"id": "1", "type": "subscribe", "payload": None},
    {"id": "1", "type": "subscribe", "payload": "query { me { id } }"},
    {"id": "1", "type": "subscribe", "payload": {"query": 1}},
    {"id": "1", "type": "subscribe", "payload": {"query": "{ me { id } }", "variables": [1]}},
    {"id": [1], "type": "subscribe", "payload": {"query": "{ me { id } }"}},
    {"id": {}, "type": "complete"},
    {"type": ["subscribe"]},
]
ME = "query { me { handle } }"


async def _closed(ws: websockets.ClientConnection) -> tuple[int | None, str]:
    async def drain() -> None:
        async with asyncio.timeout(EVENT_SECONDS):
            while True:
                await ws.recv()

    with pytest.raises(websockets.ConnectionClosed) as closed:
        await drain()
    frame = closed.value.rcvd
    return (frame.code, frame.reason) if frame else (None, "")


async def _refused(
    server: Server, frames: list[str], protocol: str = TRANSPORT_WS
) -> tuple[int | None, str]:
    async with websockets.connect(
        server.ws_url, subprotocols=[Subprotocol(protocol)], compression=None
    ) as ws:
        for frame in frames:
            await ws.send(frame)
        return await _closed(ws)


def _no_error_logged(
    caplog: pytest.LogCaptureFixture, logs: list[MutableMapping[str, Any]]
) -> None:
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, errors
    assert not [e for e in logs if e.get("log_level") in ("error", "critical")], logs


INIT = json.dumps({"type": "connection_init", "payload": {}})


@pytest.mark.parametrize("frame", NOT_OBJECTS)
@pytest.mark.parametrize("after_init", [False, True], ids=["before-init", "after-init"])
async def test_a_frame_that_is_not_an_object_is_closed_4400_with_one_log_line(
    server: Server, caplog: pytest.LogCaptureFixture, frame: str, after_init: bool
) -> None:
    with structlog.testing.capture_logs() as logs:
        code, reason = await _refused(server, [INIT, frame] if after_init else [frame])

    assert code == 4400
    assert "must be a JSON object" in reason
    _no_error_logged(caplog, logs)
    assert [e["event"] for e in logs if e["event"] == "websocket_refused"] == ["websocket_refused"]


@pytest.mark.parametrize("message", BAD_SUBSCRIBES)
async def test_a_subscribe_strawberry_cannot_read_is_closed_4400(
    server: Server, caplog: pytest.LogCaptureFixture, message: dict[str, Any]
) -> None:
    with structlog.testing.capture_logs() as logs:
        code, _reason = await _refused(server, [INIT, json.dumps(message)])

    assert code == 4400
    _no_error_logged(caplog, logs)


@pytest.mark.parametrize("frame", [*NOT_OBJECTS, '{"type": "start", "id": "1", "payload": 1}'])
async def test_the_legacy_protocol_closes_unreadable_frames_4400_too(
    server: Server, caplog: pytest.LogCaptureFixture, frame: str
) -> None:
    with structlog.testing.capture_logs() as logs:
        code, _reason = await _refused(server, [INIT, frame], protocol=LEGACY_WS)

    assert code == 4400
    _no_error_logged(caplog, logs)


async def test_a_null_connection_init_payload_is_accepted(server: Server) -> None:
    async with websockets.connect(server.ws_url, subprotocols=[Subprotocol(TRANSPORT_WS)]) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": None}))
        ack = json.loads(await asyncio.wait_for(ws.recv(), EVENT_SECONDS))

    assert ack["type"] == "connection_ack"


# --- credentials at connection_init --------------------------------------------------------------


async def _me_over_ws(
    server: Server, init: dict[str, Any], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    async with subscribe(server.ws_url, ME, {}, init=init, headers=headers) as sub:
        payload = await sub.next()
    data: dict[str, Any] = payload["data"]
    return data


@pytest.mark.parametrize(
    "init",
    [
        lambda t: {"authorization": f"Bearer {t}"},
        lambda t: {"Authorization": f"Bearer {t}"},
        lambda t: {"authToken": t},
        lambda t: {"authToken": f"Bearer {t}"},
        lambda t: {"authorization": t},
        lambda t: {"headers": {"Authorization": f"Bearer {t}"}},
    ],
    ids=["authorization", "Authorization", "authToken", "authToken-bearer", "bare", "headers"],
)
async def test_connection_init_takes_the_keys_clients_send(server: Server, init: Any) -> None:
    host = server.client()
    token = (await sign_up(host, "mara", "Mara Ellison"))["token"]

    assert await _me_over_ws(server, init(token)) == {"me": {"handle": "mara"}}


async def test_the_session_cookie_the_socket_opened_with_signs_it_in(server: Server) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    cookie = host.http.cookies["dealroom_session"]

    me = await _me_over_ws(server, {}, headers={"Cookie": f"dealroom_session={cookie}"})

    assert me == {"me": {"handle": "mara"}}


@pytest.mark.parametrize(
    "init",
    [
        {"authorization": "Bearer s_not-a-session"},
        {"Authorization": "Bearer s_not-a-session"},
        {"authToken": "s_not-a-session"},
        {"authToken": "dr_not-a-key"},
        {"authorization": "Basic Zm9vOmJhcg=="},
        {"guestKey": "not-a-guest-key"},
    ],
)
@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_a_credential_that_is_not_valid_closes_4401(
    server: Server, caplog: pytest.LogCaptureFixture, init: dict[str, Any], protocol: str
) -> None:
    frame = json.dumps({"type": "connection_init", "payload": init})
    with structlog.testing.capture_logs() as logs:
        code, _reason = await _refused(server, [frame], protocol=protocol)

    assert code == 4401
    _no_error_logged(caplog, logs)


async def test_a_signed_out_token_closes_4401(server: Server) -> None:
    host = server.client()
    token = (await sign_up(host, "mara", "Mara Ellison"))["token"]
    await host.query("mutation { signOut }")

    frame = json.dumps({"type": "connection_init", "payload": {"authToken": token}})
    code, _reason = await _refused(server, [frame])

    assert code == 4401


async def test_acting_as_an_unmanaged_account_closes_4403(server: Server) -> None:
    mara = server.client()
    await sign_up(mara, "mara", "Mara Ellison")
    other = server.client()
    other_id = (await sign_up(other, "other", "Other"))["account"]["id"]

    frame = json.dumps(
        {
            "type": "connection_init",
            "payload": {"authorization": mara.headers["Authorization"], "actAs": other_id},
        }
    )
    code, _reason = await _refused(server, [frame])

    assert code == 4403


async def test_no_credentials_is_an_anonymous_socket(server: Server) -> None:
    assert await _me_over_ws(server, {}) == {"me": None}


async def test_a_guest_key_still_connects(server: Server) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest: Client = server.client()
    await open_room(guest, "mara")

    me = await _me_over_ws(server, {"guestKey": guest.headers["X-Guest-Key"]})

    assert me == {"me": None}
