"""The browser side served by the server itself (no CDN): GraphiQL's files, the web client's
shell at its routes, and the friendly not-found page for an unknown link. What the pages do
in a browser is in tests/browser/."""

from __future__ import annotations

import re

from tests.conftest import Server
from tests.support.graphql import sign_up

ASSET = re.compile(r'(?:src|href)="([^"]+)"')


async def test_graphiql_loads_only_files_of_this_server(server: Server) -> None:
    client = server.client()
    page = await client.http.get("/graphql", headers={"Accept": "text/html"})

    assert page.status_code == 200
    refs = [r for r in ASSET.findall(page.text) if not r.startswith("data:")]
    assert refs, page.text
    for ref in refs:
        assert ref.startswith("/static/graphiql/"), f"{ref} is not served by this server"
        asset = await client.http.get(ref)
        assert asset.status_code == 200, ref
        assert len(asset.content) > 10_000, ref  # the built bundle, not a stub
    assert "default-src 'self'" in page.headers["content-security-policy"]


async def test_graphiql_bundle_carries_the_websocket_client(server: Server) -> None:
    """Subscriptions in GraphiQL go over graphql-transport-ws to this origin's /graphql."""
    bundle = await server.client().http.get("/static/graphiql/graphiql.js")

    assert "graphql-transport-ws" in bundle.text
    assert "unpkg.com" not in bundle.text
    assert "esm.sh" not in bundle.text


async def test_the_web_client_shell_is_served_at_its_routes(server: Server) -> None:
    client = server.client()
    await sign_up(client, "devraman", "Dev Raman")

    for path in ("/", "/r/any-room", "/z/devraman", "/z/devraman/any-room", "/z/DevRaman"):
        page = await client.http.get(path)
        assert page.status_code == 200, path
        assert '<script src="/static/assets/app.js">' in page.text, path
    app = await client.http.get("/static/assets/app.js")
    assert app.status_code == 200
    assert "javascript" in app.headers["content-type"]


async def test_an_unknown_link_gets_a_friendly_not_found_page(server: Server) -> None:
    client = server.client()

    for handle in ("nobody-here", "x", "<script>alert(1)</script>"):
        page = await client.http.get(f"/z/{handle}")
        assert page.status_code == 404, handle
        assert page.headers["content-type"].startswith("text/html")
        assert "There is no one at this link" in page.text
        assert "<script>alert" not in page.text
    page = await client.http.get("/z/nobody-here")
    assert "<strong>nobody-here</strong>" in page.text
