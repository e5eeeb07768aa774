"""RD1/RD2: card numbers are removed before anything stores them; other numbers stay."""

from __future__ import annotations

import pytest

from dealroom.domain.redaction import CARD_PLACEHOLDER, redact_cards


@pytest.mark.parametrize(
    "card",
    [
        "4242424242424242",
        "4242 4242 4242 4242",
        "4242-4242-4242-4242",
        "5555 5555 5555 4444",
        "3782 822463 10005",  # Amex, 15 digits
        "4000 0566 5566 5556",
    ],
)
def test_a_card_number_is_removed(card: str) -> None:
    text = f"I've paid, here is my card {card}, exp 12/29"
    redacted = redact_cards(text)
    assert CARD_PLACEHOLDER in redacted
    assert card not in redacted
    assert "".join(card.split()) not in redacted.replace(" ", "")
    assert redacted.endswith(", exp 12/29")


@pytest.mark.parametrize(
    "text",
    [
        "Call me on +1 415 555 0100",
        "Order 4242424242424241 is late",  # fails the Luhn check
        "Budget is $8,000 for 3 posts on 2027-03-15",
        "Reference 123456789012",  # too short
        "Tracking 12345678901234567890123",  # too long
    ],
)
def test_other_numbers_are_kept(text: str) -> None:
    assert redact_cards(text) == text


def test_rd3_api_keys_are_removed_and_short_lookalikes_kept() -> None:
    from dealroom.domain.redaction import API_KEY_PLACEHOLDER, redact_secrets

    key = "dr_" + "A1b2_C3d4-" * 4
    assert redact_secrets(f"key: {key}.") == f"key: {API_KEY_PLACEHOLDER}."
    assert redact_secrets("dr_short and addr_ess") == "dr_short and addr_ess"
