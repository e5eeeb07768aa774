"""The Stripe-compatible server the payment tests run against: ``localstripe`` (PyPI), started
as a subprocess on a free loopback port, with the official SDK pointed at it; and Stripe-signed
events for what localstripe does not send (an authorization, a dispute), signed the way Stripe
documents (``Stripe-Signature: t=<unix time>,v1=<HMAC-SHA256 of "t.payload" with the endpoint
secret>``) so the SDK's own verification is what checks them."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import stripe

from tests.support.processes import free_port

SECRET_KEY = "sk_test_dealroom"
PUBLISHABLE_KEY = "pk_test_dealroom"
WEBHOOK_SECRET = "whsec_dealroom_test"
CARD_OK = "4242424242424242"
CARD_DECLINED = "4000000000000341"
"""localstripe declines charging this card (Stripe's documented 'attach succeeds, charge
fails' test card)."""


@dataclass
class LocalStripe:
    base_url: str
    client: stripe.StripeClient

    async def card(self, number: str = CARD_OK) -> str:
        """A PaymentMethod for a test card, as Stripe.js would create from Elements."""
        method = await self.client.v1.payment_methods.create_async(
            {
                "type": "card",
                "card": {"number": number, "exp_month": 12, "exp_year": 2034, "cvc": "123"},
            }
        )
        return str(method.id)

    async def confirm(self, intent_id: str) -> Any:
        """The payer's browser confirming the PaymentIntent (Stripe.js's confirmCardPayment
        does this request)."""
        return await self.client.v1.payment_intents.confirm_async(intent_id)

    async def intent(self, intent_id: str) -> dict[str, Any]:
        """The PaymentIntent as Stripe's JSON (a webhook's ``data.object``)."""
        async with httpx.AsyncClient(base_url=self.base_url) as http:
            response = await http.get(f"/v1/payment_intents/{intent_id}", auth=(SECRET_KEY, ""))
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    async def intents(self) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=self.base_url) as http:
            response = await http.get("/v1/payment_intents?limit=100", auth=(SECRET_KEY, ""))
        response.raise_for_status()
        data: list[dict[str, Any]] = response.json()["data"]
        return data

    async def send_webhooks_to(self, url: str) -> None:
        """localstripe's own webhook configuration: it signs each event with the secret."""
        async with httpx.AsyncClient(base_url=self.base_url) as http:
            response = await http.post(
                "/_config/webhooks/dealroom", data={"url": url, "secret": WEBHOOK_SECRET}
            )
        response.raise_for_status()


@contextlib.asynccontextmanager
async def running_localstripe() -> AsyncIterator[LocalStripe]:
    port = free_port()
    with tempfile.TemporaryDirectory() as cwd:
        process = _start(port, cwd)
        base_url = f"http://127.0.0.1:{port}"
        http_client = stripe.HTTPXClient()
        try:
            await _wait_up(base_url, process)
            client = stripe.StripeClient(
                SECRET_KEY, base_addresses={"api": base_url}, http_client=http_client
            )
            yield LocalStripe(base_url, client)
        finally:
            await http_client.close_async()  # type: ignore[no-untyped-call]
            process.terminate()
            process.wait(10)


def _start(port: int, cwd: str) -> subprocess.Popen[bytes]:
    """``--from-scratch``: it never loads the store another run left in /tmp."""
    return subprocess.Popen(
        [sys.executable, "-m", "localstripe", "--port", str(port), "--from-scratch"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _wait_up(base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(base_url=base_url) as http:
        while time.monotonic() < deadline:
            assert process.poll() is None, "localstripe exited"
            with contextlib.suppress(httpx.TransportError):
                response = await http.get("/v1/balance", auth=(SECRET_KEY, ""))
                if response.status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise AssertionError("localstripe did not start")


def signed(
    event: dict[str, Any], secret: str = WEBHOOK_SECRET, at: int | None = None
) -> tuple[bytes, str]:
    """The body and ``Stripe-Signature`` header Stripe would send for ``event``."""
    payload = json.dumps(event).encode()
    timestamp = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256)
    return payload, f"t={timestamp},v1={mac.hexdigest()}"


def event(event_type: str, obj: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
    """An event in the shape of Stripe's published fixtures (``object: event``, ``data.object``
    the resource as the API returns it)."""
    return {
        "id": event_id or f"evt_{uuid.uuid4().hex[:24]}",
        "object": "event",
        "api_version": "2024-06-20",
        "created": int(time.time()),
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": event_type,
        "data": {"object": obj},
    }


def dispute(intent: dict[str, Any], reason: str = "fraudulent") -> dict[str, Any]:
    """A ``dispute`` object as in Stripe's API reference (localstripe has no disputes)."""
    return {
        "id": f"dp_{uuid.uuid4().hex[:24]}",
        "object": "dispute",
        "amount": intent["amount"],
        "currency": intent["currency"],
        "charge": (intent.get("latest_charge") or {}).get("id")
        if isinstance(intent.get("latest_charge"), dict)
        else intent.get("latest_charge"),
        "payment_intent": intent["id"],
        "reason": reason,
        "status": "needs_response",
        "created": int(time.time()),
        "livemode": False,
        "evidence_details": {"due_by": int(time.time()) + 7 * 86400, "has_evidence": False},
    }
