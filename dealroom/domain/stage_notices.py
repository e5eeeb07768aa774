"""What each side is told when the deal's stage changes (seed 000 "Deals move
through explicit physical stages": "Personas are told those events in this vocabulary").

A stage change is an ``offer_events`` row; code queues one short persona turn in each pane
the change concerns, told the event in people's words. The texts are composed here, by
code, from the stage and the version alone — nothing of either side's memory — so a notice
can carry nothing private.

- SN1 The side whose own click moved the stage is not told it (it saw it happen); the other
      side is. A change no participant clicked (Offer-Gen drew a version, an agent closed the
      offer, the provider captured a payment) concerns both sides, except a payment's news,
      which is the brand's — and the talent's too once the money is held.
- SN2 Every notice is one short sentence in people's words (PW1 in ``domain/pane_words.py``:
      never a stage label) that names the reader's next step by its button's label (PW3);
      only a BOOKED stage is ever called booked, and payment is always made in the offer,
      never in chat.
"""

from __future__ import annotations

from typing import Final, assert_never

from dealroom.domain.offer_stage import Stage
from dealroom.domain.offers import Action
from dealroom.domain.pane_words import button
from dealroom.domain.seats import Seat, side_of

PAYMENT_ACTOR: Final = "payment"


def notices(stage: Stage, version: int, actor: str) -> dict[Seat, str]:
    """The notice for each pane the change concerns (SN1, SN2); empty when none does."""
    clicked = side_of(actor)  # a teammate's click is its side's
    approve, pay = button(Action.APPROVE), button(Action.PAY)
    told: dict[Seat, str] = {}
    match stage:
        case Stage.WRITTEN_AWAITING_BRAND:
            drawn = (
                "The written offer is ready" if version == 1 else "The new written offer is ready"
            )
            told[Seat.VISITOR] = f"{drawn} — if it looks right, press {approve} on it."
            told[Seat.HOST] = f"{drawn} and with the brand; I'll tell you when they approve it."
        case Stage.BRAND_ACKED_AWAITING_TALENT:
            told[Seat.HOST] = f"The brand approved the written offer — press {approve} to book it."
        case Stage.BOOKED_AWAITING_PAYMENT:
            if actor == PAYMENT_ACTOR:
                told[Seat.VISITOR] = (
                    f"The card payment didn't go through — try again with {pay} on the offer; "
                    "I never take card details in chat."
                )
            else:
                told[Seat.VISITOR] = (
                    f"It's booked — press {pay} on the offer when you're ready; I never take "
                    "card details in chat."
                )
        case Stage.PENDING_PAY_CAPTURE:
            told[Seat.VISITOR] = (
                "Your card went in on the offer; the payment is still being captured."
            )
        case Stage.BOOKED_PAYMENT_HELD:
            told[Seat.VISITOR] = (
                "Your payment went through and is held — it's booked, nothing left to do."
            )
            told[Seat.HOST] = "The brand's payment went through and is held — it's booked."
        case Stage.COMPLETED:
            told[Seat.VISITOR] = "The booked work is marked complete."
            told[Seat.HOST] = "The booked work is marked complete."
        case Stage.DISPUTED:
            told[Seat.VISITOR] = "The booked work is now under dispute."
            told[Seat.HOST] = "The booked work is now under dispute."
        case Stage.DECLINED | Stage.WITHDRAWN:
            news = "The written offer is closed, so there is no booking."
            told[Seat.VISITOR] = news
            told[Seat.HOST] = news
        case Stage.NO_WRITTEN_OFFER:
            pass
        case _:
            assert_never(stage)
    if clicked is not None:
        told.pop(clicked, None)  # SN1
    return told
