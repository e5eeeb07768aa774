"""ST1: the stage is derived by code from the offers row, one table (ARCHITECTURE.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dealroom.domain.offer_stage import (
    BOOKED,
    GLOSSES,
    OfferRow,
    OfferStatus,
    Stage,
    deal_stage_block,
    derive_stage,
    vocabulary,
)

STAMP = datetime(2026, 11, 30, tzinfo=UTC)

TABLE = [
    (None, Stage.NO_WRITTEN_OFFER),
    (OfferRow(OfferStatus.APPROVED, None), Stage.WRITTEN_AWAITING_BRAND),
    (OfferRow(OfferStatus.APPROVED, STAMP), Stage.BRAND_ACKED_AWAITING_TALENT),
    (OfferRow(OfferStatus.ACCEPTED, STAMP), Stage.BOOKED_AWAITING_PAYMENT),
    (OfferRow(OfferStatus.PENDING_PAY_CAPTURE, STAMP), Stage.PENDING_PAY_CAPTURE),
    (OfferRow(OfferStatus.PAYMENT_HELD, STAMP), Stage.BOOKED_PAYMENT_HELD),
    (OfferRow(OfferStatus.COMPLETED, STAMP), Stage.COMPLETED),
    (OfferRow(OfferStatus.DISPUTED, STAMP), Stage.DISPUTED),
    (OfferRow(OfferStatus.REJECTED, None), Stage.DECLINED),
    (OfferRow(OfferStatus.WITHDRAWN, None), Stage.WITHDRAWN),
]


@pytest.mark.parametrize(("row", "stage"), TABLE)
def test_st1_the_table(row: OfferRow | None, stage: Stage) -> None:
    assert derive_stage(row) is stage


def test_every_status_derives_a_stage_whatever_the_stamp() -> None:
    for status in OfferStatus:
        for stamp in (None, STAMP):
            assert derive_stage(OfferRow(status, stamp)) in set(Stage)


def test_only_accepted_and_after_are_a_booking() -> None:
    booked = {s for s in Stage if s in BOOKED}
    assert booked == {
        Stage.BOOKED_AWAITING_PAYMENT,
        Stage.PENDING_PAY_CAPTURE,
        Stage.BOOKED_PAYMENT_HELD,
        Stage.COMPLETED,
        Stage.DISPUTED,
    }
    assert "This is not a booking." in deal_stage_block(Stage.BRAND_ACKED_AWAITING_TALENT)
    assert "This is a booking." in deal_stage_block(Stage.BOOKED_AWAITING_PAYMENT)


def test_the_vocabulary_names_every_stage_and_no_offers_system_label_as_a_stage() -> None:
    text = vocabulary()
    for stage in Stage:
        assert f"- {stage.value}: {GLOSSES[stage]}" in text
    # APPROVED / ACCEPTED are offers-system labels: never offered to a model as a stage.
    assert "- APPROVED" not in text
    assert "- ACCEPTED" not in text
