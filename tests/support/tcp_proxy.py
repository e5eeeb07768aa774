"""A loopback TCP proxy a test can cut: the network between a process and Redis, faulted."""

from __future__ import annotations

import asyncio
import contextlib


class TcpProxy:
    """Forwards connections to ``target``. ``cut()`` drops every live connection and closes
    each new one at once until ``restore()``: what a killed Redis connection looks like to
    its client, however often it reconnects."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.open = True
        self.refused = 0
        self._live: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        self.open = False
        for writer in tuple(self._live):
            writer.transport.abort()
        self._live.clear()

    def restore(self) -> None:
        self.open = True

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.open:
            self.refused += 1
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._live.update((writer, up_writer))
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            for end in (writer, up_writer):
                self._live.discard(end)
                end.transport.abort()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.transport.abort()
