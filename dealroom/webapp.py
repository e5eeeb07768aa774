"""The browser side of the server: the web client's pages and the offline GraphiQL.

Everything here is served from the package (``dealroom/web/``, built by ``make web`` from
``web/`` and committed), so a browser needs nothing but this server's origin. The client
speaks only the public GraphQL API; these routes only hand out its files. ``/z/<handle>``
answers 404 with a friendly page for a handle no account holds.
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from dealroom.domain.validation import HANDLE_RE
from dealroom.persistence.db import Db
from dealroom.persistence.repositories import AccountRepository
from dealroom.schema.context import AppState

WEB_DIR = Path(__file__).parent / "web"

# The shell never goes stale in a browser cache; the bundles revalidate by ETag.
_NO_STORE = {"cache-control": "no-cache"}
# What the pages may load: only this origin (scripts, styles, the API and its websocket),
# plus Stripe.js's origin when the Stripe provider runs.
_CSP = (
    "default-src 'self'; script-src 'self'{scripts}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'{connects}; "
    "frame-src {frames}; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
# Stripe's documented CSP for Stripe.js with Elements and 3-D Secure.
_STRIPE_CONNECT = ("https://api.stripe.com",)
_STRIPE_FRAMES = ("https://js.stripe.com", "https://hooks.stripe.com")


def content_security_policy(stripe_js_url: str | None = None) -> str:
    """The pages' CSP; with ``stripe_js_url``, its origin may serve scripts, frames and API
    calls (Stripe.js's own, or a local stand-in that talks to its own origin)."""
    if stripe_js_url is None:
        return _CSP.format(scripts="", connects="", frames="'self'")
    parts = urlsplit(stripe_js_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    real = origin == "https://js.stripe.com"
    connects = [origin, *(_STRIPE_CONNECT if real else ())]
    frames = dict.fromkeys(["'self'", origin, *(_STRIPE_FRAMES if real else ())])
    return _CSP.format(
        scripts=f" {origin}", connects=" " + " ".join(connects), frames=" ".join(frames)
    )


_PAGE_HEADERS = {**_NO_STORE, "content-security-policy": content_security_policy()}


@cache
def _page(name: str) -> str:
    return (WEB_DIR / name).read_text(encoding="utf-8")


def graphiql_page() -> HTMLResponse:
    """GraphiQL, wired to this server's /graphql over HTTP and its websocket."""
    return HTMLResponse(_page("graphiql.html"), headers=_PAGE_HEADERS)


def _shell(headers: dict[str, str] = _PAGE_HEADERS) -> HTMLResponse:
    return HTMLResponse(_page("index.html"), headers=headers)


def web_routes(state: AppState) -> list[BaseRoute]:
    """``/`` and ``/r/<roomId>`` (the host app), ``/z/<handle>`` and ``/z/<handle>/<roomId>``
    (a visitor), ``/ops``, ``/ops/rooms/<roomId>`` and ``/ops/prompts`` (operators: the page
    is the same shell for anyone; the API refuses a non-operator's ops reads, and the page says
    so), and ``/static`` (the built bundles)."""

    settings = state.settings
    stripe_js = settings.stripe_js_url if settings.payment_provider == "stripe" else None
    csp = content_security_policy(stripe_js)
    headers = {**_NO_STORE, "content-security-policy": csp}

    async def app_page(_request: Request) -> Response:
        return _shell(headers)

    async def visitor_page(request: Request) -> Response:
        handle = str(request.path_params["handle"])
        if not await _handle_exists(state, handle):
            body = _page("not_found.html").replace("{handle}", html.escape(handle))
            return HTMLResponse(body, status_code=404, headers={"content-security-policy": csp})
        return _shell(headers)

    return [
        Route("/", app_page),
        Route("/r/{room_id}", app_page),
        Route("/ops", app_page),
        Route("/ops/rooms/{room_id}", app_page),
        Route("/ops/prompts", app_page),
        Route("/invite/{token}", app_page),
        Route("/z/{handle}", visitor_page),
        Route("/z/{handle}/{room_id}", visitor_page),
        Mount("/static", StaticFiles(directory=WEB_DIR, packages=None), name="static"),
    ]


async def _handle_exists(state: AppState, handle: str) -> bool:
    if not HANDLE_RE.fullmatch(handle.lower()):
        return False
    db = Db(state.sessionmaker)
    try:
        return await AccountRepository(db).by_handle(handle.lower()) is not None
    finally:
        await db.close()
