"""How dealroom runs under uvicorn: one set of server options for `dealroom serve`, the tests
and the benchmarks, so what is tested and measured is what is served."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from dealroom import ws_protocol
from dealroom.config import Settings

WS_PING_SECONDS = Settings.model_fields["ws_ping_seconds"].default
"""The server's websocket ping interval unless told otherwise (``Settings.ws_ping_seconds``)."""
GRACEFUL_SHUTDOWN_SECONDS = 10
"""Open connections get this long to finish when the server stops."""
STOP_SECONDS = 60.0
"""A background server that has not stopped after this long is cancelled (and says so)."""


HEADER_TIMEOUT_SECONDS = Settings.model_fields["http_header_timeout"].default
"""How long a connection may take to send a request's headers, and stay idle between
requests, unless told otherwise (``Settings.http_header_timeout``)."""

HTTP_PROTOCOL = "dealroom.server:HeaderDeadlineProtocol"
"""The import string ``uvicorn.Config(http=...)`` takes (children of ``serve --processes N``
import it themselves)."""


class HeaderDeadlineProtocol(ws_protocol.UpgradeReleasingHttpProtocol):
    """uvicorn's httptools protocol with a deadline for a request's headers. uvicorn times
    out only an idle keep-alive connection, and any byte received cancels that, so a client
    trickling a header a byte at a time (or opening a socket and sending nothing) held a
    connection forever. Here a connection's headers must be complete within
    ``timeout_keep_alive`` seconds of the connection opening or of the request's first byte;
    a connection over it is closed. Bodies have their own deadline (``BodyLimit``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn's own narrowing of asyncio's
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_deadline is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._header_deadline = self.loop.call_later(self.timeout_keep_alive, self._expire)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _expire(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def uvicorn_config(
    app: ASGIApp | str,
    *,
    host: str,
    port: int,
    log_level: str = "info",
    access_log: bool = True,
    processes: int = 1,
    ws_ping_seconds: float = WS_PING_SECONDS,
    header_timeout: float = HEADER_TIMEOUT_SECONDS,
    log_format: str = "console",
) -> uvicorn.Config:
    """``app`` is an import string of an app factory when ``processes`` > 1 (each child
    builds its own app). ``ws_ping_seconds`` 0 sends no websocket pings. ``log_format``
    ``json`` leaves uvicorn's loggers to the process's logging set-up (``dealroom.logging``),
    so its start-up and access lines are JSON like every other line."""
    return uvicorn.Config(
        app,
        factory=processes > 1,
        workers=processes,
        host=host,
        port=port,
        # The sans-I/O websocket protocol runs one task per connection; the legacy one runs
        # four (handler, data transfer, keepalive, close) for every held subscription. Ours
        # lets the handshake go once it is answered (ws_protocol.py).
        ws=ws_protocol.PROTOCOL,
        # httptools (as uvicorn's "auto" picks), without the cycle an upgraded socket left.
        # With a deadline for the request's headers (HeaderDeadlineProtocol).
        http=HTTP_PROTOCOL,
        timeout_keep_alive=header_timeout,  # type: ignore[arg-type]  # seconds for call_later: a float works
        # Per-message deflate costs tens of KiB per websocket; our frames are small.
        ws_per_message_deflate=False,
        ws_max_size=1 << 20,  # GraphQL operations are small; refuse 16 MiB frames
        # uvicorn pings every held socket every 20 s unless told: at 5,000 held that is
        # 250 pings and pongs a second (Settings.ws_ping_seconds).
        ws_ping_interval=ws_ping_seconds or None,
        log_level=log_level,
        access_log=access_log,
        log_config=None if log_format == "json" else uvicorn.config.LOGGING_CONFIG,
        lifespan="on",
        # A connection still open after this long on shutdown (a subscription that never
        # ends) is cancelled rather than holding the process up forever.
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
    )


@dataclass
class BackgroundServer:
    """A server running as a task of the caller's event loop (tests, benchmarks)."""

    server: uvicorn.Server
    task: asyncio.Task[None]
    port: int

    async def stop(self) -> None:
        self.server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self.task), STOP_SECONDS)
        except TimeoutError:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
            raise RuntimeError(
                f"the server did not stop within {STOP_SECONDS:.0f}s (lifespan shutdown hung)"
            ) from None


async def start_in_background(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    startup_timeout: float = 120,
    header_timeout: float | None = None,
) -> BackgroundServer:
    """Serve ``app`` on a free loopback port (``port=0``) without taking over signals. The
    header timeout is the app's ``Settings.http_header_timeout`` unless given."""
    if header_timeout is None:
        state = getattr(getattr(app, "state", None), "dealroom", None)
        header_timeout = state.settings.http_header_timeout if state else HEADER_TIMEOUT_SECONDS
    config = uvicorn_config(
        app, host=host, port=port, log_level="warning", header_timeout=header_timeout
    )
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]  # the caller owns signals
    task = asyncio.create_task(server.serve())
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if task.done():
            task.result()
        if time.monotonic() > deadline:
            task.cancel()
            raise RuntimeError(f"uvicorn did not start in {startup_timeout:.0f}s")
        await asyncio.sleep(0.01)
    bound: int = server.servers[0].sockets[0].getsockname()[1]
    return BackgroundServer(server, task, bound)


def app_from_env() -> ASGIApp:
    """The app a ``serve --processes N`` child builds for itself from the environment: its own
    engine pool, broker connection and agent workers (nothing is shared across processes but
    the database, Redis and the listening socket)."""
    from dealroom.app import create_app
    from dealroom.config import Settings
    from dealroom.gc_tuning import settle_after_startup

    settings = Settings()
    app = create_app(settings)
    watch_parent(supervisor_pid())
    settle_after_startup(
        young_threshold=settings.gc_young_threshold,
        log_pauses_over_ms=settings.gc_pause_log_ms,
        log_format=settings.log_format,
        survivors=settings.gc_freeze_survivors,
    )
    return app


SUPERVISOR_PID_ENV = "DEALROOM_SUPERVISOR_PID"
"""Set by ``serve --processes N`` before it forks: the pid its children must outlive no longer."""


def supervisor_pid() -> int:
    """The supervisor's pid as it was when it started the children. Not ``os.getppid()`` read
    at app load: a child still loading when its supervisor is killed is already re-parented
    by then, and would watch its new parent forever."""
    recorded = os.environ.get(SUPERVISOR_PID_ENV)
    return int(recorded) if recorded else os.getppid()


ORPHAN_POLL_SECONDS = 0.5
ORPHAN_GRACE_SECONDS = 15.0


def watch_parent(parent: int, *, poll: float = ORPHAN_POLL_SECONDS) -> threading.Thread:
    """A ``serve --processes N`` child stops when its supervisor is gone. uvicorn's supervisor
    stops its children when it is told to, but a supervisor killed outright (SIGKILL, OOM)
    leaves them running: serving a port nobody manages and claiming agent runs against the
    database. The child polls its parent's pid; once it is re-parented it asks itself to shut
    down gracefully (SIGTERM: in-flight requests finish, leases are released) and, if that has
    not happened within the grace period, exits."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(ORPHAN_GRACE_SECONDS)
        os._exit(1)

    thread = threading.Thread(target=watch, name="parent-watch", daemon=True)
    thread.start()
    return thread


def process_count(requested: int | None, *, shared_broker: bool, cpus: int | None) -> int:
    """``--processes``: default one per core when a shared broker (Redis) carries events
    between processes; with the in-process broker a second process would never see the
    first one's events, so it is refused."""
    if requested is None:
        return max(1, cpus or 1) if shared_broker else 1
    if requested < 1:
        raise ValueError("--processes must be at least 1")
    if requested > 1 and not shared_broker:
        raise ValueError(
            "--processes above 1 needs DEALROOM_REDIS_URL: the in-process broker cannot carry "
            "events between processes"
        )
    return requested
