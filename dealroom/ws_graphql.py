"""The GraphQL websocket protocols as this server speaks them: strawberry's graphql-transport-ws
and legacy graphql-ws handlers, with every frame checked before strawberry reads it and the
socket's credentials checked at ``connection_init``.

* A frame that is JSON but not a message strawberry can read (an array, ``null``, a number, a
  string, a ``subscribe`` whose payload is not an object, an id that is not a string) is
  answered with close code 4400 and one log line. strawberry indexes the frame first and
  would otherwise raise out of the socket's task: no close code and a traceback per frame,
  before ``connection_init`` too, so anyone could fill the log.
* ``connection_init`` resolves the presented credentials once (``Context.credentials``: the
  handshake's headers and cookies, then ``authorization``/``Authorization``/``authToken`` in
  the payload, Bearer or bare). A credential that is present but not valid closes the socket
  (4401, or 4403 for an act-as the session may not use) instead of going on as anonymous and
  failing each operation with an error that points elsewhere. A check that reads the database
  takes a subscription start-up slot (``services/live/admission.py``) if one is free and is
  waited for at most the admission's wait; past that, or with no slot free, or with the
  database unreachable, the socket is acked unchecked and its first subscription start-up
  checks them in its own slot (``resolvers/live.settle_credentials``), closing it the same
  way. A busy server thus never drops the socket with no close code. Every operation resolves
  its identity anyway: nothing is served on credentials that do not stand.
* A shared subscription result is encoded once for all its sockets (``schema/fanout.py``).

Close codes are listed in README "Websocket close codes".
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

import structlog
from sqlalchemy.exc import SQLAlchemyError
from starlette.websockets import WebSocketDisconnect
from strawberry.http.exceptions import WebSocketDisconnected
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    ConnectionInitMessage,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    Message as TransportMessage,
)
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler
from strawberry.subscriptions.protocols.graphql_ws.types import (
    ConnectionInitMessage as LegacyInitMessage,
)
from strawberry.subscriptions.protocols.graphql_ws.types import (
    OperationMessage as LegacyMessage,
)

from dealroom.resolvers.live import credentials_refusal
from dealroom.schema.context import Context
from dealroom.schema.fanout import shared_frame

log = structlog.get_logger(__name__)

BAD_REQUEST = 4400
"""A frame the protocol cannot read (graphql-transport-ws ``BadRequest``). The credentials'
codes (4401, 4403) are ``resolvers/live``'s."""


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for a close reason."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def frame_problem(message: object, protocol: str) -> str | None:
    """Why strawberry could not read ``message`` as a frame of ``protocol``; None if it can.
    Only the shapes strawberry indexes without checking are looked at: the rest (unknown
    types, a missing query) it answers itself."""
    if not isinstance(message, dict):
        return f"A message must be a JSON object, not {json_type(message)}"
    kind = message.get("type")
    if not isinstance(kind, str):
        return "A message's type must be a string"
    start = "subscribe" if protocol == "graphql-transport-ws" else "start"
    if kind in (start, "complete", "stop") and (
        not isinstance(message.get("id"), str) or not message["id"]
    ):
        return f"A {kind} message's id must be a non-empty string"
    if kind == start:
        payload = message.get("payload")
        if not isinstance(payload, dict):
            return f"A {kind} message's payload must be an object, not {json_type(payload)}"
        if not isinstance(payload.get("query"), str):
            return f"A {kind} message's payload.query must be a string"
        for name, kinds in (("variables", dict), ("operationName", str), ("extensions", dict)):
            value = payload.get(name)
            if value is not None and not isinstance(value, kinds):
                return f"A {kind} message's payload.{name} must be a {json_type(kinds())}"
    if kind == "connection_init":
        payload = message.get("payload")
        if payload is not None and not isinstance(payload, dict):
            return f"The connection_init payload must be an object, not {json_type(payload)}"
    return None


async def refuse(websocket: Any, code: int, reason: str, protocol: str) -> None:
    """Close with ``code``: one log line, no traceback (anyone may send these frames)."""
    log.info("websocket_refused", code=code, reason=reason, protocol=protocol)
    # A close reason is at most 123 bytes; the client may be gone already.
    with contextlib.suppress(WebSocketDisconnect, WebSocketDisconnected, RuntimeError):
        await websocket.close(code=code, reason=reason[:120])


async def check_credentials(
    context: Context, websocket: Any, protocol: str
) -> tuple[int, str] | None:
    """The close code and reason for credentials presented but not valid; None when they
    stand, none were presented, or they could not be checked in time (``credentials_unchecked``
    is then set: see the module's docstring)."""
    credentials = context.credentials()
    admission = context.app.admission
    # Only a token or an actAs is looked up; a guest key's or a header's shape is not.
    reads = credentials.token is not None or credentials.act_as is not None
    if reads and not await admission.take_if_free():
        context.credentials_unchecked = True
        log.debug("websocket_credentials_unchecked", reason="no start-up slot", protocol=protocol)
        return None
    check = asyncio.create_task(_check(context, websocket, protocol, slot=reads))
    context.credentials_check = check
    done, _ = await asyncio.wait([check], timeout=admission.wait_seconds)
    if check not in done:
        # It goes on in its slot, and acts on its outcome when it comes (``_check``).
        context.credentials_unchecked = True
        log.info("websocket_credentials_unchecked", reason="database busy", protocol=protocol)
        return None
    context.credentials_check = None
    return check.result()


async def _check(
    context: Context, websocket: Any, protocol: str, *, slot: bool
) -> tuple[int, str] | None:
    """connection_init's check, in the start-up slot it took (``slot``). Finishing after
    connection_init stopped waiting and acked the socket, it closes the socket itself when the
    credentials do not stand."""
    try:
        refused = await credentials_refusal(context)
    except (SQLAlchemyError, OSError) as error:  # busy or unreachable: left to a start-up
        context.credentials_unchecked = True
        log.info("websocket_credentials_unchecked", reason=type(error).__name__, protocol=protocol)
        return None
    except Exception:  # never the socket's end: every operation resolves its identity anyway
        context.credentials_unchecked = True
        log.exception("websocket_credentials_check_failed", protocol=protocol)
        return None
    finally:
        if slot:
            context.app.admission.release()
    if not context.credentials_unchecked:
        return refused  # connection_init is still waiting for it
    if refused is None:
        context.credentials_unchecked = False
    else:
        await refuse(websocket, *refused, protocol)
    return None


def _forget_check(context: Context) -> None:
    """The socket ended: a check still waiting on the database has no one to answer."""
    check, context.credentials_check = context.credentials_check, None
    if check is not None:
        check.cancel()


class TransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """graphql-transport-ws."""

    async def handle_message(self, message: TransportMessage) -> None:
        problem = frame_problem(message, "graphql-transport-ws")
        if problem is not None:
            await self.handle_invalid_message(problem)
            return
        if message["type"] == "connection_init" and message.get("payload") is None:
            # The protocol allows a null or missing payload; strawberry takes only an object.
            message = cast("ConnectionInitMessage", {"type": "connection_init", "payload": {}})
        await super().handle_message(message)

    async def handle_invalid_message(self, error_message: str) -> None:
        await refuse(self.websocket, BAD_REQUEST, error_message, "graphql-transport-ws")

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        if not self.connection_init_received and not self.connection_timed_out:
            payload = message.get("payload")
            if isinstance(payload, dict):
                self.context.connection_params = payload
                refused = await check_credentials(
                    self.context, self.websocket, "graphql-transport-ws"
                )
                if refused is not None:
                    if self.connection_init_timeout_task:
                        self.connection_init_timeout_task.cancel()
                    await refuse(self.websocket, *refused, "graphql-transport-ws")
                    return
        await super().handle_connection_init(message)
        # The init timeout is cancelled by now: do not keep the finished task (its coroutine,
        # context and CancelledError) for the socket's whole life.
        self.connection_init_timeout_task = None

    async def shutdown(self) -> None:
        _forget_check(self.context)
        await super().shutdown()

    async def send_message(self, message: TransportMessage) -> None:
        await _send(self.websocket, self.view, cast("dict[str, Any]", message))


class LegacyWSHandler(BaseGraphQLWSHandler[Context, None]):
    """Legacy graphql-ws (subscriptions-transport-ws), checked the same way; it has no close
    codes of its own, so the same numbers are used."""

    async def handle_message(self, message: LegacyMessage) -> None:
        problem = frame_problem(message, "graphql-ws")
        if problem is not None:
            await refuse(self.websocket, BAD_REQUEST, problem, "graphql-ws")
            return
        await super().handle_message(message)

    async def handle_connection_init(self, message: LegacyInitMessage) -> None:
        payload = message.get("payload")
        if isinstance(payload, dict):
            self.context.connection_params = payload
            refused = await check_credentials(self.context, self.websocket, "graphql-ws")
            if refused is not None:
                await self.send_message({"type": "connection_error", "payload": {}})
                await refuse(self.websocket, *refused, "graphql-ws")
                return
        await super().handle_connection_init(message)

    async def cleanup(self) -> None:
        _forget_check(self.context)
        await super().cleanup()

    async def send_message(self, message: LegacyMessage) -> None:
        await _send(self.websocket, self.view, cast("dict[str, Any]", message))


async def _send(websocket: Any, view: Any, message: dict[str, Any]) -> None:
    text = shared_frame(message, view.encode_json)
    if text is None:
        await websocket.send_json(message)
        return
    try:
        await websocket.ws.send_text(text)
    except WebSocketDisconnect as exc:
        raise WebSocketDisconnected from exc
