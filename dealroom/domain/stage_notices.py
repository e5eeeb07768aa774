"""What each side is told when the deal's stage changes (seed 000 "Deals move
through explicit physical stages": "Personas are told those events in this vocabulary").

A stage change is an ``offer_events`` row; code queues one short persona turn in each pane
the change concerns, told the event in the stage vocabulary. The texts are composed here, by
code, from the stage and the version alone — nothing of either side's memory — so a notice
can carry nothing private.

- SN1 The side whose own click moved the stage is not told it (it saw it happen); the other
      side is. A change no participant clicked (Offer-Gen drew a version, an agent closed the
      offer, the provider captured a payment) concerns both sides, except a payment's news,
      which is the brand's — and the talent's too once the money is held.
- SN2 Every notice names the stage by its vocabulary word; only a BOOKED stage is ever called
      booked, and payment is always "in the offer, never in chat".
"""

from __future__ import annotations

from typing import Final, assert_never

from dealroom.domain.offer_stage import BOOKED, GLOSSES, Stage
from dealroom.domain.seats import Seat

PAYMENT_ACTOR: Final = "payment"


def _text(stage: Stage, news: str) -> str:
    booked = "This is a booking." if stage in BOOKED else "It is not booked yet."
    return f"{news} Stage: {stage.value} — {GLOSSES[stage]}. {booked}"


def notices(stage: Stage, version: int, actor: str) -> dict[Seat, str]:
    """The notice for each pane the change concerns (SN1, SN2); empty when none does."""
    v = f"version {version} of the written offer"
    clicked = Seat(actor) if actor in (Seat.HOST.value, Seat.VISITOR.value) else None
    told: dict[Seat, str] = {}
    match stage:
        case Stage.WRITTEN_AWAITING_BRAND:
            told[Seat.VISITOR] = _text(
                stage, f"The talent's side drew {v}; approving it in the offer is your step."
            )
            told[Seat.HOST] = _text(stage, f"{v[0].upper()}{v[1:]} is drawn and sent to the brand.")
        case Stage.BRAND_ACKED_AWAITING_TALENT:
            told[Seat.HOST] = _text(
                stage, f"The brand approved {v}; your approval in the offer books it."
            )
        case Stage.BOOKED_AWAITING_PAYMENT:
            if actor == PAYMENT_ACTOR:
                told[Seat.VISITOR] = _text(
                    stage,
                    "The card payment did not go through; pay again with View payment in the "
                    "offer, never in chat.",
                )
            else:
                told[Seat.VISITOR] = _text(
                    stage,
                    f"The talent approved {v}: it is booked. Payment is made with View payment "
                    "in the offer, never in chat.",
                )
        case Stage.PENDING_PAY_CAPTURE:
            told[Seat.VISITOR] = _text(
                stage, "The card was submitted; the payment is being captured, not held yet."
            )
        case Stage.BOOKED_PAYMENT_HELD:
            told[Seat.VISITOR] = _text(stage, "The payment is captured and held.")
            told[Seat.HOST] = _text(stage, f"The brand's payment for {v} is captured and held.")
        case Stage.COMPLETED | Stage.DISPUTED:
            told[Seat.VISITOR] = _text(
                stage, f"The booked work under {v} is {stage.value.lower()}."
            )
            told[Seat.HOST] = _text(stage, f"The booked work under {v} is {stage.value.lower()}.")
        case Stage.DECLINED | Stage.WITHDRAWN:
            news = f"{v[0].upper()}{v[1:]} is closed."
            told[Seat.VISITOR] = _text(stage, news)
            told[Seat.HOST] = _text(stage, news)
        case Stage.NO_WRITTEN_OFFER:
            pass
        case _:
            assert_never(stage)
    if clicked is not None:
        told.pop(clicked, None)  # SN1
    return told
