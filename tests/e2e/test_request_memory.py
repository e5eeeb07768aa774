"""A request's objects are freed by reference counting as the request ends, not left in reference
cycles for the garbage collector; a held subscription keeps nothing per event it delivered.

A cycle holds a whole request (its context, the unit of work, the execution and its results): every
request's objects would wait for a collection, young collections would come often and take long,
and those caught mid-request would be promoted and walked again. The cycles guarded against here
(docs/BENCHMARKS.md): the scope's list of contexts, graphql-core's executor holding its own bound
methods, and the error extension holding a bound method of itself. Checked with
``gc.DEBUG_SAVEALL`` over real posts, a refused post and subscription deliveries through the real
server in this process."""

from __future__ import annotations

import contextlib
import gc
import types
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from typing import cast

from graphql.execution.collect_fields import FieldDetails
from graphql.execution.executor import Executor
from starlette.requests import HTTPConnection
from strawberry.extensions import SchemaExtension
from strawberry.extensions.context import WrappedHook
from strawberry.types.execution import ExecutionContext
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from dealroom import gc_tuning
from dealroom.schema.context import Context
from tests.conftest import Server
from tests.support.graphql import (
    PANE_EVENTS,
    Client,
    Subscription,
    open_room,
    post,
    sign_up,
    subscribe,
    until_listening,
    ws_init_for,
)
from tests.support.polling import eventually

REQUEST_OBJECTS = (Context, Executor, SchemaExtension, ExecutionContext, HTTPConnection)
"""What a request holds: none may be found only through a cycle."""


SOCKET_OBJECTS = (*REQUEST_OBJECTS, HttpToolsProtocol, WebSocketsSansIOProtocol)
"""What a websocket holds besides its requests' objects: the HTTP protocol it was upgraded
from and its websocket protocol."""


def _in_cycles(kinds: tuple[type, ...] = REQUEST_OBJECTS) -> Counter[str]:
    """Our request objects (or ``kinds``) among what the collector finds unreachable now."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return Counter(type(found).__qualname__ for found in gc.garbage if isinstance(found, kinds))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


async def _until_line(feed: Subscription, body: str) -> None:
    """Events until the message ``body`` (the agent's replies and typing come between)."""
    while True:
        event = await feed.event()
        if event.get("message", {}).get("body") == body:
            return


@contextlib.asynccontextmanager
async def _guest_followed_by_host(
    server: Server,
) -> AsyncIterator[tuple[Client, str, Subscription]]:
    """A guest in a host's room, the host following the visitor pane, one line delivered."""
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = server.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    variables = {"roomId": room_id, "seat": "VISITOR"}
    async with subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(host)) as feed:
        await until_listening(server.broker, room_id)
        await post(guest, room_id, "warm up")
        await _until_line(feed, "warm up")
        yield guest, room_id, feed


async def test_a_request_leaves_no_cycle_behind(server: Server) -> None:
    async with _guest_followed_by_host(server) as (guest, room_id, feed):
        gc.collect()
        enabled = gc.isenabled()
        gc.disable()
        try:
            for n in range(5):
                await post(guest, room_id, f"line {n}")
                await _until_line(feed, f"line {n}")
            refused = await guest.error_codes(
                'mutation($r: ID!) { postMessage(input: {roomId: $r, body: "", '
                'clientMessageId: "c"}) { cursor } }',
                {"r": room_id},
            )
            assert refused == ["BAD_USER_INPUT"]  # an empty body: the error path runs too
            left = _in_cycles()
        finally:
            if enabled:
                gc.enable()
    assert left == Counter(), f"request objects freed only by the collector: {dict(left)}"


async def test_a_closed_subscription_leaves_no_cycle_behind(server: Server) -> None:
    """What a subscription's socket held is freed by reference counting once it closes.
    ``dealroom serve`` freezes what lives a while (gc_tuning.freeze_survivors): a socket's
    objects in a cycle stayed frozen after the close, until a full collection over the whole
    heap, the longest pause a server had. Two cycles held a socket: graphql-core's executor
    and its bound helpers (the subscription's own executor lives as long as the socket), and
    uvicorn's HTTP protocol and its parser, left behind by the upgrade to a websocket."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        before = gc_tuning.open_subscriptions()
        async with _guest_followed_by_host(server):
            sockets = [weakref.ref(p) for p in _server_sockets()]
        assert sockets, "no websocket protocol found"
        assert await eventually(lambda: gc_tuning.open_subscriptions() == before, 5.0)
        # the close has reached the server: the socket is lost and its ASGI task has ended
        assert await eventually(lambda: all(_closed(socket) for socket in sockets), 5.0)
        left = _in_cycles(SOCKET_OBJECTS)
    finally:
        if enabled:
            gc.enable()
    assert left == Counter(), f"socket objects freed only by the collector: {dict(left)}"


def _server_sockets() -> list[WebSocketsSansIOProtocol]:
    return [
        found
        for found in gc.get_objects()
        if isinstance(found, WebSocketsSansIOProtocol) and not found.disconnected
    ]


def _closed(socket: weakref.ref[WebSocketsSansIOProtocol]) -> bool:
    """Lost, and none of the server's ASGI tasks still running (this test's other requests
    are over by then); freed already counts too."""
    protocol = socket()
    return protocol is None or (protocol.disconnected and not protocol.tasks)


def _alive(kind: type) -> int:
    gc.collect()
    return sum(isinstance(found, kind) for found in gc.get_objects())


async def test_a_held_subscription_keeps_nothing_per_event(server: Server) -> None:
    """graphql-core's per-event executor is a shallow copy sharing the subscription's memo
    of collected fields, keyed by field lists each event builds anew: every event left
    entries (field lists, collected fields) for the subscription's whole life."""
    async with _guest_followed_by_host(server) as (guest, room_id, feed):
        before = _alive(FieldDetails)
        for n in range(20):
            await post(guest, room_id, f"line {n}")
            await _until_line(feed, f"line {n}")
        after = _alive(FieldDetails)
    # a cycle per event leaves 4 or more for each of the 20 (and the agent's replies)
    assert after - before < 10, (before, after)


STARLETTE_LAYERS = frozenset(
    {
        "ServerErrorMiddleware.__call__",
        "ExceptionMiddleware.__call__",
        "Router.__call__",
        "Router.app",
        "WebSocketRoute.handle",
    }
)
"""What a socket held through Starlette's stack keeps suspended for its whole life."""


def _suspended_layers() -> Counter[str]:
    return Counter(
        found.cr_code.co_qualname
        for found in gc.get_objects()
        if type(found) is types.CoroutineType  # not isinstance: dead weak proxies raise
        and found.cr_frame is not None
        and found.cr_code.co_qualname in STARLETTE_LAYERS
    )


async def test_a_held_subscription_holds_no_router_or_middleware_frames(server: Server) -> None:
    """The GraphQL websocket goes straight to its view (app.DealroomApp): a held socket used
    to keep one suspended coroutine per Starlette layer (error and exception middleware, the
    router, the route) for its whole life, thousands of each with thousands held."""
    serving = _suspended_layers()  # the app's lifespan runs through the stack meanwhile
    async with _guest_followed_by_host(server):
        held = _suspended_layers() - serving
    assert held == Counter(), f"a held socket keeps Starlette's layers: {dict(held)}"


def _held_hooks() -> Counter[str]:
    """The extensions whose hooks are open now, by extension class."""
    return Counter(
        type(found.extension).__name__
        for found in gc.get_objects()
        if type(found) is WrappedHook and found.extension is not None
    )


async def test_a_held_subscription_keeps_open_only_the_hooks_that_read_its_end(
    server: Server,
) -> None:
    """strawberry holds every ``on_operation`` hook open for a subscription's life. The token
    bound and the validation rules are set in the parse and validate hooks instead
    (``schema/limits.py``): their two ``on_operation`` generators, context managers and hooks
    were held per socket. What stays: the metrics and the error codes, which read the
    operation's end."""
    async with _guest_followed_by_host(server):
        held = _held_hooks()
    assert held == Counter({"Metrics": 1, "ErrorCodes": 1}), dict(held)


async def test_a_held_subscription_keeps_no_handshake(server: Server) -> None:
    """uvicorn keeps a socket's upgrade request and its 101 response (their header
    structures) for the socket's life, and websockets' parser keeps the request as a local
    of its suspended generator; ``ws_protocol.py`` lets them go once answered (the parser's
    request with no headers left)."""
    async with _guest_followed_by_host(server):
        gc.collect()
        sockets = [
            found
            for found in gc.get_objects()
            if isinstance(found, WebSocketsSansIOProtocol) and found.handshake_complete
        ]
        # typed as always set by uvicorn: read as plain attributes
        kept = [p for p in sockets if any(getattr(p, name) for name in ("request", "response"))]
        # the parser: websockets' ServerProtocol.parse, suspended in its frames' loop
        parsers = [cast("types.GeneratorType[None, None, None]", p.conn.parser) for p in sockets]
        parsed = [g.gi_frame.f_locals.get("request") for g in parsers if g.gi_frame is not None]
        headers = [len(request.headers) for request in parsed if request is not None]
    assert sockets, "no websocket protocol found"
    assert kept == [], f"{len(kept)} of {len(sockets)} sockets keep their handshake"
    assert headers, "no parser holds a request"
    assert not any(headers), f"the parser keeps the request's headers: {headers}"
