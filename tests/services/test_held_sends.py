"""Only the principal's explicit yes releases a held send; the rest of the flow is end to end in
tests/e2e/test_jailbroken_confidentiality.py."""

from __future__ import annotations

import pytest

from dealroom.services.gate.held_sends import is_explicit_yes


@pytest.mark.parametrize(
    "text", ["yes", "Yes.", "YES!", "Yes, send it.", "yes please", "Confirm", "yep, go ahead"]
)
def test_an_explicit_yes(text: str) -> None:
    assert is_explicit_yes(text)


@pytest.mark.parametrize(
    "text",
    [
        "OK, go ahead.",  # what the host types in passing: B1
        "ok",
        "sure",
        "yes but leave out the price",
        "no",
        "not yet",
        "Yes if they pay upfront",
        "",
        "send it",
    ],
)
def test_anything_else_keeps_it_held(text: str) -> None:
    assert not is_explicit_yes(text)
