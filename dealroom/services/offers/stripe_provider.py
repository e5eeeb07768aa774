"""Stripe behind the payment provider protocol, through the official SDK's async client.

A charge is a PaymentIntent with ``capture_method=manual`` for the quoted total in minor
units: authorizing it is the hold (the offer's BOOKED_PAYMENT_HELD), capturing it is the
release, cancelling it gives the hold back, and a refund returns released funds. Every write
carries an Idempotency-Key (the SDK resends the same key on its retries after a timeout or a
5xx), so a retry never makes a second PaymentIntent, capture or refund at Stripe.

The stage never moves on what this module returns to a payer's browser (the client secret);
it moves on Stripe's word: a verified webhook (``verify_event``), the reconciliation sweep's
re-read of the PaymentIntent (``status``), or Stripe's own answer to a capture or cancel.

Payouts to hosts are Stripe Connect transfers; ``transfer`` is that seam. It refuses with
UNAVAILABLE until a Connect account is configured, so a payout is listed as owed, never
silently reported as sent.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Final

import stripe

from dealroom.domain import payment_life
from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found
from dealroom.services.offers.provider import Charge, ChargeStatus

ELEMENTS_METHOD: Final = "stripe"
"""The payment method a client names when its browser will attach the card with Stripe
Elements on confirming; a ``pm_...`` id names a method the payer already has."""

CANCELLED_MESSAGE: Final = "The payment was cancelled before it was taken."


class StripeProvider:
    """The ``PaymentProvider`` for ``DEALROOM_PAYMENT_PROVIDER=stripe``."""

    name: str = "stripe"

    def __init__(
        self,
        secret_key: str,
        *,
        publishable_key: str | None,
        webhook_secret: str | None,
        api_base: str | None = None,
        max_network_retries: int = 2,
        timeout_seconds: float = 20.0,
        webhook_tolerance_seconds: int = 300,
    ) -> None:
        self.publishable_key = publishable_key
        self._webhook_secret = webhook_secret
        self._tolerance = webhook_tolerance_seconds
        self._http = stripe.HTTPXClient(timeout=timeout_seconds)
        self._client = stripe.StripeClient(
            secret_key,
            base_addresses={"api": api_base} if api_base else None,
            max_network_retries=max_network_retries,
            http_client=self._http,
        )

    async def close(self) -> None:
        await self._http.close_async()  # type: ignore[no-untyped-call]

    async def charge(
        self, *, amount: Decimal, currency: str, payment_method: str, idempotency_key: str
    ) -> Charge:
        units = payment_life.to_minor(amount, currency)
        params: dict[str, Any] = {
            "amount": units,
            "currency": currency.lower(),
            "capture_method": "manual",
            "metadata": {"dealroom_key": idempotency_key},
        }
        if payment_method.startswith("pm_"):
            params["payment_method"] = payment_method
        elif payment_method != ELEMENTS_METHOD:
            raise bad_input(
                f"Pay with {ELEMENTS_METHOD!r} (Stripe Elements) or a pm_ payment method id.",
                "paymentMethod",
            )
        intent = await self._call(
            self._client.v1.payment_intents.create_async(
                params,  # type: ignore[arg-type]
                {"idempotency_key": idempotency_key},
            )
        )
        charge = _charge(intent)
        mismatch = payment_life.amount_mismatch(amount, currency, intent.amount, intent.currency)
        if mismatch is not None:  # PL6
            raise DomainError(
                ErrorCode.CONFLICT,
                "The provider holds another amount than the offer's; refused.",
                reason="AMOUNT_MISMATCH",
            )
        return charge

    async def status(self, reference: str) -> Charge:
        return _charge(await self._call(self._client.v1.payment_intents.retrieve_async(reference)))

    async def release(self, reference: str, *, idempotency_key: str) -> Charge:
        intent = await self._call(
            self._client.v1.payment_intents.capture_async(
                reference, None, {"idempotency_key": idempotency_key}
            )
        )
        return _charge(intent)

    async def cancel(self, reference: str, *, idempotency_key: str) -> Charge:
        intent = await self._call(
            self._client.v1.payment_intents.cancel_async(
                reference, None, {"idempotency_key": idempotency_key}
            )
        )
        return _charge(intent)

    async def refund(
        self, reference: str, *, amount: Decimal, currency: str, idempotency_key: str
    ) -> str:
        refund = await self._call(
            self._client.v1.refunds.create_async(
                {
                    "payment_intent": reference,
                    "amount": payment_life.to_minor(amount, currency),
                },
                {"idempotency_key": idempotency_key},
            )
        )
        return str(refund.id)

    async def transfer(self, *, destination: str | None, amount: Decimal, currency: str) -> str:
        """The Connect transfer of what is owed to a host. No Connect account is configured
        (and the local Stripe-compatible server has no Connect), so it refuses rather than
        pretend: the payout stays owed."""
        raise DomainError(
            ErrorCode.UNAVAILABLE,
            "Payouts to hosts need Stripe Connect, which is not configured.",
            reason="CONNECT_NOT_CONFIGURED",
        )

    def verify_event(self, payload: bytes, signature: str | None) -> dict[str, Any]:
        """The event Stripe signed, as a plain dict; the SDK checks ``Stripe-Signature``
        (HMAC-SHA256 of ``t.payload`` with the endpoint secret, within the tolerance).
        Raises ``stripe.SignatureVerificationError`` on a forged, stale or unsigned body, and
        ValueError when no secret is configured or the body is not an event."""
        if not self._webhook_secret:
            raise ValueError("no webhook secret is configured: every event is refused")
        stripe.WebhookSignature.verify_header(
            payload.decode("utf-8", errors="replace"),
            signature or "",
            self._webhook_secret,
            self._tolerance,
        )
        event = json.loads(payload)
        if not isinstance(event, dict):
            raise ValueError("an event is a JSON object")
        return event

    async def _call(self, request: Any) -> Any:
        """One SDK call, its failures as coded errors (the SDK already retried what is safe to
        retry, with the same Idempotency-Key)."""
        try:
            return await request
        except stripe.CardError as exc:
            raise DomainError(
                ErrorCode.PAYMENT_DECLINED, exc.user_message or "The card was declined."
            ) from exc
        except stripe.IdempotencyError as exc:
            raise DomainError(
                ErrorCode.CONFLICT,
                "This idempotency key was already used for a different charge.",
                field="idempotencyKey",
            ) from exc
        except stripe.InvalidRequestError as exc:
            if exc.http_status == 404:
                raise not_found("Payment") from exc
            raise DomainError(
                ErrorCode.CONFLICT, "The payment provider refused the request.", reason="PROVIDER"
            ) from exc
        except (stripe.APIConnectionError, stripe.APIError, stripe.RateLimitError) as exc:
            raise DomainError(
                ErrorCode.UNAVAILABLE,
                "The payment provider did not answer; retry with the same idempotency key.",
                retryAfterSeconds=5,
            ) from exc


def _charge(intent: Any) -> Charge:
    """A PaymentIntent as a ``Charge``: authorized or captured is held (CAPTURED), cancelled
    or failed is DECLINED, anything still in the payer's hands is PENDING."""
    status = str(intent.status)
    secret = getattr(intent, "client_secret", None)
    units = int(intent.amount)
    currency = str(intent.currency).upper()
    if status in ("requires_capture", "succeeded"):
        return Charge(str(intent.id), ChargeStatus.CAPTURED, None, secret, units, currency)
    if status == "canceled":
        return Charge(
            str(intent.id), ChargeStatus.DECLINED, CANCELLED_MESSAGE, secret, units, currency
        )
    error = getattr(intent, "last_payment_error", None)
    if status == "requires_payment_method" and error:
        message = str(getattr(error, "message", None) or "The payment was declined.")
        return Charge(str(intent.id), ChargeStatus.DECLINED, message, secret, units, currency)
    return Charge(str(intent.id), ChargeStatus.PENDING, None, secret, units, currency)
