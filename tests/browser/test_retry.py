"""A turn the agent could not answer, as the page shows it: the notices of the agent retrying by
itself carry no button, and what the failed attempts had streamed does not stay on screen; the
line of the turn that failed for good offers "Try again", which re-runs the turn (retryTurn) —
and once the reply is there, no line offers it any more."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dealroom.persistence.db import Db
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext
from tests.browser.support import own_pane, say, until
from tests.conftest import Server
from tests.support.flaky import FlakyModel


@pytest.fixture
def model() -> FlakyModel:
    return FlakyModel(failures=99)


async def test_try_again_is_offered_on_the_failed_turn_only_and_brings_the_reply(
    agent_server: Server, db: Db, new_context: NewContext, model: FlakyModel
) -> None:
    server = agent_server
    await server.seed_demo(db)
    page = await (await new_context(PHONE)).new_page()
    await page.goto(f"{server.base_url}/z/{demo.HANDLE}")
    pane = own_pane(page)
    await pane.get_by_role("textbox", name="Message", exact=True).wait_for()
    agent_lines = await pane.locator(".msg.agent").count()  # the demo's greeting

    await say(page, "Hi! Could you do a sponsored post in March?")
    for _ in range(3):  # three attempts, each failing, the runner backing off between them
        await server.settle()
        server.clock.advance(timedelta(minutes=1))
        server.runner.wake()
    await server.settle()

    notices = pane.locator(".msg.system")
    retry = pane.get_by_role("button", name="Try again")

    async def three_notices() -> bool:
        return await notices.count() == 3

    await until(three_notices, "the two retrying notices and the failure line")
    assert "Use retry" in (await notices.nth(2).inner_text())
    # Each failed attempt had streamed a first chunk; none of it stays on screen as a reply.
    assert await pane.locator(".msg.draft").count() == 0
    assert await retry.count() == 1  # on the last line only, the one that failed for good
    assert await notices.nth(2).get_by_role("button", name="Try again").count() == 1

    model.failures = 0  # the model is back
    await retry.click()
    await server.settle()

    async def answered() -> bool:
        return await pane.locator(".msg.agent").count() == agent_lines + 1

    await until(answered, "the agent's reply after Try again")
    assert await retry.count() == 0  # nothing failed follows the reply
