"""The payment provider edge: one interface, and the local test provider behind it.

Nothing here touches the database; the service that takes a payment records the returned
``Charge`` in its own transaction. A real provider adapter must give the two guarantees the
test provider gives:

- a charge is idempotent on ``idempotency_key``: a retry with the same key (after a timeout,
  a crash between charging and committing, a client retry) returns the first charge and
  never charges again, and the same key with different parameters is refused;
- the capture status of a charge can be read back by its ``reference``, so a pending charge
  can be polled until it is captured or declined.

"Captured" here means the funds are secured for the deal and held (the offer's
BOOKED_PAYMENT_HELD): the test provider takes them at once, Stripe authorizes a manual-capture
PaymentIntent. ``release`` takes held funds for good (the brand confirmed delivery), ``cancel``
gives a whole hold back, ``refund`` returns part or all of released funds; each is idempotent on
its key like ``charge``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Final, Protocol, assert_never, runtime_checkable

from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found
from dealroom.domain.money import is_currency
from dealroom.services.clock import Clock


class ChargeStatus(StrEnum):
    CAPTURED = "captured"
    PENDING = "pending"
    DECLINED = "declined"


@dataclass(frozen=True, slots=True)
class Charge:
    reference: str
    """The provider's id for the charge; ``PaymentProvider.status`` takes it."""
    status: ChargeStatus
    message: str | None = None
    """Why a charge was declined, in words a payer can read."""
    client_secret: str | None = None
    """What a payer's browser needs to confirm the charge (Stripe's PaymentIntent client
    secret); None when the charge needs no confirmation by the payer."""
    minor_amount: int | None = None
    """The amount the provider says it holds, in minor units (None: it does not say)."""
    currency: str | None = None
    """The currency of ``minor_amount``, ISO 4217 upper case."""


class PaymentProvider(Protocol):
    name: str

    async def charge(
        self, *, amount: Decimal, currency: str, payment_method: str, idempotency_key: str
    ) -> Charge:
        """Charge ``amount`` once per ``idempotency_key``: a repeat returns the first charge,
        and a repeat with other parameters raises CONFLICT."""
        ...

    async def status(self, reference: str) -> Charge:
        """The charge as it stands now: whether a pending charge has been captured."""
        ...


@runtime_checkable
class HoldingProvider(PaymentProvider, Protocol):
    """A provider that also carries the payment's life after the hold (both providers here
    do; a provider edge a test builds may implement only ``PaymentProvider``)."""

    publishable_key: str | None
    """The key a payer's browser confirms with (Stripe.js); None when it needs none."""

    async def release(self, reference: str, *, idempotency_key: str) -> Charge:
        """Take the held funds for good (the brand confirmed delivery); CAPTURED on success."""
        ...

    async def cancel(self, reference: str, *, idempotency_key: str) -> Charge:
        """Give a whole hold back to the payer before release; DECLINED once cancelled."""
        ...

    async def refund(
        self, reference: str, *, amount: Decimal, currency: str, idempotency_key: str
    ) -> str:
        """Return ``amount`` of released funds to the payer; the refund's reference."""
        ...


def holding(provider: PaymentProvider) -> HoldingProvider:
    """``provider`` as one that releases, cancels and refunds, or CONFLICT."""
    if not isinstance(provider, HoldingProvider):
        raise DomainError(
            ErrorCode.CONFLICT, "The payment provider cannot release or refund payments."
        )
    return provider


class _Card(StrEnum):
    """The payment methods the test provider accepts; each decides the outcome."""

    OK = "test_card_ok"
    DECLINED = "test_card_declined"
    DELAYED_CAPTURE = "test_card_delayed_capture"


TEST_PAYMENT_METHODS: Final = tuple(method.value for method in _Card)

DECLINED_MESSAGE: Final = "The card was declined."


@dataclass(frozen=True, slots=True)
class _Request:
    amount: Decimal
    currency: str
    payment_method: _Card


@dataclass(frozen=True, slots=True)
class _Record:
    request: _Request
    charge: Charge
    charged_at: datetime


class TestPaymentProvider:
    """A provider that never leaves the process: the payment method decides the outcome.

    ``test_card_ok`` is captured at once, ``test_card_declined`` is declined, and
    ``test_card_delayed_capture`` stays pending until ``capture_delay`` has passed on the
    clock. Charges live in a dict on this instance, so they are process-local and gone on
    restart; that is fine for tests and local runs, never for real money. ``charge`` does not
    await, so two coroutines racing on one key cannot both charge.
    """

    __test__ = False  # a provider, not a pytest test class

    name: str = "test"
    publishable_key: str | None = None

    def __init__(self, clock: Clock, capture_delay: timedelta = timedelta(seconds=30)) -> None:
        self._clock = clock
        self._capture_delay = capture_delay
        self._by_key: dict[str, _Record] = {}
        self._by_reference: dict[str, _Record] = {}
        self._settled: dict[str, str] = {}
        self._refunds: dict[str, str] = {}

    @property
    def charges_made(self) -> int:
        """How many charges were made, declined ones included; an idempotent repeat makes
        none."""
        return len(self._by_reference)

    def charged(self, reference: str) -> tuple[Decimal, str]:
        """What the charge ``reference`` was for: (amount, currency), as this instance was
        asked to charge it (tests read it; a real provider's dashboard shows the same)."""
        record = self._by_reference.get(reference)
        if record is None:
            raise not_found("Charge")
        return record.request.amount, record.request.currency

    async def charge(
        self, *, amount: Decimal, currency: str, payment_method: str, idempotency_key: str
    ) -> Charge:
        request = _Request(amount, currency, _method(payment_method))
        if not amount.is_finite() or amount <= 0:
            raise bad_input("The amount must be a positive number.", "amount")
        if not is_currency(currency):
            raise bad_input(f"Unknown currency {currency!r}.", "currency")
        previous = self._by_key.get(idempotency_key)
        if previous is not None:
            if previous.request != request:
                raise DomainError(
                    ErrorCode.CONFLICT,
                    "This idempotency key was already used for a different charge.",
                    field="idempotencyKey",
                )
            return previous.charge  # the first response, replayed as real providers do
        now = self._clock.now()
        record = _Record(request, _outcome(request.payment_method, now), now)
        self._by_key[idempotency_key] = record
        self._by_reference[record.charge.reference] = record
        return record.charge

    async def status(self, reference: str) -> Charge:
        record = self._by_reference.get(reference)
        if record is None:
            # Another process (a `dealroom worker`, or this one before a restart) made the
            # charge: a pending reference carries its own charge time, so any process can
            # tell when its capture completes.
            charged_at = _pending_since(reference)
            if charged_at is None:
                raise not_found("Charge")
            if self._clock.now() - charged_at < self._capture_delay:
                return Charge(reference=reference, status=ChargeStatus.PENDING)
            return Charge(reference=reference, status=ChargeStatus.CAPTURED)
        if record.charge.status is not ChargeStatus.PENDING:
            return record.charge
        if self._clock.now() - record.charged_at < self._capture_delay:
            return record.charge
        return Charge(reference=reference, status=ChargeStatus.CAPTURED)

    async def release(self, reference: str, *, idempotency_key: str) -> Charge:
        held = await self.status(reference)
        if held.status is not ChargeStatus.CAPTURED:
            raise DomainError(ErrorCode.CONFLICT, "The charge is not held.")
        self._settled[reference] = "released"
        return held

    async def cancel(self, reference: str, *, idempotency_key: str) -> Charge:
        await self.status(reference)  # NOT_FOUND for a charge it never made
        self._settled[reference] = "cancelled"
        return Charge(reference, ChargeStatus.DECLINED, "Cancelled before release.")

    async def refund(
        self, reference: str, *, amount: Decimal, currency: str, idempotency_key: str
    ) -> str:
        await self.status(reference)
        return self._refunds.setdefault(idempotency_key, f"test_re_{uuid.uuid4().hex}")


def _method(payment_method: str) -> _Card:
    try:
        return _Card(payment_method)
    except ValueError:
        raise bad_input(
            f"Unknown payment method; the test provider accepts {', '.join(TEST_PAYMENT_METHODS)}.",
            "paymentMethod",
        ) from None


PENDING_PREFIX: Final = "test_ch_pending_"


def _pending_since(reference: str) -> datetime | None:
    if not reference.startswith(PENDING_PREFIX):
        return None
    try:
        micros = int(reference[len(PENDING_PREFIX) :].split("_", 1)[0])
        return datetime.fromtimestamp(micros / 1_000_000, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _outcome(method: _Card, now: datetime) -> Charge:
    reference = f"test_ch_{uuid.uuid4().hex}"
    match method:
        case _Card.OK:
            return Charge(reference, ChargeStatus.CAPTURED)
        case _Card.DECLINED:
            return Charge(reference, ChargeStatus.DECLINED, DECLINED_MESSAGE)
        case _Card.DELAYED_CAPTURE:
            micros = int(now.timestamp() * 1_000_000)
            return Charge(f"{PENDING_PREFIX}{micros}_{uuid.uuid4().hex}", ChargeStatus.PENDING)
        case _:
            assert_never(method)
