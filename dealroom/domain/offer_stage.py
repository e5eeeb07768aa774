"""The one stage vocabulary (ARCHITECTURE "Offers and the stage vocabulary", seed 000
"Deals move through explicit physical stages").

The stage is derived by code from the offers row and projected into prompts at call time as
the DEAL STAGE block; no model infers it and memory never holds it. Offers-system labels
(APPROVED, ACCEPTED) are never shown to a model as if they were stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import assert_never


class OfferStatus(StrEnum):
    """The offers row's status column: an offers-system label, never a stage."""

    APPROVED = "APPROVED"
    ACCEPTED = "ACCEPTED"
    PENDING_PAY_CAPTURE = "PENDING_PAY_CAPTURE"
    PAYMENT_HELD = "PAYMENT_HELD"
    COMPLETED = "COMPLETED"
    DISPUTED = "DISPUTED"
    REJECTED = "REJECTED"
    WITHDRAWN = "WITHDRAWN"


class Stage(StrEnum):
    NO_WRITTEN_OFFER = "NO_WRITTEN_OFFER"
    WRITTEN_AWAITING_BRAND = "WRITTEN_AWAITING_BRAND"
    BRAND_ACKED_AWAITING_TALENT = "BRAND_ACKED_AWAITING_TALENT"
    BOOKED_AWAITING_PAYMENT = "BOOKED_AWAITING_PAYMENT"
    PENDING_PAY_CAPTURE = "PENDING_PAY_CAPTURE"
    BOOKED_PAYMENT_HELD = "BOOKED_PAYMENT_HELD"
    COMPLETED = "COMPLETED"
    DISPUTED = "DISPUTED"
    DECLINED = "DECLINED"
    WITHDRAWN = "WITHDRAWN"


GLOSSES: dict[Stage, str] = {
    Stage.NO_WRITTEN_OFFER: "terms may be agreed in chat; nothing is written",
    Stage.WRITTEN_AWAITING_BRAND: "written offer drawn; the brand has not approved it",
    Stage.BRAND_ACKED_AWAITING_TALENT: "brand approved this version; talent has not",
    Stage.BOOKED_AWAITING_PAYMENT: "talent approved the written offer: booked",
    Stage.PENDING_PAY_CAPTURE: "brand's card submitted, capture pending",
    Stage.BOOKED_PAYMENT_HELD: "payment captured and held",
    Stage.COMPLETED: "the booked work is complete",
    Stage.DISPUTED: "the booked work is disputed",
    Stage.DECLINED: "the written offer is closed",
    Stage.WITHDRAWN: "the written offer is closed",
}

BOOKED = frozenset(
    {
        Stage.BOOKED_AWAITING_PAYMENT,
        Stage.PENDING_PAY_CAPTURE,
        Stage.BOOKED_PAYMENT_HELD,
        Stage.COMPLETED,
        Stage.DISPUTED,
    }
)


@dataclass(frozen=True, slots=True)
class OfferRow:
    """The two columns a stage is derived from."""

    status: OfferStatus
    brand_approved_at: datetime | None


def derive_stage(row: OfferRow | None) -> Stage:
    """ST1: no live row is NO_WRITTEN_OFFER; otherwise the table in ARCHITECTURE.md."""
    if row is None:
        return Stage.NO_WRITTEN_OFFER
    match row.status:
        case OfferStatus.APPROVED:
            return (
                Stage.WRITTEN_AWAITING_BRAND
                if row.brand_approved_at is None
                else Stage.BRAND_ACKED_AWAITING_TALENT
            )
        case OfferStatus.ACCEPTED:
            return Stage.BOOKED_AWAITING_PAYMENT
        case OfferStatus.PENDING_PAY_CAPTURE:
            return Stage.PENDING_PAY_CAPTURE
        case OfferStatus.PAYMENT_HELD:
            return Stage.BOOKED_PAYMENT_HELD
        case OfferStatus.COMPLETED:
            return Stage.COMPLETED
        case OfferStatus.DISPUTED:
            return Stage.DISPUTED
        case OfferStatus.REJECTED:
            return Stage.DECLINED
        case OfferStatus.WITHDRAWN:
            return Stage.WITHDRAWN
        case _:
            assert_never(row.status)


def vocabulary() -> str:
    """The stage table embedded in every prompt that can name a stage (stable text)."""
    lines = ["DEAL STAGE VOCABULARY (the only words for where a deal stands):"]
    lines += [f"- {stage.value}: {GLOSSES[stage]}" for stage in Stage]
    lines.append(
        "Only BOOKED_AWAITING_PAYMENT, PENDING_PAY_CAPTURE, BOOKED_PAYMENT_HELD, COMPLETED and "
        "DISPUTED are a booking. Never call terms agreed in chat 'accepted', 'approved' or "
        "'booked'; a principal's yes in chat is an instruction to you, never a booking."
    )
    return "\n".join(lines)


def deal_stage_block(stage: Stage) -> str:
    """The DEAL STAGE block projected at call time (seed 002 layer 3)."""
    booked = "This is a booking." if stage in BOOKED else "This is not a booking."
    return (
        "--- DEAL STAGE — GROUND TRUTH (AUTHORITATIVE) ---\n"
        f"{stage.value} — {GLOSSES[stage]}. {booked}\n"
        "You read the stage; you never infer it and never move it."
    )
