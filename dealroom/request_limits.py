"""Bounds a request meets before anything parses it.

* ``BodyLimit``: an ASGI middleware refusing HTTP bodies and websocket messages larger than
  ``DEALROOM_MAX_REQUEST_BYTES`` (413 with a coded GraphQL error; websocket close 1009), so
  no oversized input reaches the JSON decoder or the GraphQL parser, and bodies that take
  longer than ``DEALROOM_HTTP_BODY_TIMEOUT`` to arrive (408).
* ``decode_json``: JSON whose nesting and item count were bounded on the raw bytes first
  (variables, websocket frames), so decoding never holds the event loop for long.
* ``check_document``: a C-speed scan of a GraphQL document before graphql-core's pure-Python
  lexer sees it: its length, every token (comments included) and each literal's size are
  bounded, so parsing cannot hold the event loop for more than a few milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dealroom.domain.errors import ErrorCode

WS_MESSAGE_TOO_BIG = 1009
"""RFC 6455 close code for a websocket message over the byte limit."""


DRAIN_LIMIT = 8 << 20
"""Bytes of an oversized chunked body read and discarded so the client sees the 413."""


class RequestRejected(Exception):
    """A request refused before execution: answered with ``status``, a coded error and the
    headers its status calls for (``Allow`` for a 405, ``Accept`` for a 406)."""

    def __init__(
        self,
        status: int,
        code: ErrorCode,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})

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


class _Oversized(Exception):
    def __init__(self, *, more: bool) -> None:
        self.more = more


def timed_out(seconds: float) -> RequestRejected:
    return RequestRejected(
        408,
        ErrorCode.REQUEST_TIMEOUT,
        f"The request body took longer than {seconds:g} s to arrive (DEALROOM_HTTP_BODY_TIMEOUT).",
    )


class BodyLimit:
    """Refuse oversized or stalled HTTP bodies and oversized websocket messages before the app
    reads them.

    An HTTP body is buffered up to the limit (a declared Content-Length over it is refused
    without reading a byte) and handed on whole; one that has not fully arrived within
    ``body_timeout`` seconds is answered 408 and its connection closed, so stalled uploads do
    not hold connections and buffers forever. A websocket message over the limit closes the
    socket with 1009 and the app sees a disconnect."""

    def __init__(self, app: ASGIApp, max_bytes: int, body_timeout: float = 30.0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.body_timeout = body_timeout

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
        try:
            async with asyncio.timeout(self.body_timeout):
                body = await self._read(receive)
        except TimeoutError:
            await send_rejection(send, timed_out(self.body_timeout))
            return
        except _Oversized as oversized:
            await self._drain(receive, more=oversized.more)
            await send_rejection(send, too_large(self.max_bytes))
            return
        if body is None:
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or None when the client went away; ``_Oversized`` past the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                raise _Oversized(more=message.get("more_body", False))
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

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


class JsonTooLarge(JsonTooDeep):
    """More strings, containers and separators than the bound: refused like a deep one."""

    def __init__(self, limit: int, doc: str) -> None:
        json.JSONDecodeError.__init__(self, f"JSON holds more than {limit} items", doc, 0)
        self.limit = limit


_ESCAPED_BACKSLASH = b"\\\\"
_ESCAPED_QUOTE = b'\\"'
_STRING = re.compile(rb'"[^"]*"')
_SHAPE = bytes.maketrans(b"[{]}", b"(())")
_NOT_STRUCTURE = bytes(set(range(256)) - set(b"[]{},"))


def check_json_shape(data: bytes, max_depth: int, max_items: int) -> JsonTooDeep | None:
    """Why ``data`` may not be decoded, judged on the raw bytes at C speed before
    ``json.loads`` builds anything: decoding costs about 1 us per item and the old walk over
    the decoded value 5 us, so a 256 KiB body of ``[[]],`` held the event loop for 150 ms.

    Escaped backslashes and quotes are dropped first (JSON escapes pair left to right), so
    every remaining quote opens or closes a string; strings are removed (brackets inside them
    are text); what is left is brackets and commas. Their count plus the strings' is the
    item count; each ``replace`` pass then removes exactly one level of ``()`` pairs, so the
    passes needed are the depth. Malformed input passes through to the decoder's own error."""
    text = data.replace(_ESCAPED_BACKSLASH, b"").replace(_ESCAPED_QUOTE, b"")
    strings = text.count(b'"') // 2
    if strings > max_items:
        return JsonTooLarge(max_items, "")
    structure = _STRING.sub(b"", text).translate(_SHAPE, _NOT_STRUCTURE)
    if strings + structure.count(b"(") + structure.count(b",") > max_items:
        return JsonTooLarge(max_items, "")
    nesting = structure.replace(b",", b"")
    for _ in range(max_depth):
        if not nesting:
            return None
        nesting = nesting.replace(b"()", b"")
    return JsonTooDeep(max_depth, "") if b"()" in nesting else None


def decode_json(data: str | bytes, max_depth: int, max_items: int = 10_000) -> object:
    """``json.loads`` of input whose nesting and size in items were bounded first; never a
    RecursionError."""
    raw = data.encode() if isinstance(data, str) else data
    if (refusal := check_json_shape(raw, max_depth, max_items)) is not None:
        raise refusal
    try:
        return json.loads(data)
    except RecursionError as exc:  # unbalanced input the shape check let through
        raise JsonTooDeep(max_depth, "") from exc


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
