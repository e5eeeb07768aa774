"""What a person does in the web client, as Playwright steps."""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import Locator, Page

from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from tests.support.turns import messages_in


def own_pane(page: Page) -> Locator:
    return page.locator(".pane.own")


async def say(page: Page, text: str) -> None:
    """Type into one's own pane and press Enter (keyboard send); returns once the composer
    has emptied, i.e. postMessage returned and the line (and its turn) is stored."""
    box = own_pane(page).get_by_role("textbox", name="Message", exact=True)
    await box.fill(text)
    await box.press("Enter")

    async def sent() -> bool:
        return await box.input_value() == ""

    await until(sent, f"{text!r} to be sent")


async def until(check: object, what: str, timeout: float = 30) -> None:
    """Poll an async predicate (the pages' CSP forbids Playwright's string predicates)."""
    deadline = time.monotonic() + timeout
    while True:
        if await check():  # type: ignore[operator]
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


async def shown_ids(pane: Locator) -> list[str]:
    ids = await pane.locator("[data-message-id]").evaluate_all(
        "els => els.map(e => e.dataset.messageId)"
    )
    return [str(i) for i in ids]


async def stored_ids(db: Db, room_id: str, seat: Seat) -> list[str]:
    return [str(m.id) for m in await messages_in(db, room_id, seat.value)]


async def shows_the_stored_pane(pane: Locator, db: Db, room_id: str, seat: Seat) -> None:
    """The pane shows exactly the stored messages, in order: none lost, none doubled."""

    async def same() -> bool:
        return await shown_ids(pane) == await stored_ids(db, room_id, seat)

    await until(same, f"the {seat} pane to show every stored message once")


async def stage_of(page: Page) -> str | None:
    return await page.locator(".offer .stage").first.get_attribute("data-stage")


async def reaches_stage(page: Page, stage: str, timeout: float = 30) -> None:
    async def there() -> bool:
        return await page.locator(".offer .stage").count() > 0 and await stage_of(page) == stage

    await until(there, f"offer stage {stage}", timeout)


def gate(page: Page) -> Locator:
    return page.get_by_role("region", name="Sign in to continue")


async def gate_is_up(page: Page) -> None:
    await gate(page).wait_for()
    await gate(page).get_by_text("The agent is waiting to share an update").wait_for()


async def sign_up_in_gate(page: Page, handle: str, name: str) -> None:
    """Sign up in the room's gate (the guest cookie goes with it: the server claims the room);
    returns once the gate is down and the page says who is signed in."""
    form = gate(page)
    await form.get_by_role("tab", name="Sign up").click()
    await form.get_by_label("Email").fill(f"{handle}@example.com")
    await form.get_by_label("Password").fill("a-long-password")
    await form.get_by_label("Your name or brand").fill(name)
    await form.get_by_label("Handle").fill(handle)
    await form.get_by_role("button", name="Create account and continue").click()
    try:
        await page.get_by_text(f"Signed in as @{handle}").wait_for()
    except Exception as error:
        shown = await page.locator("body").inner_text()
        raise AssertionError(f"not signed in; the page shows:\n{shown}") from error
    await gate(page).wait_for(state="detached")
