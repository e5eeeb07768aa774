"""The offline engine reads everyday phrasing: rates matched by kind with the platform as
refinement, quantities, and a principal's "X, never below Y" as a rate."""

from __future__ import annotations

from typing import Any

from dealroom.agents.persona import Trigger
from dealroom.agents.render import Line
from tests.agents.test_offline import (
    ROOM,
    changes_of,
    distil_request,
    offer_of,
    persona_request,
    proposal,
    run_distil,
    run_persona,
)

INSTAGRAM: dict[str, Any] = ROOM | {
    "host": {"rates": {"instagram_sponsored_post": {"ask": "8000 USD", "floor": "6000 USD"}}}
}


async def test_a_rate_for_a_sponsored_instagram_post_covers_a_sponsored_post() -> None:
    output = await run_persona(
        persona_request(
            "host", proposal("Dana Ortiz proposes a sponsored post for $5,000."), room=INSTAGRAM
        )
    )
    ruling = offer_of(output).ruling
    assert ruling is not None
    assert (ruling.decision, ruling.amount) == ("counter", "8000")


async def test_a_rate_for_an_instagram_reel_does_not_cover_a_tiktok_video() -> None:
    room = ROOM | {"host": {"rates": {"instagram_reel": {"ask": "3000 USD"}}}}
    output = await run_persona(
        persona_request(
            "host", proposal("Dana Ortiz proposes a TikTok video for $2,000."), room=room
        )
    )
    assert output.sends == []
    assert output.reply.endswith("I have no rate recorded for that. Should I take it?")


async def test_a_quantity_is_ruled_per_unit_and_countered_for_all() -> None:
    output = await run_persona(
        persona_request("host", proposal("Dana Ortiz proposes 2 sponsored posts for $14,000."))
    )
    send = offer_of(output)
    assert send.ruling is not None
    assert (send.ruling.decision, send.ruling.amount) == ("counter", "16000")
    assert send.substance == "Maya Lin can do the 2 sponsored posts at $16,000."


async def test_the_visitor_side_carries_the_quantity_and_a_per_unit_price() -> None:
    output = await run_persona(
        persona_request("visitor", Trigger("message", "Two sponsored posts at $7,000 each?"))
    )
    [send] = output.sends
    assert send.substance == "Dana Ortiz proposes 2 sponsored posts for $14,000."


async def test_never_below_in_the_deal_rooms_host_pane_is_a_rate_not_an_offer_of_the_floor() -> (
    None
):
    asked = "Dana Ortiz offers $5,000 for a sponsored post; I have no rate recorded for that. "
    asked += "Should I take it?"
    room = ROOM | {"host": {}}
    output = await run_persona(
        persona_request(
            "host",
            Trigger("message", "$8,000, never below $6,000"),
            room=room,
            session=[Line("agent", asked)],
        )
    )
    send = offer_of(output)
    assert send.ruling is not None
    assert (send.ruling.decision, send.ruling.amount) == ("counter", "8000")
    assert "6,000" not in send.substance
    recorded = await run_distil(
        distil_request(
            "host",
            session=[Line("agent", asked), Line("participant", "$8,000, never below $6,000")],
            room=room,
        )
    )
    assert ("set", "host.rates.sponsored_post.ask", "8000 USD") in changes_of(recorded)
    assert recorded.principal_decisions == []
