"""The server's websocket pings (``DEALROOM_WS_PING_SECONDS``): every held socket is pinged, so the
interval is a cost per subscription; it is a setting, and `dealroom serve` pings at the interval it
is given (0: never, as uvicorn is told)."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.types import Receive, Scope, Send

from dealroom.config import Settings
from dealroom.server import WS_PING_SECONDS, uvicorn_config
from tests.support.processes import free_port, serve, wait_healthy

PING = 0x9


async def _frames_until_ping(host: str, port: int, path: str, seconds: float) -> list[int]:
    """Open a websocket to ``path`` (graphql-transport-ws, answering nothing) and read the
    server's frames for up to ``seconds``: their opcodes, ending at the first ping."""
    reader, writer = await asyncio.open_connection(host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n"
        ).encode()
    )
    opcodes: list[int] = []
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        assert head.startswith(b"HTTP/1.1 101"), head
        async with asyncio.timeout(seconds):
            while PING not in opcodes:
                first, length = await reader.readexactly(2)
                length &= 0x7F  # the server's frames are not masked
                if length == 126:
                    length = int.from_bytes(await reader.readexactly(2))
                elif length == 127:
                    length = int.from_bytes(await reader.readexactly(8))
                await reader.readexactly(length)
                opcodes.append(first & 0x0F)
    except TimeoutError:
        pass
    finally:
        writer.close()
    return opcodes


async def test_dealroom_serve_pings_each_socket_at_the_interval_it_is_given(
    database_url: str, engine: AsyncEngine, tmp_path: Path
) -> None:
    del engine  # the database migrated
    port = free_port()
    with (
        (tmp_path / "serve.log").open("wb") as log,
        serve(database_url, port, log, ws_ping_seconds="0.3") as process,
    ):
        await wait_healthy(f"http://127.0.0.1:{port}", process)
        opcodes = await _frames_until_ping("127.0.0.1", port, "/graphql", 10)
    assert PING in opcodes, (tmp_path / "serve.log").read_text()[-2000:]


async def _never_served(scope: Scope, receive: Receive, send: Send) -> None:
    """The app of a config that is only read, never served."""
    raise AssertionError("not served")


def test_the_default_is_45_seconds_not_uvicorns_20_and_zero_turns_pings_off() -> None:
    def interval(seconds: float = WS_PING_SECONDS) -> float | None:
        config = uvicorn_config(_never_served, host="127.0.0.1", port=0, ws_ping_seconds=seconds)
        return config.ws_ping_interval

    assert WS_PING_SECONDS == Settings().ws_ping_seconds == 45.0
    assert interval() == 45.0
    assert interval(0) is None  # uvicorn's way of saying none
    assert interval(7) == 7
