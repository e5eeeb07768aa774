"""Rules O1-O9 for written offers: exhaustive over every status × stamp × seat."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from dealroom.domain import offers as rules
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.offer_stage import BOOKED, OfferStatus, Stage
from dealroom.domain.seats import Seat

AT = datetime(2026, 11, 30, 12, tzinfo=UTC)

STATES = [
    rules.OfferState(status, stamp, 3)
    for status, stamp in itertools.product(OfferStatus, (None, AT))
    # ACCEPTED and later always carry the brand's stamp (O3); without one they cannot exist.
    if not (stamp is None and status not in (OfferStatus.APPROVED, *rules.CLOSED))
]


def _attempt(call: Callable[[], object]) -> object:
    """The call's result, or the DomainError it raised (asserted on outside ``except``)."""
    try:
        return call()
    except DomainError as error:
        return error


def test_roles_follow_the_seat() -> None:
    assert rules.role_of(Seat.VISITOR) is rules.Role.BRAND
    assert rules.role_of(Seat.HOST) is rules.Role.TALENT


@pytest.mark.parametrize("state", STATES, ids=lambda s: f"{s.status}-{bool(s.brand_approved_at)}")
@pytest.mark.parametrize("seat", list(Seat))
def test_approve_is_total_and_only_moves_forward(state: rules.OfferState, seat: Seat) -> None:
    """O2-O4 over the whole table: the only moves are the brand's stamp on a fresh version
    and the talent's booking after it; everything else is a no-op on a stamped or booked
    offer, or a CONFLICT naming the current stage."""
    stage = state.stage
    outcome = _attempt(lambda: rules.approve(state, seat))
    if isinstance(outcome, DomainError):
        error = outcome
        assert error.code is ErrorCode.CONFLICT
        assert error.details["stage"] == stage.value
        assert error.details["version"] == 3
        expected_conflict = (
            stage not in BOOKED
            and stage is not Stage.BRAND_ACKED_AWAITING_TALENT
            and not (seat is Seat.VISITOR and stage is Stage.WRITTEN_AWAITING_BRAND)
        )
        assert expected_conflict, f"{seat} at {stage} should not conflict"
        return
    if seat is Seat.VISITOR:
        expected = (
            rules.Approval.BRAND_STAMPED
            if stage is Stage.WRITTEN_AWAITING_BRAND
            else rules.Approval.ALREADY
        )
    else:
        expected = (
            rules.Approval.BOOKED
            if stage is Stage.BRAND_ACKED_AWAITING_TALENT
            else rules.Approval.ALREADY
        )
    assert outcome is expected
    if outcome is rules.Approval.ALREADY:
        assert stage in BOOKED or stage is Stage.BRAND_ACKED_AWAITING_TALENT


def test_the_talent_cannot_book_before_the_brand_approved_this_version() -> None:
    fresh = rules.OfferState(OfferStatus.APPROVED, None, 2)
    with pytest.raises(DomainError) as raised:
        rules.approve(fresh, Seat.HOST)
    assert raised.value.details["stage"] == "WRITTEN_AWAITING_BRAND"


def test_an_approval_of_a_stale_version_conflicts() -> None:
    stamped = rules.OfferState(OfferStatus.APPROVED, AT, 2)
    with pytest.raises(DomainError) as raised:
        rules.approve(stamped, Seat.HOST, version=1)
    assert raised.value.code is ErrorCode.CONFLICT
    assert rules.approve(stamped, Seat.HOST, version=2) is rules.Approval.BOOKED
    fresh = rules.OfferState(OfferStatus.APPROVED, None, 2)
    with pytest.raises(DomainError):
        rules.approve(fresh, Seat.VISITOR, version=1)


@pytest.mark.parametrize("version", [1, 2])
def test_a_repeated_brand_approval_of_a_booked_offer_naming_a_version_it_had_is_a_no_op(
    version: int,
) -> None:
    """An idempotent retry: the brand's approval of v1 arrives again after v2 was booked."""
    booked = rules.OfferState(OfferStatus.ACCEPTED, AT, 2)
    assert rules.approve(booked, Seat.VISITOR, version=version) is rules.Approval.ALREADY


@pytest.mark.parametrize("version", [7, 3, 0, -1])
@pytest.mark.parametrize("seat", list(Seat))
def test_an_approval_naming_a_version_that_never_existed_conflicts(
    seat: Seat, version: int
) -> None:
    """approveOffer naming a version the booked v2 offer never had (7, say) is a CONFLICT, not a
    no-op."""
    booked = rules.OfferState(OfferStatus.ACCEPTED, AT, 2)
    with pytest.raises(DomainError) as raised:
        rules.approve(booked, seat, version=version)
    assert raised.value.code is ErrorCode.CONFLICT
    assert raised.value.details["version"] == 2


@pytest.mark.parametrize(
    ("state", "old", "new", "expected"),
    [
        (None, None, "a", rules.Rewrite.MINT),
        # O10: a closed offer's room is over; a new deal is drawn in a sibling room.
        (rules.OfferState(OfferStatus.REJECTED, None, 1), "a", "a", rules.Rewrite.SIBLING),
        (rules.OfferState(OfferStatus.WITHDRAWN, AT, 1), "a", "b", rules.Rewrite.SIBLING),
        (rules.OfferState(OfferStatus.APPROVED, None, 1), "a", "a", rules.Rewrite.UNCHANGED),
        (rules.OfferState(OfferStatus.APPROVED, AT, 1), "a", "b", rules.Rewrite.NEW_VERSION),
        (rules.OfferState(OfferStatus.ACCEPTED, AT, 1), "a", "a", rules.Rewrite.UNCHANGED),
        (rules.OfferState(OfferStatus.ACCEPTED, AT, 1), "a", "b", rules.Rewrite.SIBLING),
        (rules.OfferState(OfferStatus.PAYMENT_HELD, AT, 1), "a", "b", rules.Rewrite.SIBLING),
        (rules.OfferState(OfferStatus.COMPLETED, AT, 1), "a", "b", rules.Rewrite.SIBLING),
    ],
)
def test_rewrite(
    state: rules.OfferState | None, old: str | None, new: str, expected: rules.Rewrite
) -> None:
    """O5/O6/O10: a booked or closed offer is never rewritten in its room."""
    assert rules.rewrite(state, old, new) is expected


def test_an_abandoned_room_never_mints_again() -> None:
    """O10: ruled abandoned once, the room draws no new offer, even with none written."""
    assert rules.rewrite(None, None, "a", abandoned=True) is rules.Rewrite.SIBLING


def test_the_fingerprint_covers_exactly_the_commercial_fields() -> None:
    terms = {
        "deliverables": ["sponsored post"],
        "fee": {"amount": "7500.00", "currency": "USD"},
        "dates": ["2027-03-15"],
        "usageRights": None,
        "exclusivity": None,
        "dueSlicePercent": "50",
    }
    base = rules.fingerprint(rules.commercial_fields(terms, "seller", "buyer"))
    noisy = terms | {"note": "not a commercial field"}
    assert rules.fingerprint(rules.commercial_fields(noisy, "seller", "buyer")) == base
    for field, value in [
        ("fee", {"amount": "7500.01", "currency": "USD"}),
        ("fee", {"amount": "7500.00", "currency": "EUR"}),
        ("deliverables", ["sponsored post", "reel"]),
        ("dates", ["2027-03-16"]),
        ("usageRights", "6 months"),
        ("exclusivity", "30 days"),
        ("dueSlicePercent", "40"),
    ]:
        changed = terms | {field: value}
        assert rules.fingerprint(rules.commercial_fields(changed, "seller", "buyer")) != base
    assert rules.fingerprint(rules.commercial_fields(terms, "seller", "other")) != base


@pytest.mark.parametrize("state", STATES, ids=lambda s: f"{s.status}-{bool(s.brand_approved_at)}")
@pytest.mark.parametrize("seat", list(Seat))
def test_viewer_actions_never_offer_what_the_mutations_refuse(
    state: rules.OfferState, seat: Seat
) -> None:
    actions = rules.viewer_actions(state, seat)
    approve_ok = True
    try:
        approved = rules.approve(state, seat)
    except DomainError:
        approve_ok = False
    assert (rules.Action.APPROVE in actions) == (
        approve_ok and approved is not rules.Approval.ALREADY
    )
    for action in (rules.Action.COUNTER, rules.Action.REJECT, rules.Action.ADD):
        refused = _attempt(functools.partial(rules.check_shortcut, state, action))
        if isinstance(refused, DomainError):
            assert refused.details["stage"] == state.stage.value
        assert (action in actions) == (not isinstance(refused, DomainError))
    try:
        rules.check_pay(state, seat)
        pay_ok = True
    except DomainError:
        pay_ok = False
    assert (rules.Action.PAY in actions) == pay_ok


def test_only_the_brand_pays_and_only_when_booked_awaiting_payment() -> None:
    booked = rules.OfferState(OfferStatus.ACCEPTED, AT, 1)
    rules.check_pay(booked, Seat.VISITOR)
    with pytest.raises(DomainError) as raised:
        rules.check_pay(booked, Seat.HOST)
    assert raised.value.code is ErrorCode.FORBIDDEN
    held = rules.OfferState(OfferStatus.PAYMENT_HELD, AT, 1)
    with pytest.raises(DomainError) as raised:
        rules.check_pay(held, Seat.VISITOR)
    assert raised.value.code is ErrorCode.CONFLICT
    assert raised.value.details["stage"] == "BOOKED_PAYMENT_HELD"


@pytest.mark.parametrize("status", list(OfferStatus))
def test_abandoning_closes_only_a_live_offer(status: OfferStatus) -> None:
    """O9: a booked or closed offer is left alone."""
    state = rules.OfferState(status, AT, 1)
    assert rules.closes_on_abandon(state) is (status is OfferStatus.APPROVED)
    assert rules.closes_on_abandon(None) is False


def test_seven_days_of_silence_after_the_offer_makes_a_new_campaign() -> None:
    """O11."""
    day = timedelta(days=1)
    assert rules.new_campaign(AT, [AT + 7 * day])
    assert rules.new_campaign(AT, [AT, AT + day, AT + 8 * day, AT + 8 * day])
    assert not rules.new_campaign(AT, [AT + 6 * day, AT + 12 * day])
    assert not rules.new_campaign(AT, [])  # silent still: no new terms to draw


def test_new_terms_in_a_new_campaign_go_to_a_sibling_room() -> None:
    """O11: the live offer is not re-versioned; the same terms change nothing."""
    live = rules.OfferState(OfferStatus.APPROVED, None, 1)
    assert rules.rewrite(live, "a", "b", campaign=True) is rules.Rewrite.SIBLING
    assert rules.rewrite(live, "a", "a", campaign=True) is rules.Rewrite.UNCHANGED
