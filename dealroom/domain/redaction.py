"""Card numbers never enter the system (seed 000: agents never collect cards).

- RD1  A run of 13-19 digits, optionally grouped by single spaces or hyphens, that passes the
       Luhn check is a payment card number. It is replaced before the text is stored, so no
       pane, memory document, model request or log line ever holds it.
- RD2  Other long numbers (order numbers, phone numbers) fail the Luhn check or the length and
       are kept as written.
"""

from __future__ import annotations

import re
from typing import Final

CARD_PLACEHOLDER: Final = "[card number removed]"

_CANDIDATE = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def redact_cards(text: str) -> str:
    """RD1/RD2: ``text`` with every card number replaced by the placeholder."""

    def replace(match: re.Match[str]) -> str:
        digits = re.sub(r"[ -]", "", match.group(0))
        return CARD_PLACEHOLDER if _luhn(digits) else match.group(0)

    return _CANDIDATE.sub(replace, text)


API_KEY_PLACEHOLDER: Final = "[API key removed]"

_API_KEY = re.compile(r"\bdr_[A-Za-z0-9_-]{20,}")


def redact_api_keys(text: str) -> str:
    """RD3: a dealroom API key (``dr_`` and 20+ key characters) pasted into chat is replaced
    before the text is stored, like a card number (``domain/scopes.py`` K3)."""
    return _API_KEY.sub(API_KEY_PLACEHOLDER, text)


def redact_secrets(text: str) -> str:
    """RD1 and RD3 together: what a pane line goes through before storage."""
    return redact_api_keys(redact_cards(text))
