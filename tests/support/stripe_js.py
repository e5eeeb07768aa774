"""The Stripe.js the browser tests load (``DEALROOM_STRIPE_JS_URL``): localstripe's own
stand-in (what it serves at ``/js.stripe.com/v3/``: ``Stripe()``, ``elements()``, its card
element's inputs), served from a loopback server with the one call it lacks completed.

localstripe's ``confirmCardPayment`` ignores the card element: it only finishes 3-D Secure on a
PaymentIntent already waiting for it (``requires_action``), and its ``/confirm`` answers 500 to
a ``payment_method``. Real Stripe.js attaches the typed card as a PaymentMethod and confirms
the PaymentIntent. Here the page posts the card and the client secret to this server, which
does what Stripe's API does against localstripe with the secret key (so the browser never
holds it): create the PaymentMethod, set it on the PaymentIntent (after checking the client
secret, as Stripe does), confirm. Everything else in the script is localstripe's own::

    async with running_stripe_js(localstripe) as stripe_js:
        settings.stripe_js_url = stripe_js.url
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
import stripe
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from dealroom.server import start_in_background
from tests.support.localstripe import LocalStripe

# Appended to localstripe's script: LOCALSTRIPE_BASE_API is this server's origin (the script
# is served at /js.stripe.com/v3/, the path localstripe strips to find its base).
CONFIRM_WITH_CARD = """
(function () {
  const mock = Stripe;
  Stripe = function (publishableKey) {
    const client = mock(publishableKey);
    client.confirmCardPayment = async function (clientSecret, data) {
      const element = data && data.payment_method && data.payment_method.card;
      if (!element || !element.value) {
        return { error: { message: "Your card number is incomplete." } };
      }
      const response = await fetch(LOCALSTRIPE_BASE_API + "/_confirm", {
        method: "POST",
        body: JSON.stringify({ client_secret: clientSecret, card: element.value.card }),
      });
      return await response.json();
    };
    return client;
  };
})();
"""


@dataclass
class StripeJs:
    url: str
    confirmed: list[str]
    """PaymentIntents confirmed through the page, in order."""


@asynccontextmanager
async def running_stripe_js(localstripe: LocalStripe) -> AsyncIterator[StripeJs]:
    async with httpx.AsyncClient(base_url=localstripe.base_url) as http:
        response = await http.get("/js.stripe.com/v3/")
    response.raise_for_status()
    script = response.text + CONFIRM_WITH_CARD
    confirmed: list[str] = []

    async def stripe_js(_request: Request) -> Response:
        return Response(script, media_type="application/javascript")

    async def confirm(request: Request) -> Response:
        """Stripe's confirm with ``payment_method_data``, as localstripe can do it."""
        body = json.loads(await request.body())
        secret = str(body["client_secret"])
        intent_id = secret.split("_secret_")[0]
        card = body["card"]
        client = localstripe.client.v1
        try:
            intent = await client.payment_intents.retrieve_async(intent_id)
            if intent.client_secret != secret:
                return _cors({"error": {"message": "No such payment_intent."}}, 401)
            method = await client.payment_methods.create_async(
                {
                    "type": "card",
                    "card": {
                        "number": str(card["number"]).replace(" ", ""),
                        "exp_month": int(card["exp_month"]),
                        "exp_year": int(card["exp_year"]),
                        "cvc": str(card["cvc"]),
                    },
                }
            )
            await client.payment_intents.update_async(intent_id, {"payment_method": method.id})
            done = await client.payment_intents.confirm_async(intent_id)
        except stripe.StripeError as exc:
            return _cors({"error": {"message": exc.user_message or str(exc)}}, 402)
        confirmed.append(intent_id)
        return _cors({"paymentIntent": {"id": done.id, "status": done.status}})

    app = Starlette(
        routes=[
            Route("/js.stripe.com/v3/", stripe_js),
            Route("/_confirm", confirm, methods=["POST"]),
        ]
    )
    running = await start_in_background(app)
    try:
        yield StripeJs(f"http://127.0.0.1:{running.port}/js.stripe.com/v3/", confirmed)
    finally:
        await running.stop()


def _cors(body: dict[str, object], status: int = 200) -> Response:
    """The page is on the dealroom server's origin; this is a cross-origin answer to it."""
    return JSONResponse(body, status_code=status, headers={"access-control-allow-origin": "*"})
