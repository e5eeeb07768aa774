"""GraphiQL with no network beyond this server: it renders its editor from the server's own
files, runs a query over HTTP and a subscription over the server's websocket."""

from __future__ import annotations

from playwright.async_api import Page, WebSocket

from tests.browser.conftest import NewContext, Offline
from tests.conftest import Server


async def _run(page: Page, document: str) -> str:
    editor = page.locator(".graphiql-query-editor .CodeMirror").first
    await editor.click()
    await page.keyboard.press("Control+A")
    await page.keyboard.press("Delete")
    await page.keyboard.insert_text(document)
    # GraphiQL re-parses the editor 100 ms after the last edit (debounced); only then does it
    # know the operation is a subscription and send it over the websocket. A person is slower.
    await page.wait_for_timeout(400)
    await page.locator(".graphiql-execute-button").click()
    response = page.locator(".graphiql-response")
    await response.get_by_text('"data"').or_(response.get_by_text('"errors"')).first.wait_for()
    return await response.inner_text()


async def test_graphiql_works_with_the_network_blocked(
    server: Server, new_context: NewContext, offline: Offline
) -> None:
    page = await (await new_context()).new_page()
    sockets: list[WebSocket] = []
    page.on("websocket", lambda socket: sockets.append(socket))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    await page.goto(f"{server.base_url}/graphql")
    await page.locator(".graphiql-query-editor .CodeMirror").first.wait_for()

    answer = await _run(page, "{ __typename }")
    assert '"__typename": "Query"' in answer
    # A subscription goes over this server's websocket (graphql-transport-ws) and its answer
    # comes back into the result pane: here the server's refusal of a malformed room id.
    answer = await _run(
        page, 'subscription Watch { paneEvents(roomId: "nope", seat: HOST) { __typename } }'
    )
    assert "BAD_USER_INPUT" in answer
    assert [s.url for s in sockets] == [server.ws_url]
    assert errors == []
    assert offline.blocked == [], offline.blocked
