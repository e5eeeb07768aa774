"""The payment's life after the hold on the local test provider: the same mutations and stages
as with Stripe (``test_stripe.py``); the domain does not learn which provider runs."""

from __future__ import annotations

from tests.conftest import Server
from tests.support.offers import PAY, negotiate_to_offer, offer_as, open_deal
from tests.support.turns import Deal

CONFIRM = """
mutation($offerId: ID!) { confirmDelivery(offerId: $offerId) { offer { id stage } } }
"""
CANCEL = """
mutation($offerId: ID!) { cancelPaidBooking(offerId: $offerId) { offer { id stage } } }
"""
APPROVE = "mutation($id: ID!) { approveOffer(offerId: $id) { id stage } }"


async def held_offer(server: Server) -> tuple[Deal, str]:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    for client in (d.visitor, d.host):
        await client.query(APPROVE, {"id": offer_id})
    paid = await d.visitor.query(PAY, {"offerId": offer_id, "method": "test_card_ok", "key": "k1"})
    assert paid["payOffer"]["offer"]["stage"] == "BOOKED_PAYMENT_HELD"
    return d, offer_id


async def test_confirming_delivery_completes_and_owes_the_host(server: Server) -> None:
    d, offer_id = await held_offer(server)
    assert await d.host.error_codes(CONFIRM, {"offerId": offer_id}) == ["FORBIDDEN"]
    done = (await d.visitor.query(CONFIRM, {"offerId": offer_id}))["confirmDelivery"]
    assert done["offer"]["stage"] == "COMPLETED"
    payouts = (await d.host.query("{ payouts { owed sent } }"))["payouts"]
    assert payouts == [{"owed": "4000.00", "sent": "0.00"}]


async def test_the_talent_cancels_a_held_booking(server: Server) -> None:
    d, offer_id = await held_offer(server)
    done = (await d.host.query(CANCEL, {"offerId": offer_id}))["cancelPaidBooking"]
    assert done["offer"]["stage"] == "WITHDRAWN"
    payment = (await offer_as(d.visitor, offer_id))["payments"][0]
    assert payment["status"] == "cancelled"
