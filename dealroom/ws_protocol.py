"""uvicorn's sans-I/O websocket protocol, without the handshake kept for the socket's life.

uvicorn keeps the upgrade request and its 101 response (each a ``websockets`` object with its
own header structures) on the protocol for as long as the socket is open, though nothing reads
them once the response is sent: about 3 KiB and 60-odd allocations of every held
subscription (issue 17, ``bench/ws_memory.py``). This protocol lets them go once the
handshake is sent; the ASGI scope keeps its own copy of the request's headers, which is what
the app reads.
"""

from __future__ import annotations

from uvicorn._types import ASGISendEvent
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

PROTOCOL = "dealroom.ws_protocol:HandshakeReleasingProtocol"
"""The import string ``uvicorn.Config(ws=...)`` takes (children of ``serve --processes N``
import it themselves)."""


class HandshakeReleasingProtocol(WebSocketsSansIOProtocol):
    async def send(self, message: ASGISendEvent) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # Read only while the handshake is answered (uvicorn's ``send`` for the accept).
            # websockets' parser keeps the request too (a local of its generator, suspended
            # for the socket's life): its headers are emptied, as nothing reads them again.
            self.request.headers.clear()
            self.request = None  # type: ignore[assignment]
            self.response = None  # type: ignore[assignment]
