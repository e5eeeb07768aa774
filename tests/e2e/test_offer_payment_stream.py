"""Paying a booked offer, and every stage change arriving live (ARCHITECTURE "Offers and the stage
vocabulary" and "Realtime").

The brand pays the due slice of the fee plus a 20% platform fee, quoted before it pays, with
the local test provider's cards; only the brand pays and only once booked, and a retried
payment charges once. No agent takes a card or declares a payment in chat: only the stage
says whether a deal is paid. Every stage change is a stored event in the room's sequence,
seen in both panes between the messages in cursor order, replayed after a cursor, and
followed by partner integrations through ``offerStage``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import select

from dealroom.domain.cursors import event_cursor, parse_event_cursor
from dealroom.domain.offer_stage import GLOSSES, Stage
from dealroom.domain.redaction import CARD_PLACEHOLDER, redact_cards
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message, OfferEvent, Participant
from dealroom.services.offers.provider import TestPaymentProvider
from tests.conftest import Server
from tests.support.factories import written_offer
from tests.support.graphql import Client, GraphQLErrors, Subscription, post, subscribe, ws_init_for
from tests.support.offers import (
    OFFER_STAGE,
    PAY,
    approve_as_read,
    negotiate_to_offer,
    offer_as,
    offer_events,
    stages,
    stored_payments,
)
from tests.support.rooms import account_client
from tests.support.turns import PANE_EVENTS_FULL, Deal, deal, memory, messages_in

PANE_EVENTS = PANE_EVENTS_FULL.replace(
    "... on MessageDelta",
    "... on StageChanged { cursor offerId stage stageGloss version }\n    ... on MessageDelta",
)
STORED = ("MessageAdded", "SystemLine", "StageChanged")
"""Pane events with a cursor of their own (typing and deltas are not stored)."""

CENT = Decimal("0.01")


# --- arranging -------------------------------------------------------------------------------


def provider(server: Server) -> TestPaymentProvider:
    payments = server.state.payments
    assert isinstance(payments, TestPaymentProvider)
    return payments


async def book(server: Server, d: Deal, offer_id: str) -> None:
    """The two clicks on the written offer, in order: the brand's, then the talent's."""
    assert (await approve_as_read(d.visitor, offer_id))["stage"] == "BRAND_ACKED_AWAITING_TALENT"
    assert (await approve_as_read(d.host, offer_id))["stage"] == "BOOKED_AWAITING_PAYMENT"


async def booked_offer(server: Server) -> tuple[Deal, str]:
    d = await deal(server)
    offer_id = await written_offer(server, d.room_id)
    await book(server, d, offer_id)
    return d, offer_id


async def pay(client: Client, offer_id: str, method: str, key: str) -> dict[str, Any]:
    data: dict[str, Any] = (
        await client.query(PAY, {"offerId": offer_id, "method": method, "key": key})
    )["payOffer"]
    return data


async def pay_error(client: Client, offer_id: str, method: str, key: str) -> dict[str, Any]:
    """The single error a payment answers with."""
    body = await client.raw(PAY, {"offerId": offer_id, "method": method, "key": key})
    errors = body.get("errors") or []
    assert len(errors) == 1, body
    assert body.get("data") is None, body
    extensions: dict[str, Any] = errors[0]["extensions"]
    return extensions


def expected_quote(fee: str, percent: str | None) -> dict[str, str]:
    """The quote worked out here, in Decimal (USD cents, half up): the due slice of the fee
    and a fifth of it on top. No schedule named: the whole fee is due."""
    amount = Decimal(fee)
    share = Decimal(percent) if percent is not None else Decimal(100)
    due = (amount * share / 100).quantize(CENT, ROUND_HALF_UP)
    platform = (due * Decimal("0.2")).quantize(CENT, ROUND_HALF_UP)
    return {
        "currency": "USD",
        "fee": str(amount.quantize(CENT)),
        "due": str(due),
        "platformFee": str(platform),
        "total": str(due + platform),
        "remaining": str(amount.quantize(CENT) - due),
    }


def money_of(payment: dict[str, Any]) -> dict[str, str]:
    return {k: payment[k] for k in ("currency", "due", "platformFee", "total")}


# --- 1. the quote ----------------------------------------------------------------------------


async def test_the_quote_before_paying_is_the_due_slice_plus_a_fifth(
    agent_server: Server,
) -> None:
    d = await deal(agent_server)
    offer_id = await negotiate_to_offer(agent_server, d, upfront="50% upfront")
    written = await offer_as(d.visitor, offer_id)
    terms = written["terms"]
    assert terms["fee"] == {"amount": "8000.00", "currency": "USD"}
    assert terms["dueSlicePercent"] == "50"
    expected = expected_quote(terms["fee"]["amount"], terms["dueSlicePercent"])
    assert expected == {
        "currency": "USD",
        "fee": "8000.00",
        "due": "4000.00",
        "platformFee": "800.00",
        "total": "4800.00",
        "remaining": "4000.00",
    }
    quote = written["payment"]
    assert quote == {**expected, "duePercent": "50", "defaultSchedule": False}
    # Both sides read the same figures, and the booking does not change them.
    assert (await offer_as(d.host, offer_id))["payment"] == quote
    await book(agent_server, d, offer_id)
    booked = await offer_as(d.visitor, offer_id)
    assert booked["payment"] == quote
    assert "PAY" in booked["viewerActions"]
    assert booked["payments"] == []


async def test_an_offer_naming_no_schedule_quotes_the_whole_fee(agent_server: Server) -> None:
    d = await deal(agent_server)
    offer_id = await negotiate_to_offer(agent_server, d, upfront="for our spring launch")
    written = await offer_as(d.visitor, offer_id)
    terms = written["terms"]
    assert terms["fee"] == {"amount": "8000.00", "currency": "USD"}
    assert terms["dueSlicePercent"] is None  # never invented
    expected = expected_quote(terms["fee"]["amount"], None)
    assert expected["due"] == terms["fee"]["amount"]
    assert written["payment"] == {
        **expected,
        "duePercent": "100",
        "defaultSchedule": True,
    }
    assert written["payment"]["platformFee"] == "1600.00"
    assert written["payment"]["total"] == "9600.00"
    assert written["payment"]["remaining"] == "0.00"


# --- 2. paying with each test card -----------------------------------------------------------


async def test_a_captured_card_holds_the_payment_and_a_retry_charges_once(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    d = await deal(server)
    offer_id = await written_offer(server, d.room_id)
    quote = (await offer_as(d.visitor, offer_id))["payment"]

    # O8: nobody pays before the booking, the brand included.
    early = await pay_error(d.visitor, offer_id, "test_card_ok", "too-early")
    assert early["code"] == "CONFLICT"
    assert early["stage"] == "WRITTEN_AWAITING_BRAND"
    await approve_as_read(d.visitor, offer_id)
    early = await pay_error(d.visitor, offer_id, "test_card_ok", "still-early")
    assert (early["code"], early["stage"]) == ("CONFLICT", "BRAND_ACKED_AWAITING_TALENT")
    await approve_as_read(d.host, offer_id)
    assert provider(server).charges_made == 0

    # Only the brand pays; a stranger does not learn the offer exists.
    forbidden = await pay_error(d.host, offer_id, "test_card_ok", "host-key")
    assert forbidden["code"] == "FORBIDDEN"
    stranger = server.client()
    await account_client(stranger, "mallory", "Mallory")
    assert (await pay_error(stranger, offer_id, "test_card_ok", "k"))["code"] == "NOT_FOUND"
    unknown = await pay_error(d.visitor, offer_id, "test_card_gold", "gold")
    assert unknown["code"] == "BAD_USER_INPUT"
    assert provider(server).charges_made == 0
    events_before = stages(await offer_events(db, offer_id))

    paid = await pay(d.visitor, offer_id, "test_card_ok", "pay-1")
    assert paid["offer"]["stage"] == "BOOKED_PAYMENT_HELD"
    payment = paid["payment"]
    assert payment["status"] == "captured"
    assert payment["method"] == "test_card_ok"
    assert payment["offerVersion"] == 1
    assert money_of(payment) == money_of(quote)
    assert provider(server).charges_made == 1

    # A retry of the same request (a lost response) is the same payment, charged once.
    again = await pay(d.visitor, offer_id, "test_card_ok", "pay-1")
    assert again["payment"] == payment
    assert again["offer"]["stage"] == "BOOKED_PAYMENT_HELD"
    assert provider(server).charges_made == 1
    # The same key for another card is a different request, refused.
    reused = await pay_error(d.visitor, offer_id, "test_card_delayed_capture", "pay-1")
    assert reused["code"] == "CONFLICT"
    # Paid is paid: a new key cannot charge again.
    twice = await pay_error(d.visitor, offer_id, "test_card_ok", "pay-2")
    assert (twice["code"], twice["stage"]) == ("CONFLICT", "BOOKED_PAYMENT_HELD")
    assert provider(server).charges_made == 1

    rows = await stored_payments(db, offer_id)
    assert [(str(r.id), r.status, r.method, r.idempotency_key) for r in rows] == [
        (payment["id"], "captured", "test_card_ok", "pay-1")
    ]
    assert (rows[0].currency, rows[0].due, rows[0].platform_fee, rows[0].total) == (
        "USD",
        Decimal("4000.00"),
        Decimal("800.00"),
        Decimal("4800.00"),
    )
    events = await offer_events(db, offer_id)
    assert stages(events[: len(events_before)]) == events_before
    assert [(e.stage, e.actor) for e in events[len(events_before) :]] == [
        ("BOOKED_PAYMENT_HELD", "payment")
    ]
    read = await offer_as(d.host, offer_id)
    assert read["stage"] == "BOOKED_PAYMENT_HELD"
    assert [p["id"] for p in read["payments"]] == [payment["id"]]


async def test_only_the_brand_pays_even_with_the_brands_idempotency_key(
    agent_server: Server, db: Db
) -> None:
    """O8: the seat is checked before the idempotent replay, so the talent cannot get a
    payment response for the brand's payment by reusing its key."""
    server = agent_server
    d, offer_id = await booked_offer(server)
    paid = await pay(d.visitor, offer_id, "test_card_ok", "brand-key")
    refused = await pay_error(d.host, offer_id, "test_card_ok", "brand-key")
    assert refused["code"] == "FORBIDDEN"
    assert provider(server).charges_made == 1
    assert [str(r.id) for r in await stored_payments(db, offer_id)] == [paid["payment"]["id"]]


async def test_a_declined_card_leaves_the_offer_booked_and_awaiting_payment(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    d, offer_id = await booked_offer(server)
    before = stages(await offer_events(db, offer_id))

    declined = await pay_error(d.visitor, offer_id, "test_card_declined", "card-a")
    assert declined["code"] == "PAYMENT_DECLINED"
    assert declined["stage"] == "BOOKED_AWAITING_PAYMENT"
    read = await offer_as(d.visitor, offer_id)
    assert read["stage"] == "BOOKED_AWAITING_PAYMENT"
    assert "PAY" in read["viewerActions"]
    assert stages(await offer_events(db, offer_id)) == before
    assert [r for r in await stored_payments(db, offer_id) if r.status == "captured"] == []

    # Another card, with a new key, goes through.
    paid = await pay(d.visitor, offer_id, "test_card_ok", "card-b")
    assert paid["offer"]["stage"] == "BOOKED_PAYMENT_HELD"
    assert paid["payment"]["status"] == "captured"
    assert provider(server).charges_made == 2  # the declined attempt, then the capture
    captured = [r for r in await stored_payments(db, offer_id) if r.status == "captured"]
    assert [str(r.id) for r in captured] == [paid["payment"]["id"]]
    assert stages(await offer_events(db, offer_id)) == [*before, ("BOOKED_PAYMENT_HELD", 1)]


async def test_a_delayed_capture_is_held_once_the_provider_captures_it(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    d, offer_id = await booked_offer(server)
    delay = timedelta(seconds=server.state.settings.payment_capture_delay_seconds)
    before = stages(await offer_events(db, offer_id))

    submitted = await pay(d.visitor, offer_id, "test_card_delayed_capture", "slow-1")
    assert submitted["offer"]["stage"] == "PENDING_PAY_CAPTURE"
    assert submitted["payment"]["status"] == "pending"
    assert stages(await offer_events(db, offer_id)) == [*before, ("PENDING_PAY_CAPTURE", 1)]
    # Paying again while the capture is pending: the same key is the same payment, another
    # key is refused at this stage.
    assert (await pay(d.visitor, offer_id, "test_card_delayed_capture", "slow-1"))[
        "payment"
    ] == submitted["payment"]
    other = await pay_error(d.visitor, offer_id, "test_card_ok", "slow-2")
    assert (other["code"], other["stage"]) == ("CONFLICT", "PENDING_PAY_CAPTURE")

    # Before the provider's delay has passed, asking it changes nothing.
    server.clock.advance(delay / 2)
    await server.runner.sweep()
    assert (await offer_as(d.visitor, offer_id))["stage"] == "PENDING_PAY_CAPTURE"
    assert stages(await offer_events(db, offer_id)) == [*before, ("PENDING_PAY_CAPTURE", 1)]

    server.clock.advance(delay)
    await server.runner.sweep()
    read = await offer_as(d.visitor, offer_id)
    assert read["stage"] == "BOOKED_PAYMENT_HELD"
    assert [(p["id"], p["status"]) for p in read["payments"]] == [
        (submitted["payment"]["id"], "captured")
    ]
    assert stages(await offer_events(db, offer_id)) == [
        *before,
        ("PENDING_PAY_CAPTURE", 1),
        ("BOOKED_PAYMENT_HELD", 1),
    ]
    # Sweeping again (or a second worker's sweep) moves nothing twice.
    await server.runner.sweep()
    assert len(await offer_events(db, offer_id)) == len(before) + 2
    assert provider(server).charges_made == 1


# --- 3. agents never take a card or declare a payment ---------------------------------------

CARD_CLAIM = "I've paid, here is my card 4242 4242 4242 4242"
CARD_DIGITS = re.compile(r"4242[\s-]*4242")
PAID_CLAIM = re.compile(
    r"\b(?:(?:you|they|the brand|brand|a visitor|visitor)(?:'ve| have| has)? (?:already )?paid|"
    r"(?:is|was|been|now) paid|paid in full|payment (?:is |was |has been )?"
    r"(?:received|complete|completed|confirmed|captured|held)|"
    r"received (?:your|the|their) payment)\b",
    re.IGNORECASE,
)
"""Saying a payment happened (not: how and where one is made)."""


async def test_an_agent_never_takes_a_card_or_declares_payment_in_chat(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    d = await deal(server)
    offer_id = await negotiate_to_offer(server, d)  # the agents have negotiated this deal
    await book(server, d, offer_id)
    before = {k: len(await messages_in(db, d.room_id, k)) for k in ("visitor", "host")}
    events_before = stages(await offer_events(db, offer_id))

    await post(d.visitor, d.room_id, CARD_CLAIM)
    await server.settle()

    read = await offer_as(d.visitor, offer_id)
    assert read["stage"] == "BOOKED_AWAITING_PAYMENT"
    assert read["payments"] == []
    assert stages(await offer_events(db, offer_id)) == events_before
    assert await stored_payments(db, offer_id) == []
    assert provider(server).charges_made == 0

    visitor_new = (await messages_in(db, d.room_id, "visitor"))[before["visitor"] :]
    host_new = (await messages_in(db, d.room_id, "host"))[before["host"] :]
    # RD1: the card number never reaches storage; the rest of the line is kept.
    assert [m.body for m in visitor_new if m.author_kind == "participant"] == [
        redact_cards(CARD_CLAIM)
    ]
    assert CARD_PLACEHOLDER in redact_cards(CARD_CLAIM)
    room_memory = json.dumps(await memory(db, d.room_id))
    assert not CARD_DIGITS.search(room_memory), room_memory
    every = [
        *await messages_in(db, d.room_id, "visitor"),
        *await messages_in(db, d.room_id, "host"),
    ]
    assert not [m.body for m in every if CARD_DIGITS.search(m.body)]
    replies = [m.body for m in [*visitor_new, *host_new] if m.author_kind == "agent"]
    assert [m for m in visitor_new if m.author_kind == "agent"], "the persona did not answer"
    for body in replies:
        assert not CARD_DIGITS.search(body), body
        assert not PAID_CLAIM.search(body), body


# --- 4. the stage, live in both panes --------------------------------------------------------


@dataclass
class Collector:
    """Everything a subscription delivers, drained as it arrives so the socket never backs
    up; a test waits on what arrived (a fact), never on a pause."""

    sub: Subscription
    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def run(self) -> None:
        while True:
            event = await self.sub.event(timeout=3600)
            async with self.changed:
                self.events.append(event)
                self.changed.notify_all()

    async def until(
        self, done: Callable[[list[dict[str, Any]]], bool], timeout: float = 20.0
    ) -> None:
        async with asyncio.timeout(timeout), self.changed:
            await self.changed.wait_for(lambda: done(self.events))

    def stored(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["__typename"] in STORED]


@contextlib.asynccontextmanager
async def collecting(sub: Subscription) -> AsyncIterator[Collector]:
    collector = Collector(sub)
    task = asyncio.create_task(collector.run())
    try:
        yield collector
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def reached(cursor: int) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda events: any(
        e["__typename"] in STORED and parse_event_cursor(e["cursor"]) >= cursor for e in events
    )


def key_of(event: dict[str, Any]) -> tuple[int, str, str]:
    """(cursor, kind, what): a stored pane event as the database would describe it."""
    cursor = parse_event_cursor(event["cursor"])
    if event["__typename"] == "StageChanged":
        return cursor, "stage", f"{event['offerId']}:{event['stage']}:{event['version']}"
    return cursor, "message", event["message"]["id"]


async def pane_from_db(db: Db, room_id: str, key: str) -> list[tuple[int, str, str]]:
    """A pane's stored events in cursor order: its messages and the room's stage changes."""
    try:
        messages = await db.scalars(
            select(Message)
            .join(Participant, Participant.id == Message.participant_id)
            .where(Message.room_id == uuid.UUID(room_id), Participant.key == key)
        )
        changes = await db.scalars(
            select(OfferEvent).where(OfferEvent.room_id == uuid.UUID(room_id))
        )
        merged = [(m.seq, "message", str(m.id)) for m in messages] + [
            (e.seq, "stage", f"{e.offer_id}:{e.stage}:{e.version}") for e in changes
        ]
    finally:
        await db.close()
    return sorted(merged)


def pane_subscription(server: Server, client: Client, d: Deal, seat: str, after: int) -> Any:
    return subscribe(
        server.ws_url,
        PANE_EVENTS,
        {"roomId": d.room_id, "seat": seat, "after": event_cursor(after)},
        init=ws_init_for(client),
    )


async def test_every_stage_change_arrives_live_in_both_panes_in_cursor_order(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    d = await deal(server)
    panes = {"VISITOR": (d.visitor, "visitor"), "HOST": (d.host, "host")}

    async with contextlib.AsyncExitStack() as stack:
        logs: dict[str, Collector] = {}
        for seat, (client, _) in panes.items():
            sub = await stack.enter_async_context(pane_subscription(server, client, d, seat, 0))
            logs[seat] = await stack.enter_async_context(collecting(sub))

        offer_id = await negotiate_to_offer(server, d)
        # Each side talks between the clicks, so messages and stage changes interleave.
        await post(d.visitor, d.room_id, "Thanks, reading the written offer now.")
        await server.settle()
        assert (await approve_as_read(d.visitor, offer_id))[
            "stage"
        ] == "BRAND_ACKED_AWAITING_TALENT"
        await post(d.host, d.room_id, "Thanks, noted.")
        await server.settle()
        assert (await approve_as_read(d.host, offer_id))["stage"] == "BOOKED_AWAITING_PAYMENT"
        paid = await pay(d.visitor, offer_id, "test_card_ok", "stream-1")
        assert paid["offer"]["stage"] == "BOOKED_PAYMENT_HELD"
        await server.settle()

        changes = await offer_events(db, offer_id)
        assert stages(changes) == [
            ("WRITTEN_AWAITING_BRAND", 1),
            ("BRAND_ACKED_AWAITING_TALENT", 1),
            ("BOOKED_AWAITING_PAYMENT", 1),
            ("BOOKED_PAYMENT_HELD", 1),
        ]
        for seat, (_, key) in panes.items():
            expected = await pane_from_db(db, d.room_id, key)
            await logs[seat].until(reached(expected[-1][0]))
            stored = logs[seat].stored()
            cursors = [parse_event_cursor(e["cursor"]) for e in stored]
            assert cursors == sorted(set(cursors)), f"{seat}: not strictly increasing"
            # Exactly the pane's messages and the room's stage changes, in the DB's order.
            assert [key_of(e) for e in stored] == expected, seat
            seen = [e for e in stored if e["__typename"] == "StageChanged"]
            assert [(parse_event_cursor(e["cursor"]), e["stage"]) for e in seen] == [
                (c.seq, c.stage) for c in changes
            ]
            assert all(e["stageGloss"] == GLOSSES[Stage(e["stage"])] for e in seen)
            # Messages came between the stage changes, not all on one side.
            kinds = [e["__typename"] for e in stored]
            first, last = (
                kinds.index("StageChanged"),
                len(kinds) - kinds[::-1].index("StageChanged"),
            )
            assert "MessageAdded" in kinds[:first]
            assert "MessageAdded" in kinds[first:last]
        visitor_stages = [e for e in logs["VISITOR"].stored() if e["__typename"] == "StageChanged"]
        host_stages = [e for e in logs["HOST"].stored() if e["__typename"] == "StageChanged"]
        assert visitor_stages == host_stages

    # A client that reconnects after a cursor mid-way gets exactly the rest, then live.
    for seat, (client, key) in panes.items():
        expected = await pane_from_db(db, d.room_id, key)
        middle = expected[len(expected) // 2][0]
        rest = [e for e in expected if e[0] > middle]
        assert any(kind == "stage" for _, kind, _ in rest), "pick a cursor before a change"
        async with pane_subscription(server, client, d, seat, middle) as sub:
            replayed = [key_of(e) for e in await sub.events(len(rest), timeout=10)]
            assert replayed == rest, seat
            note = await post(client, d.room_id, f"Thanks, noted ({seat.lower()}).")
            while True:
                event = await sub.event(timeout=10)
                if event["__typename"] in STORED:
                    break
            assert key_of(event) == (parse_event_cursor(note["cursor"]), "message", note["id"])
        await server.settle()


# --- 5. offerStage, for partner integrations ------------------------------------------------


async def stage_event(sub: Subscription, timeout: float = 10.0) -> dict[str, Any]:
    payload = await sub.next(timeout)
    if payload.get("errors"):
        raise GraphQLErrors(payload["errors"])
    event: dict[str, Any] = payload["data"]["offerStage"]
    return event


def as_stored(event: dict[str, Any]) -> tuple[int, str, str, int, datetime]:
    return (
        parse_event_cursor(event["cursor"]),
        event["offerId"],
        event["stage"],
        event["version"],
        datetime.fromisoformat(event["at"]),
    )


def rows_as_stored(rows: list[OfferEvent]) -> list[tuple[int, str, str, int, datetime]]:
    return [(r.seq, str(r.offer_id), r.stage, r.version, r.created_at) for r in rows]


async def wait_listening(server: Server, channel: str) -> None:
    """Until this process's broker holds a subscriber for ``channel`` (a fact)."""
    for _ in range(1000):
        if channel in server.broker.listening():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"nobody subscribed to {channel}")


async def test_a_partner_follows_an_offer_stage_with_replay_and_live(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    d = await deal(server)
    offer_id = await written_offer(server, d.room_id)
    minted = await offer_events(db, offer_id)
    assert stages(minted) == [("WRITTEN_AWAITING_BRAND", 1)]

    stranger = server.client()
    await account_client(stranger, "mallory", "Mallory")
    async with subscribe(
        server.ws_url, OFFER_STAGE, {"offerId": offer_id, "after": None}, init=ws_init_for(stranger)
    ) as sub:
        refused = await sub.next()
    assert [e["extensions"]["code"] for e in refused["errors"]] == ["NOT_FOUND"]

    live_vars = {"offerId": offer_id, "after": None}
    replay_vars = {"offerId": offer_id, "after": event_cursor(0)}
    # The talent's integration starts live; the brand's replays from the beginning.
    async with subscribe(server.ws_url, OFFER_STAGE, live_vars, init=ws_init_for(d.host)) as live:
        await wait_listening(server, f"offer:{offer_id}")
        async with subscribe(
            server.ws_url, OFFER_STAGE, replay_vars, init=ws_init_for(d.visitor)
        ) as replay:
            first = await stage_event(replay)
            assert as_stored(first) == rows_as_stored(minted)[0]
            assert first["stageGloss"] == GLOSSES[Stage.WRITTEN_AWAITING_BRAND]
            await book(server, d, offer_id)
            await pay(d.visitor, offer_id, "test_card_delayed_capture", "partner-1")
            server.clock.advance(
                timedelta(seconds=server.state.settings.payment_capture_delay_seconds + 1)
            )
            await server.runner.sweep()
            rows = await offer_events(db, offer_id)
            assert [s for s, _ in stages(rows)] == [
                "WRITTEN_AWAITING_BRAND",
                "BRAND_ACKED_AWAITING_TALENT",
                "BOOKED_AWAITING_PAYMENT",
                "PENDING_PAY_CAPTURE",
                "BOOKED_PAYMENT_HELD",
            ]
            later = [as_stored(await stage_event(replay)) for _ in rows[1:]]
            assert later == rows_as_stored(rows)[1:]
            went_live = [as_stored(await stage_event(live)) for _ in rows[1:]]
            assert went_live == rows_as_stored(rows)[1:]
            await replay.nothing_for(0.3)
            await live.nothing_for(0.3)

    # Resuming after a mid cursor: exactly the changes after it, in order.
    middle = rows[2]
    resume_vars = {"offerId": offer_id, "after": event_cursor(middle.seq)}
    async with subscribe(
        server.ws_url, OFFER_STAGE, resume_vars, init=ws_init_for(d.visitor)
    ) as resumed:
        rest = [as_stored(await stage_event(resumed)) for _ in rows[3:]]
        await resumed.nothing_for(0.3)
    assert rest == rows_as_stored(rows)[3:]
