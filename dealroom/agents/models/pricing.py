"""What a model call costs, from Gemini's list prices (USD per million tokens).

Cached tokens are part of the input tokens and billed at the cached rate instead of the input
rate. Output tokens include thinking tokens (the Gemini client counts them as output), which
Google bills at the output rate. The offline engine costs nothing; an unknown model has no
price (``None``) rather than a guessed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from dealroom.agents.models.base import Usage

OFFLINE = "offline"
MILLION = Decimal(1_000_000)
QUANTUM = Decimal("0.000001")
"""Six decimals, as ``model_calls.price_usd`` stores them."""


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per million tokens."""

    input: Decimal
    cached_input: Decimal
    output: Decimal


@dataclass(frozen=True, slots=True)
class PriceTiers:
    """A model's rates; some models charge more for every token of a long prompt."""

    rates: Rates
    long_prompt_rates: Rates | None = None
    long_prompt_above: int = 200_000
    """Prompts of more input tokens than this are billed at ``long_prompt_rates``."""

    def for_prompt(self, input_tokens: int) -> Rates:
        if self.long_prompt_rates is not None and input_tokens > self.long_prompt_above:
            return self.long_prompt_rates
        return self.rates


def _rates(per_input: str, per_cached_input: str, per_output: str) -> Rates:
    return Rates(Decimal(per_input), Decimal(per_cached_input), Decimal(per_output))


PRICES: Mapping[str, PriceTiers] = {
    "gemini-2.5-flash": PriceTiers(_rates("0.30", "0.03", "2.50")),
    "gemini-2.5-flash-lite": PriceTiers(_rates("0.10", "0.01", "0.40")),
    "gemini-2.5-pro": PriceTiers(
        _rates("1.25", "0.125", "10.00"),
        long_prompt_rates=_rates("2.50", "0.25", "15.00"),
    ),
    "gemini-2.0-flash": PriceTiers(_rates("0.10", "0.025", "0.40")),
}
"""Text input, standard (not batch) list prices."""


def price(model: str, usage: Usage) -> Decimal | None:
    """The call's cost in USD, rounded half up to six decimals; ``None`` for a model not
    listed (``models/`` resource names price like the bare id)."""
    if model == OFFLINE:
        return Decimal(0)
    tiers = PRICES.get(model.removeprefix("models/"))
    if tiers is None:
        return None
    rates = tiers.for_prompt(usage.input_tokens)
    cached = min(usage.cached_tokens, usage.input_tokens)
    total = (
        (usage.input_tokens - cached) * rates.input
        + cached * rates.cached_input
        + usage.output_tokens * rates.output
    ) / MILLION
    return total.quantize(QUANTUM, rounding=ROUND_HALF_UP)
