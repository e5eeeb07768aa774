"""The price table against a maintained source: genai-prices' bundled Google data.

genai-prices is a dev dependency only; the server prices with ``agents/models/pricing.py`` and
never imports it (docs/DECISIONS.md). This check fails when Google's list prices, as the library
records them, move away from ours, or when we price a model it does not know. It reads the data
shipped in the installed wheel and nothing else: no ``UpdatePrices``, and sockets refuse to connect
while it runs. Upgrading genai-prices (its range is pinned in pyproject's dev extras) is how the
check learns of new prices.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import genai_prices
import pytest
from genai_prices import data as bundled
from genai_prices.data_snapshot import DataSnapshot
from genai_prices.types import ModelInfo, ModelPrice, TieredPrices

from dealroom.agents.models.base import Usage
from dealroom.agents.models.pricing import PRICES, QUANTUM, PriceTiers, Rates, price

PROVIDER = "google"

UNKNOWN_TO_LIBRARY: Mapping[str, str] = {}
"""Models we price that genai-prices does not list, each with why we still price it.
Empty: the library knows every model in PRICES. An entry here is checked to still be unknown
to the library, so it must be removed (and the rates compared) once the library catches up."""


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the genai-prices check must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def _snapshot() -> DataSnapshot:
    """The wheel's own data, never a snapshot an ``UpdatePrices`` may have installed."""
    return DataSnapshot(providers=bundled.providers, from_auto_update=False)


def _library_model(model: str) -> ModelInfo | None:
    try:
        _provider, info = _snapshot().find_provider_model(model, None, PROVIDER, None)
    except LookupError:
        return None
    return info


def _base(value: Decimal | TieredPrices | None) -> Decimal | None:
    return value.base if isinstance(value, TieredPrices) else value


def _as_tiers(model: str, prices: ModelPrice) -> PriceTiers:
    """The library's text-token prices in our table's shape; a shape we cannot express fails."""
    keys = ("input_mtok", "cache_read_mtok", "output_mtok")
    values: list[Decimal | TieredPrices | None] = [getattr(prices, key, None) for key in keys]
    missing = [key for key, value in zip(keys, values, strict=True) if value is None]
    assert not missing, f"genai-prices has no {missing} price for {model!r}: {prices}"
    base = Rates(*(_base(value) or Decimal(0) for value in values))
    tiered = [value for value in values if isinstance(value, TieredPrices)]
    if not tiered:
        return PriceTiers(base)
    # One threshold shared by input, cached input and output, as our PriceTiers has it.
    cannot = f"genai-prices prices {model!r} in tiers our table cannot express: {prices!r}"
    assert len(tiered) == len(values), cannot
    assert {tuple(tier.start for tier in value.tiers) for value in tiered} == {
        (tiered[0].tiers[0].start,)
    }, cannot
    long_prompt = Rates(*(value.tiers[0].price for value in tiered))
    return PriceTiers(
        base, long_prompt_rates=long_prompt, long_prompt_above=tiered[0].tiers[0].start
    )


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("model", sorted(PRICES))
def test_rates_match_genai_prices(model: str) -> None:
    info = _library_model(model)
    if model in UNKNOWN_TO_LIBRARY:
        if info is not None:
            pytest.fail(
                f"genai-prices {genai_prices.__version__} now knows {model!r} (as {info.id!r}): "
                "remove it from UNKNOWN_TO_LIBRARY so its rates are compared"
            )
        return
    assert info is not None, (
        f"genai-prices {genai_prices.__version__} has no {PROVIDER} model {model!r}: check "
        "Google's pricing page and list it in UNKNOWN_TO_LIBRARY with the reason, or drop it"
    )
    assert info.id == model, f"genai-prices matched {model!r} to a different model, {info.id!r}"
    theirs = _as_tiers(model, info.get_prices(datetime.now(UTC)))
    # PriceTiers compares Decimals by value: 0.30 equals the library's 0.3.
    notes = info.price_comments or "none"
    assert PRICES[model] == theirs, (
        f"{model!r}: ours {PRICES[model]} != genai-prices {genai_prices.__version__} {theirs}; "
        f"check Google's pricing page and correct whichever is wrong (library notes: {notes})"
    )


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("model", sorted(set(PRICES) - set(UNKNOWN_TO_LIBRARY)))
@pytest.mark.parametrize(
    "usage",
    [
        Usage(input_tokens=12_345, cached_tokens=4_000, output_tokens=678),
        # Over gemini-2.5-pro's 200k-token tier; one token past it, where tiers begin.
        Usage(input_tokens=200_001, cached_tokens=50_000, output_tokens=2_000),
        Usage(input_tokens=200_000, cached_tokens=0, output_tokens=1),
    ],
    ids=["short", "long", "at-threshold"],
)
def test_call_price_matches_genai_prices(model: str, usage: Usage) -> None:
    """The same call costs the same both ways: cached tokens counted within input tokens,
    the long-prompt tier starting one token past its threshold."""
    theirs = _snapshot().calc(
        genai_prices.Usage(
            input_tokens=usage.input_tokens,
            cache_read_tokens=usage.cached_tokens,
            output_tokens=usage.output_tokens,
        ),
        model,
        PROVIDER,
        None,
        datetime.now(UTC),
    )
    # Ours is rounded half up to the six decimals model_calls stores; the library's is exact.
    assert price(model, usage) == theirs.total_price.quantize(QUANTUM, rounding=ROUND_HALF_UP)
