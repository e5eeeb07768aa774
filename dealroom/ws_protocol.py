"""uvicorn's protocols, trimmed so that a held websocket keeps only what it reads.

* ``HandshakeReleasingProtocol``: uvicorn's sans-I/O websocket protocol keeps the upgrade
  request and its 101 response (each a ``websockets`` object with its own header structures)
  for as long as the socket is open, though nothing reads them once the response is sent:
  about 3 KiB and 60-odd allocations of every held subscription (``bench/ws_memory.py``).
  This one lets them go once the handshake is sent; the ASGI scope
  keeps its own copy of the request's headers, which is what the app reads.
* ``UpgradeReleasingHttpProtocol``: uvicorn's httptools protocol and its parser hold each
  other (the parser calls the protocol's bound methods). A plain connection cuts that as it
  ends; one upgraded to a websocket never ends as HTTP, so the pair, holding the socket's
  transport and through it the websocket's protocol, handler and context, would be left for
  the garbage collector. Frozen as a survivor (``gc_tuning.freeze_survivors``), it would keep
  the whole socket after it closed, until a full collection over the whole heap. This one
  cuts the pair once the connection is upgraded.
"""

from __future__ import annotations

from uvicorn._types import ASGISendEvent
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

PROTOCOL = "dealroom.ws_protocol:HandshakeReleasingProtocol"
"""The import string ``uvicorn.Config(ws=...)`` takes (children of ``serve --processes N``
import it themselves)."""

HTTP_PROTOCOL = "dealroom.ws_protocol:UpgradeReleasingHttpProtocol"
"""The import string ``uvicorn.Config(http=...)`` takes."""


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


class UpgradeReleasingHttpProtocol(HttpToolsProtocol):
    def handle_websocket_upgrade(self) -> None:
        super().handle_websocket_upgrade()
        # The transport now feeds the websocket's protocol; this one is never called again
        # (as ``connection_lost`` does for a plain connection).
        self.parser = None  # type: ignore[assignment]
