"""W1, W2, W4: which events a stage change is, the retry schedule, and refused addresses."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from dealroom.domain.webhooks import (
    DestinationError,
    EventType,
    RetryPolicy,
    check_addresses,
    check_url,
    events_for_stage,
    parse_events,
)


def test_w1_first_stage_is_created_later_ones_changed_payments_named() -> None:
    first = events_for_stage(
        first=True, stage="WRITTEN_AWAITING_BRAND", previous=None, actor="offer_gen"
    )
    assert first == [EventType.OFFER_CREATED]
    held = events_for_stage(
        first=False, stage="BOOKED_PAYMENT_HELD", previous="PENDING_PAY_CAPTURE", actor="payment"
    )
    assert held == [EventType.OFFER_STAGE_CHANGED, EventType.PAYMENT_CAPTURED]
    back = events_for_stage(
        first=False,
        stage="BOOKED_AWAITING_PAYMENT",
        previous="PENDING_PAY_CAPTURE",
        actor="payment",
    )
    assert back == [EventType.OFFER_STAGE_CHANGED, EventType.PAYMENT_DECLINED]
    booked = events_for_stage(
        first=False,
        stage="BOOKED_AWAITING_PAYMENT",
        previous="BRAND_ACKED_AWAITING_TALENT",
        actor="host",
    )
    assert booked == [EventType.OFFER_STAGE_CHANGED]


def test_w1_events_are_validated() -> None:
    assert parse_events(["offer.created", "offer.created"]) == [EventType.OFFER_CREATED]
    with pytest.raises(ValueError, match="Unknown"):
        parse_events(["offer.deleted"])
    with pytest.raises(ValueError, match="at least one"):
        parse_events([])


def test_w2_backoff_is_exponential_jittered_and_capped() -> None:
    policy = RetryPolicy(timedelta(seconds=5), timedelta(hours=1), timedelta(hours=24))
    rng = random.Random(7)
    for attempts in range(1, 30):
        delay = policy.next_delay(attempts, rng)
        ceiling = min(timedelta(hours=1), timedelta(seconds=5) * 2 ** (attempts - 1))
        assert ceiling / 2 <= delay <= ceiling
    assert policy.gives_up(timedelta(hours=24))
    assert not policy.gives_up(timedelta(hours=23, minutes=59))


@pytest.mark.parametrize("attempts", [44, 45, 100, 10_000])
def test_w2_many_attempts_stay_at_the_cap(attempts: int) -> None:
    """A day of failures at jittered 30-60 min apart is ~45 attempts; the ceiling must not
    overflow timedelta on the way to the cap (it did at the 45th: the worker's batch raised)."""
    policy = RetryPolicy(timedelta(seconds=5), timedelta(hours=1), timedelta(hours=24))
    delay = policy.next_delay(attempts, random.Random(attempts))
    assert timedelta(minutes=30) <= delay <= timedelta(hours=1)


@pytest.mark.parametrize(
    "address",
    ["10.1.2.3", "172.16.0.1", "192.168.0.1", "169.254.169.254", "0.0.0.0", "fd00::1", "::"],
)
def test_w4_private_and_reserved_addresses_are_refused(address: str) -> None:
    with pytest.raises(DestinationError):
        check_addresses([address], allow_loopback=True)


def test_w4_loopback_only_when_allowed_and_public_passes() -> None:
    with pytest.raises(DestinationError):
        check_addresses(["127.0.0.1"], allow_loopback=False)
    with pytest.raises(DestinationError):
        check_addresses(["::ffff:127.0.0.1"], allow_loopback=False)
    check_addresses(["127.0.0.1", "::1"], allow_loopback=True)
    check_addresses(["93.184.216.34"], allow_loopback=False)
    with pytest.raises(DestinationError, match="private"):
        check_addresses(["93.184.216.34", "10.0.0.1"], allow_loopback=False)


def test_w4_urls_are_http_without_credentials() -> None:
    assert check_url("https://hooks.example.com/x") == "hooks.example.com"
    for bad in ("ftp://example.com/", "https://user:pw@example.com/", "not a url"):
        with pytest.raises(DestinationError):
            check_url(bad)
