"""The Starlette application: /graphql (HTTP, websockets, GraphiQL), /health, /metrics and
the web client's pages (``webapp``)."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator
from typing import Any, TypedDict

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL

from dealroom.agents.models.base import ModelClient
from dealroom.config import Settings
from dealroom.gc_tuning import refreeze_when_settled, sweep_young
from dealroom.health import Readiness
from dealroom.http_graphql import GraphQLHttp
from dealroom.jobs.notify_delivery import NotifyWorker
from dealroom.jobs.webhook_delivery import WebhookWorker
from dealroom.jobs.wiring import (
    create_model_client,
    create_payment_provider,
    create_runner,
)
from dealroom.ops_export import ops_export_routes
from dealroom.persisted_queries import PersistedQueries
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker, open_pool
from dealroom.realtime import Broker, create_broker
from dealroom.request_limits import (
    BodyLimit,
    RequestRejected,
    decode_json,
    send_rejection,
)
from dealroom.resolvers.payments import stripe_webhook
from dealroom.schema.build import create_schema
from dealroom.schema.context import AppState, Context
from dealroom.services.clock import Clock, SystemClock
from dealroom.services.live.admission import Admission, slots_for
from dealroom.services.live.heartbeats import Heartbeats
from dealroom.services.live.rechecks import Rechecks
from dealroom.services.offers.provider import PaymentProvider
from dealroom.services.offers.stripe_provider import StripeProvider
from dealroom.services.ops import metrics
from dealroom.unsubscribe import unsubscribe_routes
from dealroom.webapp import graphiql_page, web_routes
from dealroom.ws_graphql import LegacyWSHandler, TransportWSHandler

GRAPHQL_PATH = "/graphql"

CORS_HEADERS = (
    "authorization",
    "content-type",
    "accept",
    "x-guest-key",
    "x-act-as",
    # Apollo Client's client awareness and CSRF-prevention headers.
    "apollographql-client-name",
    "apollographql-client-version",
    "apollo-require-preflight",
    "x-apollo-operation-name",
    # urql sends only accept and content-type; graphql-ws and GraphiQL nothing more.
)
"""Request headers cross-origin pages may send (``DEALROOM_CORS_ALLOW_HEADERS`` adds more)."""

CONTEXTS = "dealroom.contexts"

log = structlog.get_logger(__name__)


class _WithoutStrawberryOriginAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Rejected WebSocket connection from origin")


logging.getLogger("strawberry.ws").addFilter(_WithoutStrawberryOriginAdvice())


class DealroomApp(Starlette):
    """The Starlette app, with the GraphQL websocket handed straight to its view (through the
    message-size bound) instead of through the middleware stack and the router.

    A socket's ASGI call chain lives as long as the socket: one suspended coroutine per layer
    (Starlette's error and exception middleware, the router, the route). With thousands of
    subscriptions held that is thousands of each, memory spent per subscription for nothing: none
    of those layers acts on a websocket here (CORS and the error pages are HTTP's; the view needs
    no path parameters). Everything else goes the usual way. Middleware added to the app does not
    see these sockets: what a GraphQL websocket needs goes in the view or in ``graphql_socket``."""

    def __init__(self, graphql_socket: ASGIApp, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._graphql_socket = graphql_socket

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == GRAPHQL_PATH:
            scope["app"] = self
            await self._graphql_socket(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


class GraphQLView(GraphQL[Context, None]):
    """strawberry's ASGI view with our typed context; each request's unit of work is closed
    when the request (or the websocket) ends, so no connection outlives its use."""

    graphql_transport_ws_handler_class = TransportWSHandler
    graphql_ws_handler_class = LegacyWSHandler

    def __init__(self, state: AppState) -> None:
        super().__init__(
            create_schema(state.settings),
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL),
            max_subscriptions_per_connection=100,
            # Cross-site pages could otherwise open a websocket with the user's cookies.
            allowed_origins=state.settings.cors_origin_list,
        )
        self.state = state

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        context = Context(self.state, request, response if isinstance(response, Response) else None)
        request.scope.setdefault(CONTEXTS, []).append(context)
        return context

    def is_websocket_origin_allowed(self, request: WebSocket, origin: str) -> bool:
        """Cross-origin websocket handshakes: the configured origins only. A refusal names
        the setting that would allow it (strawberry's own warning names its constructor
        argument, which no operator of ours can set, and is filtered out)."""
        if super().is_websocket_origin_allowed(request, origin):
            return True
        log.warning(
            "websocket_origin_refused",
            origin=origin,
            host=request.headers.get("host"),
            hint="add the origin to DEALROOM_CORS_ORIGINS (comma-separated) to allow its pages",
        )
        return False

    def decode_json(self, data: str | bytes) -> object:
        """Every websocket frame: nesting and size bounded before decoding (a frame over
        them is closed 4400 as invalid JSON by the protocol handler). HTTP requests are
        http_graphql's."""
        settings = self.state.settings
        return decode_json(data, settings.max_json_depth, settings.max_json_items)

    async def render_graphql_ide(self, request: Request) -> Response:
        """Unused: HTTP requests (GraphiQL's page too) are http_graphql's."""
        return graphiql_page()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except RequestRejected as rejected:
            await send_rejection(send, rejected)
        finally:
            # Taken out of the scope: the list would keep a cycle (scope -> contexts -> request
            # -> scope) that only the garbage collector frees, and every request's objects
            # with it; without it reference counting frees them as the request ends.
            for context in scope.pop(CONTEXTS, ()):
                if "unit" in vars(context):  # made only if the request used the database
                    await context.unit.close()


class State(TypedDict):
    app_state: AppState


def create_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    engine: AsyncEngine | None = None,
    broker: Broker | None = None,
    model: ModelClient | None = None,
    payments: PaymentProvider | None = None,
) -> Starlette:
    """Build the app. Tests may hand in their own engine, broker, clock and model client
    (the edges)."""
    settings = settings or Settings()
    own_engine = engine is None
    engine = engine or create_engine(settings.resolved_database_url)
    own_broker = broker is None
    broker = broker or create_broker(settings.redis_url)
    own_model = model is None
    model = model or create_model_client(settings)
    sessionmaker = create_sessionmaker(engine)
    clock = clock or SystemClock()
    own_payments = payments is None
    payments = payments or create_payment_provider(settings, clock)
    state = AppState(
        settings=settings,
        sessionmaker=sessionmaker,
        broker=broker,
        clock=clock,
        runner=create_runner(settings, sessionmaker, broker, clock, model, payments),
        payments=payments,
        admission=Admission(
            slots_for(engine, settings.subscription_start_slots),
            settings.subscription_start_wait_seconds,
        ),
        rechecks=Rechecks(
            sessionmaker, clock, settings.subscription_recheck_seconds, broker=broker
        ),
        heartbeats=Heartbeats(sessionmaker, settings.subscription_heartbeat_seconds),
    )
    view = GraphQLView(state)
    http_view = GraphQLHttp(
        state,
        view.schema,  # type: ignore[arg-type]  # create_schema builds a strawberry.Schema
        PersistedQueries(
            settings.persisted_queries,
            settings.max_query_chars,
            view.schema.trusted,  # type: ignore[attr-defined]  # schema.build.Schema's
        ),
        graphiql_page() if settings.graphiql else None,
    )
    webhook_worker = WebhookWorker(settings, sessionmaker, broker, clock)
    notify_worker = NotifyWorker(settings, sessionmaker, broker, clock)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[State]:
        if own_broker:
            await broker.start()
        if own_engine:
            await open_pool(engine, settings.database_connections_at_start)
        await state.runner.start()
        await webhook_worker.start()
        if settings.notify_workers:
            await notify_worker.start()
        # Out of the collector's way once a subscribe burst is over (a no-op unless frozen).
        settler = asyncio.create_task(refreeze_when_settled())
        sweeper = asyncio.create_task(sweep_young())
        state.rechecks.start()
        state.heartbeats.start()
        try:
            yield {"app_state": state}
        finally:
            await state.heartbeats.close()
            await state.rechecks.close()
            for collector_task in (settler, sweeper):
                collector_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await collector_task
            await webhook_worker.close()
            await notify_worker.close()
            await state.runner.close()
            if own_model:
                await model.close()
            if own_payments and isinstance(payments, StripeProvider):
                await payments.close()  # its HTTP client's pooled connections to Stripe
            if own_broker:
                await broker.close()
            if own_engine:
                await engine.dispose()

    async def live(_request: Request) -> Response:
        """Liveness: the process serves requests (restart it if this stops answering)."""
        return JSONResponse({"status": "ok"})

    health = Readiness(engine, broker)

    async def ready(_request: Request) -> Response:
        """Readiness: the database and broker answer and the schema is at the Alembic head
        (send no traffic here until it is 200)."""
        checks = await health.check()
        ok = all(value == "ok" for value in checks.values())
        body = {"status": "ok" if ok else "unavailable", "checks": checks}
        return JSONResponse(body, status_code=200 if ok else 503)

    async def metrics_page(request: Request) -> Response:
        """Prometheus text format (README "Metrics")."""
        token = settings.metrics_token
        presented = request.headers.get("authorization", "")
        if token and not hmac.compare_digest(presented.encode(), f"Bearer {token}".encode()):
            return Response("unauthorized", status_code=401)
        db = Db(sessionmaker)
        try:
            await metrics.refresh(db)
        finally:
            await db.close()
        return Response(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)

    middleware = []
    if settings.cors_origin_list:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=settings.cors_origin_list,
                allow_credentials=True,
                allow_methods=["GET", "POST"],
                allow_headers=[*CORS_HEADERS, *settings.cors_allow_header_list],
                max_age=settings.cors_max_age,
            )
        )
    middleware.append(
        Middleware(
            BodyLimit,
            max_bytes=settings.max_request_bytes,
            body_timeout=settings.http_body_timeout,
        )
    )
    app = DealroomApp(
        BodyLimit(view, max_bytes=settings.max_request_bytes),
        debug=settings.debug,
        middleware=middleware,
        routes=[
            Route("/health", ready),
            Route("/health/ready", ready),
            Route("/health/live", live),
            Route("/metrics", metrics_page),
            Route("/webhooks/stripe", stripe_webhook, methods=["POST"]),
            Route(GRAPHQL_PATH, http_view),  # every method: it answers 405 itself, coded
            # Reached only when DealroomApp's shortcut is not taken (a --root-path mount);
            # the route table lists every path either way.
            WebSocketRoute(GRAPHQL_PATH, view),
            *unsubscribe_routes(state),
            *ops_export_routes(state),
            *web_routes(state),
        ],
        lifespan=lifespan,
    )
    app.state.dealroom = state  # tests and benchmarks reach the runner through it
    app.state.webhook_worker = webhook_worker
    app.state.notify_worker = notify_worker
    return app
