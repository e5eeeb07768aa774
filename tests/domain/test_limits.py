"""L1-L2: a host's limits are structured data code can read (domain/limits.py)."""

from decimal import Decimal

from dealroom.domain.limits import Limit, limit_entry, limits_of, private_terms_of


def test_l1_structured_limits_are_read() -> None:
    memory = {"host": {"limits": {"sponsored_post": limit_entry(Decimal(6000), "usd", "m1")}}}
    assert limits_of(memory) == {
        "sponsored_post": Limit("sponsored_post", Decimal(6000), "USD", "m1")
    }


def test_l1_malformed_limits_are_ignored_not_guessed() -> None:
    memory = {"host": {"limits": {"a": {"floor": "cheap", "currency": "USD"}, "b": "6000"}}}
    assert limits_of(memory) == {}


def test_l2_legacy_rate_floor_is_a_limit() -> None:
    memory = {"host": {"rates": {"reel": {"ask": "8000 USD", "floor": "6,000 EUR"}}}}
    assert limits_of(memory)["reel"] == Limit("reel", Decimal(6000), "EUR")


def test_private_terms_read_from_entries_or_strings() -> None:
    memory = {"host": {"private_terms": [{"text": "no alcohol", "source": "m"}, "call 555", 3]}}
    assert private_terms_of(memory) == ["no alcohol", "call 555"]
    assert private_terms_of({"host": {"public": {}}}) == []
