"""Bounds a request meets before anything parses it.

* ``BodyLimit``: an ASGI middleware refusing HTTP bodies and websocket messages larger than
  ``DEALROOM_MAX_REQUEST_BYTES`` (413 with a coded GraphQL error; websocket close 1009), so
  no oversized input reaches the JSON decoder or the GraphQL parser.
* ``check_json_depth``: the nesting bound for decoded JSON (variables, websocket frames).
* ``check_document``: a C-speed scan of a GraphQL document before graphql-core's pure-Python
  lexer sees it: its length, every token (comments included) and each literal's size are
  bounded, so parsing cannot hold the event loop for more than a few milliseconds.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dealroom.domain.errors import ErrorCode

WS_MESSAGE_TOO_BIG = 1009
"""RFC 6455 close code for a websocket message over the byte limit."""


DRAIN_LIMIT = 8 << 20
"""Bytes of an oversized chunked body read and discarded so the client sees the 413."""


class RequestRejected(Exception):
    """A request refused before execution: answered with ``status`` and a coded error."""

    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> bytes:
        error = {"message": self.message, "extensions": {"code": str(self.code)}}
        return json.dumps({"data": None, "errors": [error]}, separators=(",", ":")).encode()


async def send_rejection(send: Send, rejected: RequestRejected) -> None:
    body = rejected.body()
    await send(
        {
            "type": "http.response.start",
            "status": rejected.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def too_large(limit: int) -> RequestRejected:
    return RequestRejected(
        413,
        ErrorCode.PAYLOAD_TOO_LARGE,
        f"The request is larger than {limit} bytes (DEALROOM_MAX_REQUEST_BYTES).",
    )


class BodyLimit:
    """Refuse oversized HTTP bodies and websocket messages before the app reads them.

    An HTTP body is buffered up to the limit (a declared Content-Length over it is refused
    without reading a byte) and handed on whole; a websocket message over the limit closes
    the socket with 1009 and the app sees a disconnect."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self.app(scope, self._ws_receive(receive, send), send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            if declared.isdigit() and int(declared) <= DRAIN_LIMIT:
                await self._drain(receive, more=True)  # so the client reads the 413
            await send_rejection(send, too_large(self.max_bytes))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._drain(receive, more=message.get("more_body", False))
                await send_rejection(send, too_large(self.max_bytes))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect

        await self.app(scope, replay, send)

    async def _drain(self, receive: Receive, *, more: bool) -> None:
        """Discard (never keep) the rest of a chunked body, up to a bound, so the client reads
        our 413 instead of a reset connection; past the bound the connection is closed."""
        budget = DRAIN_LIMIT
        while more and budget > 0:
            message = await receive()
            if message["type"] != "http.request":
                return
            budget -= len(message.get("body", b""))
            more = message.get("more_body", False)

    def _ws_receive(self, receive: Receive, send: Send) -> Receive:
        async def bounded() -> Message:
            message = await receive()
            if message["type"] == "websocket.receive":
                data = message.get("bytes") or message.get("text") or ""
                if len(data) > self.max_bytes or (
                    isinstance(data, str) and len(data.encode()) > self.max_bytes
                ):
                    reason = "message larger than DEALROOM_MAX_REQUEST_BYTES"
                    await send(
                        {"type": "websocket.close", "code": WS_MESSAGE_TOO_BIG, "reason": reason}
                    )
                    return {"type": "websocket.disconnect", "code": WS_MESSAGE_TOO_BIG}
            return message

        return bounded


# --- JSON ------------------------------------------------------------------------------------


class JsonTooDeep(json.JSONDecodeError):
    """Nesting past the bound. A JSONDecodeError, so a websocket frame like this is closed as
    invalid (4400) by the protocol handler; over HTTP the view answers BAD_USER_INPUT."""

    def __init__(self, limit: int, doc: str) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels", doc, 0)
        self.limit = limit


def decode_json(data: str | bytes, max_depth: int) -> object:
    """``json.loads`` with a nesting bound; never a RecursionError."""
    text = data.decode() if isinstance(data, bytes) else data
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise JsonTooDeep(max_depth, text) from exc
    check_json_depth(value, max_depth, text)
    return value


def check_json_depth(value: object, max_depth: int, doc: str = "") -> None:
    """Iterative, so a deep value cannot exhaust the stack while being measured."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Any
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            raise JsonTooDeep(max_depth, doc)
        stack.extend((child, depth + 1) for child in children)


# --- GraphQL documents -----------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
      (?P<comment>\#[^\n\r]*)
    | (?P<block>\"\"\"(?:[^"\\]|\\.|"(?!""))*(?:\"\"\"|$))
    | (?P<string>"(?:[^"\\\n\r]|\\.)*"?)
    | \.\.\.
    | [_A-Za-z][_0-9A-Za-z]*
    | -?[0-9][0-9.eE+-]*
    | \S
    """,
    re.VERBOSE | re.DOTALL,
)
_IGNORED = re.compile(r"[\s,\ufeff]*")


def check_document(
    query: str, *, max_chars: int, max_tokens: int, max_literal_chars: int
) -> str | None:
    """Why this document may not be parsed, or None. Every token counts, comments included;
    a string, block string or comment longer than ``max_literal_chars`` is refused (values
    that long belong in variables). The scan is regex-driven and stops at the first excess."""
    if len(query) > max_chars:
        return f"The query is longer than {max_chars} characters."
    count = 0
    position = _IGNORED.match(query, 0).end()  # type: ignore[union-attr]  # always matches
    while position < len(query):
        match = _TOKEN.match(query, position)
        if match is None:  # unreachable: \S matches any non-space
            break
        count += 1
        if count > max_tokens:
            return f"Syntax Error: Document contains more than {max_tokens} tokens."
        literal = match.group("comment") or match.group("block") or match.group("string")
        if literal is not None and len(literal) > max_literal_chars:
            return (
                f"A string or comment in the query is longer than {max_literal_chars} "
                "characters; pass long values as variables."
            )
        position = _IGNORED.match(query, match.end()).end()  # type: ignore[union-attr]
    return None
