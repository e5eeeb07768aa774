"""CORS for pages on other origins (DEALROOM_CORS_ORIGINS): the headers Apollo Client and urql
send are allowed by default, more can be added (DEALROOM_CORS_ALLOW_HEADERS), credentials ride,
and a preflight's answer may be cached (DEALROOM_CORS_MAX_AGE). The last tests are Chromium
itself, on a page served from another origin, doing credentialed preflighted requests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from dealroom.config import Settings
from dealroom.realtime import Broker
from dealroom.server import BackgroundServer, start_in_background
from tests.conftest import Server, serving
from tests.support.clock import ManualClock

APOLLO_HEADERS = "content-type, apollographql-client-name, apollographql-client-version"


@pytest.fixture
async def page_origin() -> AsyncIterator[str]:
    """Another origin (another loopback port) serving an empty page the browser runs code in."""

    async def page(_request: Request) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>partner app</title><body>partner app</body>")

    running: BackgroundServer = await start_in_background(Starlette(routes=[Route("/", page)]))
    try:
        yield f"http://127.0.0.1:{running.port}"
    finally:
        await running.stop()


@pytest.fixture
async def cors_server(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    page_origin: str,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Server]:
    extra: dict[str, Any] = getattr(request, "param", {})
    changed = settings.model_copy(update={"cors_origins": page_origin, **extra})
    async with serving(changed, engine, broker, clock) as running:
        yield running


def preflight(origin: str, headers: str) -> dict[str, str]:
    return {
        "origin": origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": headers,
    }


async def test_a_preflight_allows_apollos_headers_with_credentials_and_a_max_age(
    cors_server: Server, page_origin: str
) -> None:
    response = await cors_server.client().http.options(
        "/graphql", headers=preflight(page_origin, APOLLO_HEADERS + ", authorization, accept")
    )

    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == page_origin
    assert response.headers["access-control-allow-credentials"] == "true"
    assert response.headers["access-control-max-age"] == "600"
    allowed = {h.strip() for h in response.headers["access-control-allow-headers"].split(",")}
    assert {"apollographql-client-name", "apollographql-client-version", "x-guest-key"} <= allowed


async def test_a_header_outside_the_list_is_refused(cors_server: Server, page_origin: str) -> None:
    response = await cors_server.client().http.options(
        "/graphql", headers=preflight(page_origin, "content-type, x-tenant")
    )

    assert response.status_code == 400


@pytest.mark.parametrize(
    "cors_server", [{"cors_allow_headers": "X-Tenant, x-trace", "cors_max_age": 60}], indirect=True
)
async def test_the_setting_adds_headers_and_sets_the_max_age(
    cors_server: Server, page_origin: str
) -> None:
    response = await cors_server.client().http.options(
        "/graphql", headers=preflight(page_origin, "content-type, x-tenant, x-trace")
    )

    assert response.status_code == 200
    assert response.headers["access-control-max-age"] == "60"


async def test_another_origin_is_not_answered_with_cors_headers(
    cors_server: Server,
) -> None:
    response = await cors_server.client().http.options(
        "/graphql", headers=preflight("http://127.0.0.1:9", "content-type")
    )

    assert response.status_code == 400
    assert "access-control-allow-origin" not in response.headers


# --- Chromium -----------------------------------------------------------------------------------

CALL = """async ([url, query, variables, headers]) => {
  try {
    const response = await fetch(url, {
      method: "POST",
      credentials: "include",
      headers: { "content-type": "application/json",
                 accept: "application/graphql-response+json", ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    return { failed: String(error) };
  }
}"""
SIGN_UP = """mutation($input: SignUpInput!) { signUp(input: $input) { account { handle } } }"""
APOLLO = {"apollographql-client-name": "partner-web", "apollographql-client-version": "2.1"}


async def call_from_page(
    browser: Browser, page_origin: str, api: str, *steps: tuple[str, dict[str, Any], dict[str, str]]
) -> list[dict[str, Any]]:
    """Run each (query, variables, extra headers) with fetch() from a page on ``page_origin``,
    in one browser context (one cookie jar)."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(page_origin + "/")
        results = []
        for query, variables, headers in steps:
            results.append(await page.evaluate(CALL, [api, query, variables, headers]))
        return results
    finally:
        await context.close()


async def test_chromium_on_another_origin_signs_in_and_reads_with_its_cookie(
    browser: Browser, cors_server: Server, page_origin: str
) -> None:
    """Apollo's client-awareness headers make every request preflighted; the session cookie
    set by the cross-origin signUp rides on the next request (credentials: "include")."""
    variables = {
        "input": {
            "email": "partner@example.com",
            "password": "correct horse battery",
            "handle": "partnerweb",
            "displayName": "Partner Web",
        }
    }

    signed, me = await call_from_page(
        browser,
        page_origin,
        f"{cors_server.base_url}/graphql",
        (SIGN_UP, variables, APOLLO),
        ("{ me { handle } }", {}, APOLLO),
    )

    assert signed["status"] == 200, signed
    assert me == {"status": 200, "body": {"data": {"me": {"handle": "partnerweb"}}}}


async def test_chromium_is_refused_a_header_the_server_does_not_allow(
    browser: Browser, cors_server: Server, page_origin: str
) -> None:
    [refused] = await call_from_page(
        browser,
        page_origin,
        f"{cors_server.base_url}/graphql",
        ("{ __typename }", {}, {"x-tenant": "acme"}),
    )

    assert "failed" in refused, json.dumps(refused)
