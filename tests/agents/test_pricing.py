"""Prices from the list-price table: cached tokens are input tokens billed at the cached rate."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dealroom.agents.models.base import Usage
from dealroom.agents.models.pricing import PRICES, price

MILLION = 1_000_000


@pytest.mark.parametrize(
    ("model", "per_input", "per_cached", "per_output"),
    [
        ("gemini-2.5-flash", "0.30", "0.03", "2.50"),
        ("gemini-2.5-flash-lite", "0.10", "0.01", "0.40"),
        ("gemini-2.5-pro", "1.25", "0.125", "10.00"),
        ("gemini-2.0-flash", "0.10", "0.025", "0.40"),
    ],
)
def test_list_prices_per_million_tokens(
    model: str, per_input: str, per_cached: str, per_output: str
) -> None:
    # 100k tokens (a tenth of the per-million price) stay under gemini-2.5-pro's long-prompt tier.
    tenth = MILLION // 10
    assert price(model, Usage(input_tokens=tenth)) == Decimal(per_input) / 10
    assert price(model, Usage(input_tokens=tenth, cached_tokens=tenth)) == Decimal(per_cached) / 10
    assert price(model, Usage(output_tokens=tenth)) == Decimal(per_output) / 10


def test_every_listed_model_is_covered_above() -> None:
    assert set(PRICES) == {
        "gemini-2.5-flash",
        "gemini-2.5-flash-lite",
        "gemini-2.5-pro",
        "gemini-2.0-flash",
    }


def test_cached_tokens_are_part_of_the_input_and_billed_at_the_cached_rate() -> None:
    usage = Usage(input_tokens=5200, output_tokens=120, cached_tokens=4096)
    # (5200 - 4096) * 0.30 + 4096 * 0.03 + 120 * 2.50 = 331.2 + 122.88 + 300, per million
    assert price("gemini-2.5-flash", usage) == Decimal("0.000754")


def test_prices_have_six_decimals_and_round() -> None:
    result = price("gemini-2.5-flash", Usage(input_tokens=1, output_tokens=1))
    assert result == Decimal("0.000003")  # 0.0000028 rounded
    assert result is not None
    assert result.as_tuple().exponent == -6
    assert price("gemini-2.5-flash", Usage()) == Decimal("0.000000")


def test_cached_count_never_exceeds_the_input() -> None:
    assert price("gemini-2.5-flash", Usage(input_tokens=100, cached_tokens=500)) == price(
        "gemini-2.5-flash", Usage(input_tokens=100, cached_tokens=100)
    )


def test_gemini_2_5_pro_bills_long_prompts_at_the_higher_tier() -> None:
    at_limit = Usage(input_tokens=200_000, output_tokens=1000, cached_tokens=100_000)
    above = Usage(input_tokens=200_001, output_tokens=1000, cached_tokens=100_000)
    # 100k * 1.25 + 100k * 0.125 + 1k * 10.00
    assert price("gemini-2.5-pro", at_limit) == Decimal("0.147500")
    # 100,001 * 2.50 + 100k * 0.25 + 1k * 15.00 = 0.2900025, rounded half up
    assert price("gemini-2.5-pro", above) == Decimal("0.290003")


def test_offline_is_free_and_unknown_models_have_no_price() -> None:
    assert price("offline", Usage(input_tokens=MILLION, output_tokens=MILLION)) == Decimal(0)
    assert price("gemini-9-ultra", Usage(input_tokens=10)) is None


def test_the_api_resource_name_prices_like_the_model_id() -> None:
    usage = Usage(input_tokens=1000, output_tokens=10)
    assert price("models/gemini-2.5-flash", usage) == price("gemini-2.5-flash", usage)
