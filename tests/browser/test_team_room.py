"""A room of three in the browser: the brand invites a colleague from the participants panel
and gets a link; the colleague opens it on a phone, signs up, joins the brand's side, sees only
its own pane and posts there; the host, whose room was open all along, reads all three panes
once its participants panel re-reads the room, the new one headed with the colleague's name;
the brand lets the colleague approve offers; the used link says so; the colleague leaves."""

from __future__ import annotations

from urllib.parse import urlparse

from playwright.async_api import Page

from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.support import own_pane, say, until
from tests.conftest import Server
from tests.support.graphql import Client, open_room, sign_up
from tests.support.rooms import PASSWORD

PEOPLE = "query($id: ID!) { room(id: $id) { participants { key displayName mayApprove } } }"


async def _sign_in(page: Page, base_url: str, handle: str, then: str) -> None:
    await page.goto(f"{base_url}/")
    await page.get_by_label("Email").fill(f"{handle}@example.com")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.locator(".pane.own").wait_for()
    await page.goto(base_url + then)


async def _people(brand: Client, room_id: str) -> dict[str, bool]:
    data = await brand.query(PEOPLE, {"id": room_id})
    return {p["key"]: p["mayApprove"] for p in data["room"]["participants"]}


async def test_a_colleague_joins_by_invitation_and_the_host_reads_every_pane(
    server: Server, new_context: NewContext, offline: Offline
) -> None:
    await sign_up(server.client(), "devraman", "Dev Raman")
    brand_api = server.client()
    await sign_up(brand_api, "acmebrand", "Acme Brand")
    room_id = (await open_room(brand_api, "devraman"))["room"]["id"]

    # The host has the room open before anyone joins: two panes, as ever.
    host = await (await new_context()).new_page()
    await _sign_in(host, server.base_url, "devraman", f"/r/{room_id}")
    await host.locator('.pane.readonly[data-key="visitor"]').wait_for()
    assert await host.locator(".pane").count() == 2
    assert await host.locator(".panes.count-2").count() == 1

    # The brand invites a colleague from the participants panel and gets a link to hand over.
    brand = await (await new_context()).new_page()
    await _sign_in(brand, server.base_url, "acmebrand", f"/z/devraman/{room_id}")
    await brand.get_by_role("button", name="People (2)").click()
    panel = brand.get_by_role("region", name="People in this room")
    await panel.get_by_text("Dev Raman").wait_for()
    await panel.get_by_label("Invite someone to your side").fill("acmebrand@example.com")
    await panel.get_by_role("button", name="Invite", exact=True).click()
    await panel.get_by_role("alert").get_by_text("That is your own email address").wait_for()
    await panel.get_by_label("Invite someone to your side").fill("lee@example.com")
    await panel.get_by_role("button", name="Invite", exact=True).click()
    link_box = panel.get_by_label("Invitation emailed to lee@example.com", exact=False)
    await link_box.wait_for()
    link = urlparse(await link_box.input_value())
    assert link.path.startswith("/invite/"), link
    await panel.get_by_role("button", name="Copy link").wait_for()

    # The colleague opens the link on a phone, signs up there, and lands in the room.
    lee = await (await new_context(PHONE)).new_page()
    await lee.goto(server.base_url + link.path)  # the link names the configured public address
    await lee.get_by_text("You were invited to join a deal room").wait_for()
    await lee.get_by_role("tab", name="Sign up").click()
    await lee.get_by_label("Email").fill("lee@example.com")
    await lee.get_by_label("Password").fill(PASSWORD)
    await lee.get_by_label("Handle").fill("leelegal")
    await lee.get_by_label("Display name").fill("Lee Legal")
    await lee.get_by_role("button", name="Create account").click()
    await lee.wait_for_url(f"**/r/{room_id}")
    # Only its own pane: the brand's conversation is not the colleague's to read.
    await own_pane(lee).get_by_role("textbox", name="Message", exact=True).wait_for()
    assert await lee.locator(".pane").count() == 1
    await say(lee, "Legal here: we need the usage rights limited to 6 months.")

    # The host's open room grows a third pane by itself (its room list hears that someone
    # joined, and the room re-reads who is in it), headed with the colleague's name.
    await host.get_by_role("button", name="People (3)").click()
    await host.get_by_role("region", name="People in this room").get_by_text("Lee Legal").wait_for()
    lees_pane = host.locator('.pane.readonly[data-key="visitor_2"]')
    await lees_pane.get_by_text("usage rights limited to 6 months").wait_for()
    await lees_pane.get_by_role("heading", name="Lee Legal").wait_for()
    assert await host.locator(".pane").count() == 3
    assert await host.locator(".pane.own").count() == 1
    assert await host.locator(".pane.readonly").count() == 2

    # The participants panel on a phone: it opens, lists both sides, and fits the screen.
    await lee.get_by_role("button", name="People (3)").click()
    lee_panel = lee.get_by_role("region", name="People in this room")
    await lee_panel.get_by_role("button", name="Leave the room").wait_for()
    await lee_panel.get_by_label("Invite someone to your side").wait_for()
    assert await lee_panel.get_by_role("button", name="Remove", exact=False).count() == 0
    width = await lee.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    box = await lee_panel.get_by_label("Invite someone to your side").bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= PHONE["width"]

    # The buying account lets its colleague approve offers.
    await brand.get_by_role("button", name="People (2)").click()  # closes
    await brand.get_by_role("button", name="People (2)").click()  # re-reads as it opens
    await panel.get_by_text("Lee Legal").wait_for()
    await panel.get_by_label("May approve").check()

    async def allowed() -> bool:
        return (await _people(brand_api, room_id)).get("visitor_2") is True

    await until(allowed, "the colleague allowed to approve")

    # The link worked once: opened again, by anyone, it says so.
    await host.goto(server.base_url + link.path)
    await host.get_by_role("alert").get_by_text("already used").wait_for()

    # The colleague leaves from the panel (asked to confirm) and is back at its room list.
    await lee_panel.get_by_role("button", name="Leave the room").click()
    await lee_panel.get_by_role("button", name="Yes, leave the room").click()
    await lee.wait_for_url(f"{server.base_url}/")
    assert set(await _people(brand_api, room_id)) == {"host", "visitor"}
    assert offline.blocked == []


async def test_a_room_about_a_service_says_so_in_its_header(
    server: Server, new_context: NewContext, offline: Offline
) -> None:
    """A link naming one of the host's services opens a room about it, and the header says which."""
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    await host.query(
        "mutation($names: [String!]!) { setServices(names: $names) { key } }",
        {"names": ["Sponsored post", "Speaking gig"]},
    )
    page = await (await new_context()).new_page()
    await page.goto(f"{server.base_url}/z/devraman/speaking-gig")
    await page.locator(".room-header .subtitle").get_by_text("Speaking gig").wait_for()
