"""SN1-SN2 (dealroom/domain/stage_notices.py) and GN1 (dealroom/domain/goal_notices.py)."""

from __future__ import annotations

import pytest

from dealroom.domain import goal_notices, pane_words, stage_notices
from dealroom.domain.offer_stage import BOOKED, Stage
from dealroom.domain.offers import Action
from dealroom.domain.seats import Seat


def test_sn1_the_side_that_clicked_is_not_told() -> None:
    assert set(stage_notices.notices(Stage.DECLINED, 2, "host")) == {Seat.VISITOR}
    assert set(stage_notices.notices(Stage.DECLINED, 2, "visitor")) == {Seat.HOST}
    assert set(stage_notices.notices(Stage.DECLINED, 2, "persona")) == {Seat.HOST, Seat.VISITOR}


def test_sn1_who_hears_which_change() -> None:
    told = {
        stage: set(stage_notices.notices(stage, 1, actor))
        for stage, actor in [
            (Stage.WRITTEN_AWAITING_BRAND, "offer_gen"),
            (Stage.BRAND_ACKED_AWAITING_TALENT, "visitor"),
            (Stage.BOOKED_AWAITING_PAYMENT, "host"),
            (Stage.PENDING_PAY_CAPTURE, "payment"),
            (Stage.BOOKED_PAYMENT_HELD, "payment"),
        ]
    }
    assert told == {
        Stage.WRITTEN_AWAITING_BRAND: {Seat.HOST, Seat.VISITOR},
        Stage.BRAND_ACKED_AWAITING_TALENT: {Seat.HOST},
        Stage.BOOKED_AWAITING_PAYMENT: {Seat.VISITOR},
        Stage.PENDING_PAY_CAPTURE: {Seat.VISITOR},
        Stage.BOOKED_PAYMENT_HELD: {Seat.HOST, Seat.VISITOR},
    }
    assert stage_notices.notices(Stage.NO_WRITTEN_OFFER, 1, "persona") == {}


@pytest.mark.parametrize("stage", list(Stage))
@pytest.mark.parametrize("actor", ["host", "visitor", "payment", "offer_gen", "persona"])
def test_sn2_a_notice_is_people_words_and_calls_only_a_booking_booked(
    stage: Stage, actor: str
) -> None:
    for text in stage_notices.notices(stage, 3, actor).values():
        assert pane_words.labels_in(text) == []  # PW1: no stage label, no field name
        assert text.count(".") <= 1  # one short sentence
        if stage not in BOOKED:
            assert "booked" not in text.replace("not booked", "")


@pytest.mark.parametrize(
    ("stage", "actor", "seat", "action"),
    [
        (Stage.WRITTEN_AWAITING_BRAND, "offer_gen", Seat.VISITOR, Action.APPROVE),
        (Stage.BRAND_ACKED_AWAITING_TALENT, "visitor", Seat.HOST, Action.APPROVE),
        (Stage.BOOKED_AWAITING_PAYMENT, "host", Seat.VISITOR, Action.PAY),
        (Stage.BOOKED_AWAITING_PAYMENT, "payment", Seat.VISITOR, Action.PAY),
    ],
)
def test_sn2_the_next_step_is_named_by_the_buttons_real_label(
    stage: Stage, actor: str, seat: Seat, action: Action
) -> None:
    text = stage_notices.notices(stage, 1, actor)[seat]
    assert pane_words.button(action) in text


def test_a_declined_capture_tells_the_brand_to_pay_again_in_the_offer() -> None:
    [(seat, text)] = stage_notices.notices(Stage.BOOKED_AWAITING_PAYMENT, 1, "payment").items()
    assert seat is Seat.VISITOR
    assert "didn't go through" in text
    assert "never take card details in chat" in text


def test_gn1_only_the_table_notifies_and_never_the_pane_that_ruled() -> None:
    assert set(goal_notices.notices("new-offer", "abandoned", ruled_in="visitor")) == {Seat.HOST}
    assert goal_notices.notices("new-offer", "abandoned", ruled_in="host") == {}
    assert goal_notices.notices("new-offer", "met", ruled_in="visitor") == {}
    assert goal_notices.notices("campaign", "abandoned", ruled_in="visitor") == {}
    assert goal_notices.notices("new-offer", "bogus", ruled_in="visitor") == {}
