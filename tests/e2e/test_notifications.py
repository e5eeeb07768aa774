"""Notifications end to end, over HTTP with a real SMTP server on loopback: a brand's request
that needs the host fetches the host by email with a deep link that works; the host's answer
reaches the brand's pane and the brand's inbox; the emails carry no private value."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain import firewall
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Notification
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import Client, post, sign_up
from tests.support.mailbox import Mailbox, mailbox
from tests.support.offers import negotiate_to_offer, open_deal, settle
from tests.support.partners import make_operator
from tests.support.rooms import room_memory
from tests.support.turns import messages_in

ASK = "Could you do a reel for $3,000?"
"""No rate is recorded for a reel: the host's agent must put it to its principal."""


STAGE_LABEL = re.compile("|".join(stage.value for stage in Stage))


async def notifications_of(db: Db, handle: str) -> list[Notification]:
    try:
        return list(
            await db.scalars(
                select(Notification)
                .join(Account, Account.id == Notification.account_id)
                .where(Account.handle == handle)
            )
        )
    finally:
        await db.close()


@pytest.fixture
def box() -> Iterator[Mailbox]:
    with mailbox() as running:
        yield running


@pytest.fixture
async def mail_server(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock, box: Mailbox
) -> AsyncIterator[Server]:
    tuned = settings.model_copy(
        update={
            "workers": 2,
            "worker_poll_seconds": 0.05,
            "notify_workers": 1,
            "notify_poll_seconds": 0.05,
            "smtp_url": box.url,
            "public_url": "http://deals.test",
        }
    )
    async with serving(tuned, engine, broker, clock) as running:
        yield running


def deep_link(text: str) -> str:
    found = re.search(r"Open the room: (\S+)", text)
    assert found is not None, text
    return found.group(1)


async def test_a_request_that_needs_the_host_fetches_the_host_once_and_the_answer_reaches_the_brand(
    mail_server: Server, box: Mailbox, db: Db
) -> None:
    deal = await open_deal(mail_server)
    await post(deal.visitor, deal.room_id, ASK)
    await settle(mail_server)
    (email,) = await box.wait_for(1)
    assert email.recipients == ["devraman@example.com"]
    assert email.subject == "Acme Brand asked something only you can decide"
    assert "reel" in email.text  # the host may read its own pane's question
    link = deep_link(email.text)
    assert link == f"http://deals.test/r/{deal.room_id}"
    # the link works: the host app serves that room's page, and the host reads that room
    path = urlsplit(link).path
    page = await deal.host.http.get(path, headers=deal.host.headers)
    assert page.status_code == 200
    assert "<html" in page.text.lower()
    room = await deal.host.query("query($id: ID!) { room(id: $id) { id } }", {"id": deal.room_id})
    assert room["room"]["id"] == deal.room_id
    await settle(mail_server)
    assert len(box.received) == 1  # exactly one

    # The host answers in that room; the brand's pane hears it, and the brand's inbox too.
    before = len(await messages_in(db, deal.room_id, Seat.VISITOR.value))
    await post(deal.host, deal.room_id, "Yes, take it.")
    await settle(mail_server)
    after = await messages_in(db, deal.room_id, Seat.VISITOR.value)
    assert len(after) > before
    emails = await box.wait_for(2)
    brand = [e for e in emails if e.recipients == ["acmebrand@example.com"]]
    assert len(brand) == 1
    assert deep_link(brand[0].text) == f"http://deals.test/z/devraman/{deal.room_id}"
    assert "answered" in brand[0].subject


async def test_no_email_to_the_brand_states_a_private_value_or_a_stage_label(
    mail_server: Server, box: Mailbox, db: Db
) -> None:
    """The canary over the emails as the SMTP server received them: the host's floor ($6,000)
    and private term, checked by the firewall itself against the room's memory, and no stage
    label, in any subject, plain part or HTML part the brand was sent."""
    deal = await open_deal(mail_server)
    await post(deal.visitor, deal.room_id, ASK)
    await settle(mail_server)
    await post(deal.host, deal.room_id, "Yes, take it.")
    await settle(mail_server)
    offer_id = await negotiate_to_offer(mail_server, deal)
    assert offer_id
    await settle(mail_server)
    # the offer's news waits out the coalescing window after the "answered" email
    mail_server.clock.advance(timedelta(minutes=16))
    emails = await box.wait_for(3)
    brand = [e for e in emails if e.recipients == ["acmebrand@example.com"]]
    assert brand, [e.subject for e in emails]
    memory = await room_memory(db, deal.room_id)
    assert firewall.check(memory, "never below $6,000"), "the canary is planted"
    for email in brand:
        for text in email.readable():
            assert firewall.check(memory, text) == [], text
            assert "6,000" not in text
            assert "6000" not in text
            assert not STAGE_LABEL.search(text), text
    # the in-app rows the brand reads passed the same screen
    rows = await notifications_of(db, "acmebrand")
    assert rows
    for row in rows:
        assert firewall.check(memory, row.title, row.body) == []


LIST = "{ notifications(first: 20) { nodes { kind title body } unreadCount } }"


async def _kinds(client: Client) -> list[str]:
    data = await client.query(LIST)
    return [n["kind"] for n in data["notifications"]["nodes"]]


async def test_a_waiting_principal_is_reminded_once_then_escalated_honestly(
    mail_server: Server, box: Mailbox, db: Db
) -> None:
    operator = await make_operator(db, mail_server.client(), "opsdesk")
    deal = await open_deal(mail_server)
    await post(deal.visitor, deal.room_id, ASK)
    await settle(mail_server)
    await box.wait_for(1)  # the decision
    settings = mail_server.state.settings
    # Before the first window nothing fires.
    mail_server.clock.advance(timedelta(hours=settings.remind_after_hours - 1))
    await mail_server.runner.sweep()
    assert "REMINDER" not in await _kinds(deal.host)
    # The first window: the host is reminded, once, however often the timers look.
    mail_server.clock.advance(timedelta(hours=1, minutes=1))
    await mail_server.runner.sweep()
    await mail_server.runner.sweep()
    reminders = [k for k in await _kinds(deal.host) if k == "REMINDER"]
    assert reminders == ["REMINDER"]
    emails = await box.wait_for(2)
    assert emails[1].recipients == ["devraman@example.com"]
    assert emails[1].subject.startswith("Still waiting for you")
    visitor_lines = len(await messages_in(db, deal.room_id, Seat.VISITOR.value))
    # The second window: the brand's own agent tells it the truth, in its pane and by email;
    # operators are alerted, and only operators see the alert.
    mail_server.clock.advance(
        timedelta(hours=settings.escalate_after_hours - settings.remind_after_hours)
    )
    await mail_server.runner.sweep()
    await settle(mail_server)
    await mail_server.runner.sweep()
    lines = await messages_in(db, deal.room_id, Seat.VISITOR.value)
    assert len(lines) == visitor_lines + 1
    said = lines[-1].body.lower()
    assert "not answered yet" in said or "hasn't answered" in said or "has not" in said, said
    assert "ESCALATION" in await _kinds(deal.visitor)
    assert "OPERATOR_ALERT" in await _kinds(operator)
    assert "OPERATOR_ALERT" not in await _kinds(deal.host)
    assert "OPERATOR_ALERT" not in await _kinds(deal.visitor)
    brand = [e for e in await box.wait_for(3) if e.recipients == ["acmebrand@example.com"]]
    assert [e.subject for e in brand] == ["Still waiting on Dev Raman"]
    assert "you will hear it here and by email" in brand[0].text
    # nothing fires twice
    mail_server.clock.advance(timedelta(days=3))
    await mail_server.runner.sweep()
    await settle(mail_server)
    assert len(await messages_in(db, deal.room_id, Seat.VISITOR.value)) == len(lines)


async def test_an_answered_decision_cancels_its_reminder(
    mail_server: Server, box: Mailbox, db: Db
) -> None:
    deal = await open_deal(mail_server)
    await post(deal.visitor, deal.room_id, ASK)
    await settle(mail_server)
    await box.wait_for(1)
    await post(deal.host, deal.room_id, "Yes, take it.")
    await settle(mail_server)
    mail_server.clock.advance(timedelta(hours=48))
    await mail_server.runner.sweep()
    await settle(mail_server)
    kinds = await _kinds(deal.host)
    assert "REMINDER" not in kinds
    assert "ESCALATION" not in await _kinds(deal.visitor)
    waits = await notifications_of(db, "devraman")
    assert [w.wait_state for w in waits if w.kind == "decision"] == ["settled"]


INVITE = """
mutation($roomId: ID!, $email: String!) {
  inviteToRoom(roomId: $roomId, email: $email) { link }
}
"""
JOIN = "mutation($token: String!) { acceptInvitation(token: $token) { id readerSeat } }"


async def test_an_invitation_to_an_address_with_no_account_reaches_that_inbox_and_joins(
    mail_server: Server, box: Mailbox, db: Db
) -> None:
    """The brand invites a colleague who has no account: the colleague's inbox gets the link
    (no account, so no list to leave), and the link joins the brand's side once the colleague
    signs up with that address. (That such an email passes the exit screen is
    tests/services/test_invitations.py's: here its text holds nothing the screen would catch.)"""
    deal = await open_deal(mail_server)
    invited = await deal.visitor.query(
        INVITE, {"roomId": deal.room_id, "email": "Legal@Example.com"}
    )
    link = invited["inviteToRoom"]["link"]
    (email,) = await box.wait_for(1)
    assert email.recipients == ["legal@example.com"]
    assert email.subject.startswith("Acme Brand invited you to")
    assert deep_link(email.text) == link
    assert email.text.splitlines()[0] == "Hello,"
    assert email.message["List-Unsubscribe"] is None
    assert "Stop these emails" not in email.text + email.html
    await settle(mail_server)
    assert len(box.received) == 1  # exactly one, and nothing kept for a missing account

    colleague = mail_server.client()
    await sign_up(colleague, "legal")
    joined = await colleague.query(JOIN, {"token": link.rsplit("/invite/", 1)[1]})
    assert joined["acceptInvitation"] == {"id": deal.room_id, "readerSeat": "VISITOR"}
