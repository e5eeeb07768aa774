"""People joining and leaving a room's sides: an invitation adds its bearer to the inviter's
side once, and a refused one changes nothing; removal unbinds the participant and ends its
streams at once; on the buyer's side only the buying account and those it allowed approve a
written offer, and anyone there pays."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents import offer_gen
from dealroom.agents.models.base import AgentName
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.offer_stage import OfferStatus
from dealroom.domain.passwords import OWASP_MINIMUM
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import (
    Account,
    Flag,
    Invitation,
    Notification,
    Offer,
    Participant,
    Room,
)
from dealroom.realtime.broker import Broker
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.identity import Credentials, Identity, new_guest_key
from dealroom.services.accounts.passwords import passwords_for
from dealroom.services.live.rechecks import Held, Outcome, Rechecks
from dealroom.services.offers import actions, payments
from dealroom.services.offers.draw import draw
from dealroom.services.offers.provider import TestPaymentProvider
from dealroom.services.rooms import invitations
from dealroom.services.rooms import service as rooms
from dealroom.services.turns.context import RunSnapshot
from tests.support.clock import ManualClock
from tests.support.factories import AGREED
from tests.support.recording import write_room_memory

PASSWORD = "correct horse battery"


class Deal:
    """A host, the buying account that opened a room with it, and the room."""

    def __init__(self, host: Identity, buyer: Identity, room: Room) -> None:
        self.host = host
        self.buyer = buyer
        self.room = room


async def account(db: Db, clock: ManualClock, handle: str) -> tuple[Identity, str]:
    """A signed-up account's identity and its session token."""
    signed = await accounts.sign_up(
        db,
        clock,
        passwords_for(OWASP_MINIMUM),
        email=f"{handle}@example.com",
        password=PASSWORD,
        handle=handle,
        display_name=handle.title(),
        ttl_days=1,
    )
    await db.commit()
    db.session.expunge(signed.account)  # a test's rollback must not expire what it holds
    return Identity(signed_in=signed.account, account=signed.account, guest_key=None), signed.token


async def deal(db: Db, clock: ManualClock, host_handle: str = "talent") -> Deal:
    host, _ = await account(db, clock, host_handle)
    buyer, _ = await account(db, clock, "brand")
    opened = await rooms.open_visitor_room(
        db, clock, buyer, handle=host_handle, new_conversation=False, greet=False
    )
    await db.commit()
    db.session.expunge(opened.room)
    return Deal(host, buyer, opened.room)


async def refused(db: Db, call: Awaitable[Any]) -> DomainError:
    """The coded error ``call`` raises; its unit is rolled back, as a request's is."""
    with pytest.raises(DomainError) as raised:
        await call
    await db.rollback()
    return raised.value


async def invite(
    db: Db, broker: Broker, clock: ManualClock, who: Identity, room: Room, email: str, **kw: Any
) -> invitations.Issued:
    issued = await invitations.invite_to_room(db, broker, clock, who, room.id, email, **kw)
    await db.commit()
    db.session.expunge(issued.invitation)
    return issued


async def accept(
    db: Db, broker: Broker, clock: ManualClock, who: Identity, token: str, **kw: Any
) -> Room:
    room = await invitations.accept_invitation(db, broker, clock, who, token, **kw)
    await db.commit()
    db.session.expunge(room)
    return room


async def panes(db: Db, room: Room) -> dict[str, Participant]:
    try:
        rows = await db.scalars(
            select(Participant)
            .where(Participant.room_id == room.id)
            .execution_options(populate_existing=True)
        )
        found = {p.key: p for p in rows}
        db.session.expunge_all()  # detached: the rollback below leaves them readable
        return found
    finally:
        await db.rollback()


async def stored_invitation(db: Db, invitation_id: uuid.UUID) -> Invitation:
    try:
        row = await db.scalar(
            select(Invitation)
            .where(Invitation.id == invitation_id)
            .execution_options(populate_existing=True)
        )
        assert row is not None
        db.session.expunge(row)
        return row
    finally:
        await db.rollback()


async def test_an_accepted_invitation_adds_a_member_to_the_inviters_side(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d = await deal(db, clock)
    colleague, _ = await account(db, clock, "colleague")
    issued = await invite(
        db, broker, clock, d.buyer, d.room, " Colleague@Example.com ", public_url="https://d.test/"
    )
    assert issued.link == f"https://d.test/invite/{issued.token}"
    assert issued.invitation.side == Seat.VISITOR.value
    assert issued.invitation.email == "colleague@example.com"
    assert issued.invitation.token_hash != issued.token  # only the digest is stored
    assert issued.invitation.expires_at - issued.invitation.created_at == timedelta(days=7)

    await accept(db, broker, clock, colleague, issued.token)
    seats = await panes(db, d.room)
    member = seats["visitor_2"]
    assert colleague.account is not None
    assert member.account_id == colleague.account.id
    assert member.invited_by == seats["visitor"].id
    used = await stored_invitation(db, issued.invitation.id)
    assert used.used_at is not None
    assert used.used_by == colleague.account.id
    view = await rooms.room_for_reader(db, colleague, d.room.id)
    assert (view.reader_seat, view.reader_key) == (Seat.VISITOR, "visitor_2")
    assert view.readable == frozenset({"visitor_2"})  # not the buyer's pane (R3)
    await db.rollback()

    # A second click on the link it used, or a new link to the side it is on: the room,
    # unchanged, and the new link stays unused.
    assert (await accept(db, broker, clock, colleague, issued.token)).id == d.room.id
    again = await invite(db, broker, clock, d.buyer, d.room, "colleague@example.com")
    assert (await accept(db, broker, clock, colleague, again.token)).id == d.room.id
    assert (await stored_invitation(db, again.invitation.id)).used_at is None
    assert set(await panes(db, d.room)) == {"host", "visitor", "visitor_2"}


async def test_the_host_invites_to_the_host_side(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d = await deal(db, clock)
    manager, _ = await account(db, clock, "manager")
    issued = await invite(db, broker, clock, d.host, d.room, "manager@example.com")
    assert issued.invitation.side == Seat.HOST.value
    await accept(db, broker, clock, manager, issued.token)
    view = await rooms.room_for_reader(db, manager, d.room.id)
    assert view.reader_key == "host_2"
    assert view.readable == frozenset({"host", "host_2", "visitor"})  # R2: the host side
    await db.rollback()


async def test_a_host_side_link_admits_only_its_address_and_no_one_seated_as_a_guest(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    """The host's side reads every pane, so its link is not a bearer link: another account
    holding it is refused, and so is the invited address while a guest key it holds still sits
    in the visitor seat."""
    d = await deal(db, clock)
    forwarded = await invite(db, broker, clock, d.host, d.room, "manager@example.com")
    stranger, _ = await account(db, clock, "stranger")
    error = await refused(
        db, invitations.accept_invitation(db, broker, clock, stranger, forwarded.token)
    )
    assert (error.code, error.details["reason"]) == (
        ErrorCode.FORBIDDEN,
        "INVITATION_FOR_ANOTHER_ADDRESS",
    )
    assert (await stored_invitation(db, forwarded.invitation.id)).used_at is None

    guest = Identity(signed_in=None, account=None, guest_key=new_guest_key())
    seated = await rooms.open_visitor_room(
        db, clock, guest, handle="talent", new_conversation=True, greet=False
    )
    await db.commit()
    db.session.expunge(seated.room)  # a refusal's rollback must not expire it
    to_host = await invite(db, broker, clock, d.host, seated.room, "manager@example.com")
    manager, _ = await account(db, clock, "manager")
    both = Identity(signed_in=manager.account, account=manager.account, guest_key=guest.guest_key)
    error = await refused(db, invitations.accept_invitation(db, broker, clock, both, to_host.token))
    assert (error.code, error.details["reason"]) == (ErrorCode.CONFLICT, "ALREADY_ON_OTHER_SIDE")
    assert set(await panes(db, seated.room)) == {"host", "visitor"}

    await accept(db, broker, clock, manager, forwarded.token)  # the address it was sent to
    assert set(await panes(db, d.room)) == {"host", "host_2", "visitor"}


async def test_a_used_expired_or_forged_link_is_refused_and_changes_nothing(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d = await deal(db, clock)
    first, _ = await account(db, clock, "first")
    second, _ = await account(db, clock, "second")
    used = await invite(db, broker, clock, d.buyer, d.room, "first@example.com")
    await accept(db, broker, clock, first, used.token)
    stale = await invite(db, broker, clock, d.buyer, d.room, "second@example.com")
    before = set(await panes(db, d.room))

    error = await refused(db, invitations.accept_invitation(db, broker, clock, second, used.token))
    assert (error.code, error.details["reason"]) == (ErrorCode.CONFLICT, "INVITATION_USED")

    clock.advance(timedelta(days=7))
    error = await refused(db, invitations.accept_invitation(db, broker, clock, second, stale.token))
    assert (error.code, error.details["reason"]) == (ErrorCode.CONFLICT, "INVITATION_EXPIRED")
    assert (await stored_invitation(db, stale.invitation.id)).used_at is None

    for forged in (used.token[:-2] + "xx", "", "not-a-token"):
        error = await refused(db, invitations.accept_invitation(db, broker, clock, second, forged))
        assert (error.code, error.details["reason"]) == (
            ErrorCode.NOT_FOUND,
            "INVITATION_INVALID",
        )
    assert set(await panes(db, d.room)) == before


async def test_accepting_needs_an_account_and_refuses_the_other_side(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d = await deal(db, clock)
    to_host_side = await invite(db, broker, clock, d.host, d.room, "brand@example.org")
    error = await refused(
        db, invitations.accept_invitation(db, broker, clock, d.buyer, to_host_side.token)
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.CONFLICT, "ALREADY_ON_OTHER_SIDE")
    assert (await stored_invitation(db, to_host_side.invitation.id)).used_at is None

    guest = Identity(signed_in=None, account=None, guest_key=new_guest_key())
    error = await refused(
        db, invitations.accept_invitation(db, broker, clock, guest, to_host_side.token)
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.UNAUTHENTICATED, "LOGIN_REQUIRED")
    assert set(await panes(db, d.room)) == {"host", "visitor"}


async def test_inviting_oneself_a_guest_inviting_and_a_home_room_are_refused(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d = await deal(db, clock)
    error = await refused(
        db, invitations.invite_to_room(db, broker, clock, d.buyer, d.room.id, "BRAND@example.com")
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.BAD_USER_INPUT, "INVITE_SELF")

    error = await refused(
        db, invitations.invite_to_room(db, broker, clock, d.buyer, d.room.id, "not an email")
    )
    assert (error.code, error.details["field"]) == (ErrorCode.BAD_USER_INPUT, "email")

    guest = Identity(signed_in=None, account=None, guest_key=new_guest_key())
    guest_room = await rooms.open_visitor_room(
        db, clock, guest, handle="talent", new_conversation=False, greet=False
    )
    await db.commit()
    error = await refused(
        db,
        invitations.invite_to_room(db, broker, clock, guest, guest_room.room.id, "x@example.com"),
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.FORBIDDEN, "GUEST_CANNOT_INVITE")

    anonymous = Identity(signed_in=None, account=None, guest_key=None)
    error = await refused(
        db, invitations.invite_to_room(db, broker, clock, anonymous, d.room.id, "x@example.com")
    )
    assert error.code is ErrorCode.UNAUTHENTICATED

    outsider, _ = await account(db, clock, "outsider")
    error = await refused(
        db, invitations.invite_to_room(db, broker, clock, outsider, d.room.id, "x@example.com")
    )
    assert error.code is ErrorCode.NOT_FOUND  # holds no pane: the room is not there for it

    assert d.host.account is not None
    home = await db.scalar(
        select(Room).where(Room.host_account_id == d.host.account.id, Room.kind == "home")
    )
    assert home is not None
    error = await refused(
        db, invitations.invite_to_room(db, broker, clock, d.host, home.id, "x@example.com")
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.BAD_USER_INPUT, "NOT_A_DEAL_ROOM")
    assert await db.scalar(select(Invitation.id)) is None
    await db.rollback()


async def test_a_full_room_refuses_invitations_and_accepts(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d = await deal(db, clock)
    one, _ = await account(db, clock, "one")
    two, _ = await account(db, clock, "two")
    first = await invite(db, broker, clock, d.buyer, d.room, "one@example.com", max_participants=3)
    second = await invite(db, broker, clock, d.host, d.room, "two@example.com", max_participants=3)
    await accept(db, broker, clock, one, first.token, max_participants=3)

    error = await refused(
        db, invitations.accept_invitation(db, broker, clock, two, second.token, max_participants=3)
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.CONFLICT, "ROOM_FULL")
    error = await refused(
        db,
        invitations.invite_to_room(
            db, broker, clock, d.buyer, d.room.id, "three@example.com", max_participants=3
        ),
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.CONFLICT, "ROOM_FULL")
    assert (await stored_invitation(db, second.invitation.id)).used_at is None
    assert set(await panes(db, d.room)) == {"host", "visitor", "visitor_2"}


async def three_on_the_buyers_side(
    db: Db, broker: Broker, clock: ManualClock
) -> tuple[Deal, Identity, Identity, str]:
    """A deal with two members on the buyer's side; returns the first's session token too."""
    d = await deal(db, clock)
    colleague, token = await account(db, clock, "colleague")
    legal, _ = await account(db, clock, "legal")
    for who, email in ((colleague, "colleague@example.com"), (legal, "legal@example.com")):
        issued = await invite(db, broker, clock, d.buyer, d.room, email)
        await accept(db, broker, clock, who, issued.token)
    return d, colleague, legal, token


async def test_the_host_and_a_sides_lead_cannot_be_removed_nor_by_a_member(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d, colleague, _legal, _ = await three_on_the_buyers_side(db, broker, clock)
    seats = await panes(db, d.room)

    def removing(who: Identity, key: str) -> Awaitable[Room]:
        return invitations.remove_participant(db, broker, clock, who, d.room.id, seats[key].id)

    error = await refused(db, removing(d.buyer, "host"))
    assert (error.code, error.details["reason"]) == (ErrorCode.FORBIDDEN, "CANNOT_REMOVE_HOST")
    for who in (d.host, d.buyer):
        error = await refused(db, removing(who, "visitor"))
        assert (error.code, error.details["reason"]) == (ErrorCode.CONFLICT, "LAST_OF_SIDE")
    error = await refused(db, removing(colleague, "visitor_3"))
    assert (error.code, error.details["reason"]) == (ErrorCode.FORBIDDEN, "NOT_YOUR_SIDE")
    assert all(p.removed_at is None for p in (await panes(db, d.room)).values())


async def test_removal_unbinds_the_member_and_ends_its_streams_at_once(
    engine: AsyncEngine, db: Db, broker: Broker, clock: ManualClock
) -> None:
    d, colleague, legal, token = await three_on_the_buyers_side(db, broker, clock)
    seats = await panes(db, d.room)
    # no periodic round within the test: only the removal's publish can wake the watch
    rechecks = Rechecks(create_sessionmaker(engine), clock, every=3600, broker=broker)
    rechecks.start()
    try:
        await asyncio.wait_for(rechecks.listening(), 5)
        watch = rechecks.hold(
            Held.of(
                Credentials(token=token), field="paneEvents", room_id=d.room.id, pane="visitor_2"
            )
        )
        await invitations.remove_participant(
            db, broker, clock, d.buyer, d.room.id, seats["visitor_2"].id
        )
        await db.commit()
        assert await asyncio.wait_for(watch.woken, 5) is Outcome.CHANGED
    finally:
        await rechecks.close()

    removed = (await panes(db, d.room))["visitor_2"]
    assert removed.removed_at is not None
    assert (removed.account_id, removed.guest_key_hash) == (None, None)
    error = await refused(db, rooms.room_for_reader(db, colleague, d.room.id))
    assert error.code is ErrorCode.NOT_FOUND

    # A member may leave; the next member never takes a removed member's key.
    await invitations.remove_participant(db, broker, clock, legal, d.room.id, seats["visitor_3"].id)
    await db.commit()
    newcomer, _ = await account(db, clock, "newcomer")
    issued = await invite(db, broker, clock, d.buyer, d.room, "newcomer@example.com")
    await accept(db, broker, clock, newcomer, issued.token)
    active = {k for k, p in (await panes(db, d.room)).items() if p.removed_at is None}
    assert active == {"host", "visitor", "visitor_4"}


async def test_only_the_buyers_lead_shares_a_pane_and_chooses_approvers(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d, colleague, legal, _ = await three_on_the_buyers_side(db, broker, clock)
    seats = await panes(db, d.room)
    for who in (colleague, d.host):
        error = await refused(
            db, invitations.share_pane(db, broker, who, d.room.id, seats["visitor_2"].id, True)
        )
        assert (error.code, error.details["reason"]) == (ErrorCode.FORBIDDEN, "NOT_THE_LEAD")
        error = await refused(
            db, invitations.allow_approval(db, who, d.room.id, seats["visitor_2"].id, True)
        )
        assert (error.code, error.details["reason"]) == (ErrorCode.FORBIDDEN, "NOT_THE_BUYER")
    error = await refused(
        db, invitations.allow_approval(db, d.buyer, d.room.id, seats["host"].id, True)
    )
    assert (error.code, error.details["reason"]) == (ErrorCode.BAD_USER_INPUT, "NOT_A_MEMBER")

    await invitations.share_pane(db, broker, d.buyer, d.room.id, seats["visitor_2"].id, True)
    await db.commit()
    view = await rooms.room_for_reader(db, legal, d.room.id)
    assert view.readable == frozenset({"visitor_2", "visitor_3"})  # R8
    await db.rollback()


async def written(db: Db, clock: ManualClock, room: Room) -> uuid.UUID:
    """The room's written offer, as Offer-Gen's apply draws it (``draw``)."""
    seats = await panes(db, room)
    fresh = await db.get(Room, room.id)
    assert fresh is not None
    run = RunSnapshot(
        uuid.uuid4(), room.id, seats["visitor"].id, AgentName.OFFER_GEN.value, None, None, 0, 1
    )
    await draw(
        db,
        clock,
        run,
        fresh,
        seats["host"],
        seats["visitor"],
        offer_gen.to_terms(AGREED),
        clock.now(),
    )
    await db.commit()
    offer_id = await db.scalar(select(Offer.id).where(Offer.room_id == room.id))
    await db.rollback()
    assert offer_id is not None
    return offer_id


async def test_a_member_approves_only_when_the_buyer_allows_and_any_member_pays(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d, colleague, legal, _ = await three_on_the_buyers_side(db, broker, clock)
    seats = await panes(db, d.room)
    offer_id = await written(db, clock, d.room)

    def approving(who: Identity) -> Awaitable[Any]:
        return actions.approve_offer(db, broker, clock, who, offer_id=offer_id, version=None)

    error = await refused(db, approving(colleague))
    assert (error.code, error.details["reason"]) == (ErrorCode.FORBIDDEN, "NOT_AN_APPROVER")

    await invitations.allow_approval(db, d.buyer, d.room.id, seats["visitor_2"].id, True)
    await db.commit()
    stamped = await approving(colleague)
    await db.commit()
    assert stamped.offer.brand_approved_at is not None
    error = await refused(db, approving(legal))  # allowing one member allows no other
    assert error.details["reason"] == "NOT_AN_APPROVER"
    # The host's side has one approver too: the host books, not the manager it added.
    manager, _ = await account(db, clock, "manager")
    issued = await invite(db, broker, clock, d.host, d.room, "manager@example.com")
    await accept(db, broker, clock, manager, issued.token)
    await db.commit()
    error = await refused(db, approving(manager))
    assert (error.code, error.details["reason"]) == (ErrorCode.FORBIDDEN, "NOT_AN_APPROVER")
    await approving(d.host)
    await db.commit()

    provider = TestPaymentProvider(clock, capture_delay=timedelta(seconds=30))
    payment, paid, _ = await payments.pay_offer(
        db,
        broker,
        clock,
        provider,
        legal,
        offer_id=offer_id,
        payment_method="test_card_ok",
        idempotency_key="k-1",
    )
    await db.commit()
    assert legal.account is not None
    assert payment.payer_account_id == legal.account.id
    assert paid.offer.status == OfferStatus.PAYMENT_HELD.value


async def test_an_email_to_an_address_states_no_private_value_of_the_host(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    """The exit screen on the email-only row: an inviter whose name states the host's floor is
    not quoted to the visitor side's newcomer (the text is replaced and operators flagged)."""
    d = await deal(db, clock)
    floor = {"sponsored_post": {"floor": "7777", "currency": "USD"}}
    await write_room_memory(db, str(d.room.id), {"host": {"limits": floor}})
    await db.execute(
        update(Account).where(Account.handle == "brand").values(display_name="Brand at $7,777")
    )
    await db.commit()
    assert d.buyer.account is not None
    d.buyer.account.display_name = "Brand at $7,777"  # the identity the request would hold
    await invite(db, broker, clock, d.buyer, d.room, "newcomer@example.com")
    rows = list(await db.scalars(select(Notification)))
    flags = list(await db.scalars(select(Flag).where(Flag.room_id == d.room.id)))
    db.session.expunge_all()
    await db.rollback()
    (row,) = rows
    assert (row.account_id, row.email_to) == (None, "newcomer@example.com")
    for text in (row.title, row.body):
        assert "7,777" not in text
        assert "7777" not in text
    assert [f.level for f in flags] == ["firewall"]


async def test_an_invitee_is_emailed_naming_the_room_and_inviter_only(
    db: Db, broker: Broker, clock: ManualClock
) -> None:
    d = await deal(db, clock)
    colleague, _ = await account(db, clock, "colleague")
    issued = await invite(db, broker, clock, d.buyer, d.room, "colleague@example.com")
    newcomer = await invite(db, broker, clock, d.buyer, d.room, "Nobody@Example.com")
    assert colleague.account is not None
    rows = list(await db.scalars(select(Notification).order_by(Notification.created_at)))
    db.session.expunge_all()
    await db.rollback()
    # An account holder hears in the app (and by email); an address with no account yet, by
    # email only: a row with no account, due now, to the address as invited.
    assert [(n.account_id, n.email_to, n.kind, n.audience, n.status) for n in rows] == [
        (colleague.account.id, "colleague@example.com", "invitation", "visitor", "pending"),
        (None, "nobody@example.com", "invitation", "visitor", "pending"),
    ]
    note = rows[0]
    assert note.title == f"Brand invited you to \u201c{d.room.title}\u201d"
    assert note.link == f"/invite/{issued.token}"
    assert rows[1].link == f"/invite/{newcomer.token}"
    assert rows[1].title == note.title
