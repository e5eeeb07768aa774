"""The local test payment provider: outcomes by payment method, delayed capture on the
clock, idempotency on the key."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.services.offers.provider import (
    TEST_PAYMENT_METHODS,
    Charge,
    ChargeStatus,
    PaymentProvider,
    TestPaymentProvider,
)
from tests.support.clock import ManualClock

DELAY = timedelta(seconds=30)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def provider(clock: ManualClock) -> TestPaymentProvider:
    return TestPaymentProvider(clock, capture_delay=DELAY)


async def pay(
    provider: PaymentProvider,
    method: str = "test_card_ok",
    *,
    key: str = "key-1",
    amount: str = "4800.00",
    currency: str = "USD",
) -> Charge:
    return await provider.charge(
        amount=Decimal(amount), currency=currency, payment_method=method, idempotency_key=key
    )


def test_the_test_methods_are_the_three_cards() -> None:
    assert TEST_PAYMENT_METHODS == (
        "test_card_ok",
        "test_card_declined",
        "test_card_delayed_capture",
    )


async def test_ok_card_is_captured_at_once(provider: TestPaymentProvider) -> None:
    charge = await pay(provider, "test_card_ok")
    assert charge.status is ChargeStatus.CAPTURED
    assert charge.message is None
    assert await provider.status(charge.reference) == charge
    assert provider.charges_made == 1


async def test_declined_card_is_declined_with_a_message(provider: TestPaymentProvider) -> None:
    charge = await pay(provider, "test_card_declined")
    assert charge.status is ChargeStatus.DECLINED
    assert charge.message == "The card was declined."
    assert await provider.status(charge.reference) == charge


async def test_delayed_capture_is_pending_until_the_delay_has_passed(
    provider: TestPaymentProvider, clock: ManualClock
) -> None:
    charge = await pay(provider, "test_card_delayed_capture")
    assert charge.status is ChargeStatus.PENDING
    clock.advance(DELAY - timedelta(seconds=1))
    assert (await provider.status(charge.reference)).status is ChargeStatus.PENDING
    clock.advance(timedelta(seconds=1))
    captured = await provider.status(charge.reference)
    assert captured == Charge(charge.reference, ChargeStatus.CAPTURED)


async def test_delayed_capture_honours_a_custom_delay(clock: ManualClock) -> None:
    provider = TestPaymentProvider(clock, capture_delay=timedelta(minutes=5))
    charge = await pay(provider, "test_card_delayed_capture")
    clock.advance(timedelta(minutes=4))
    assert (await provider.status(charge.reference)).status is ChargeStatus.PENDING
    clock.advance(timedelta(minutes=1))
    assert (await provider.status(charge.reference)).status is ChargeStatus.CAPTURED


async def test_same_key_twice_charges_once(provider: TestPaymentProvider) -> None:
    first = await pay(provider, key="offer-1:slice-1")
    again = await pay(provider, key="offer-1:slice-1")
    assert again == first
    assert provider.charges_made == 1


async def test_same_key_replays_the_first_response_of_a_pending_charge(
    provider: TestPaymentProvider, clock: ManualClock
) -> None:
    first = await pay(provider, "test_card_delayed_capture")
    clock.advance(DELAY)
    assert await pay(provider, "test_card_delayed_capture") == first
    assert (await provider.status(first.reference)).status is ChargeStatus.CAPTURED
    assert provider.charges_made == 1


async def test_same_key_for_a_declined_charge_does_not_retry(
    provider: TestPaymentProvider,
) -> None:
    first = await pay(provider, "test_card_declined")
    assert await pay(provider, "test_card_declined") == first
    assert provider.charges_made == 1


async def test_different_keys_are_different_charges(provider: TestPaymentProvider) -> None:
    first = await pay(provider, key="a")
    second = await pay(provider, key="b")
    assert first.reference != second.reference
    assert provider.charges_made == 2


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param({"amount": "4800.01"}, id="amount"),
        pytest.param({"currency": "EUR"}, id="currency"),
        pytest.param({"method": "test_card_delayed_capture"}, id="method"),
    ],
)
async def test_same_key_with_other_parameters_is_a_conflict(
    provider: TestPaymentProvider, changed: dict[str, str]
) -> None:
    await pay(provider)
    with pytest.raises(DomainError) as caught:
        await pay(provider, **changed)
    assert caught.value.code is ErrorCode.CONFLICT
    assert provider.charges_made == 1


async def test_an_equal_amount_written_differently_is_the_same_charge(
    provider: TestPaymentProvider,
) -> None:
    first = await pay(provider, amount="4800.00")
    assert await pay(provider, amount="4800") == first
    assert provider.charges_made == 1


@pytest.mark.parametrize("method", ["card_4242", "", "TEST_CARD_OK", "test_card_ok "])
async def test_unknown_method_is_bad_input(provider: TestPaymentProvider, method: str) -> None:
    with pytest.raises(DomainError) as caught:
        await pay(provider, method)
    assert caught.value.code is ErrorCode.BAD_USER_INPUT
    assert caught.value.message == (
        "Unknown payment method; the test provider accepts "
        "test_card_ok, test_card_declined, test_card_delayed_capture."
    )
    assert caught.value.details == {"field": "paymentMethod"}
    assert provider.charges_made == 0


@pytest.mark.parametrize(
    ("amount", "currency", "field"),
    [
        ("0", "USD", "amount"),
        ("-1", "USD", "amount"),
        ("NaN", "USD", "amount"),
        ("1", "XXX", "currency"),
    ],
)
async def test_an_impossible_charge_is_bad_input(
    provider: TestPaymentProvider, amount: str, currency: str, field: str
) -> None:
    with pytest.raises(DomainError) as caught:
        await pay(provider, amount=amount, currency=currency)
    assert caught.value.code is ErrorCode.BAD_USER_INPUT
    assert caught.value.details == {"field": field}
    assert provider.charges_made == 0


async def test_status_of_an_unknown_reference_is_not_found(
    provider: TestPaymentProvider,
) -> None:
    with pytest.raises(DomainError) as caught:
        await provider.status("test_ch_missing")
    assert caught.value.code is ErrorCode.NOT_FOUND


async def test_another_process_can_tell_when_a_delayed_capture_completes() -> None:
    """A worker process asks about a charge made by a server process: the pending
    reference carries its charge time, so the answer does not depend on this instance."""
    clock = ManualClock()
    server = TestPaymentProvider(clock, capture_delay=timedelta(seconds=30))
    worker = TestPaymentProvider(clock, capture_delay=timedelta(seconds=30))
    charge = await server.charge(
        amount=Decimal("4800.00"),
        currency="USD",
        payment_method="test_card_delayed_capture",
        idempotency_key="k-other-process",
    )
    assert (await worker.status(charge.reference)).status is ChargeStatus.PENDING
    clock.advance(timedelta(seconds=31))
    assert (await worker.status(charge.reference)).status is ChargeStatus.CAPTURED
    with pytest.raises(DomainError) as raised:
        await worker.status("test_ch_0123")
    assert raised.value.code is ErrorCode.NOT_FOUND
