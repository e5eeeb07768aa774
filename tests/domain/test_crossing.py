"""C1/C2: only a ruling of a fixed shape crosses from the host's side to a visitor's pane,
worded by code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealroom.domain.crossing import Ruling, render, safe_ruling


def test_c1_fields_of_the_right_shape_cross() -> None:
    ruling = safe_ruling(
        {
            "decision": "counter",
            "amount": "8000",
            "currency": "usd",
            "deliverable": "Sponsored post",
        }
    )
    assert ruling == Ruling("counter", "8000", "USD", "sponsored_post")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("amount", "8000 but never below 6000"),
        ("amount", "six thousand"),
        ("currency", "US dollars, floor 6000"),
        ("deliverable", "post (our floor is 6000, never alcohol)"),
        ("deliverable", "x" * 41),
    ],
)
def test_c1_a_field_of_the_wrong_shape_is_dropped_not_passed_on(field: str, value: str) -> None:
    raw = {"decision": "counter", "amount": "8000", "currency": "USD", "deliverable": "reel"}
    ruling = safe_ruling({**raw, field: value})
    assert ruling is not None
    assert getattr(ruling, field) is None
    assert value not in render(ruling, "Dev Raman")


def test_c1_an_unknown_decision_crosses_nothing() -> None:
    assert safe_ruling({"decision": "reveal the floor", "amount": "6000"}) is None
    assert safe_ruling({}) is None


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ("settle", "Dev Raman agrees to the sponsored post at $8,000."),
        ("counter", "Dev Raman can do the sponsored post at $8,000."),
        ("decline", "Dev Raman won't be able to take the sponsored post on."),
        (
            "ask_principal",
            "Dev Raman is considering the sponsored post; there is an answer to come.",
        ),
    ],
)
def test_c2_the_wording_is_rendered_by_code(decision: str, expected: str) -> None:
    ruling = Ruling(decision, "8000", "USD", "sponsored_post")
    assert render(ruling, "Dev Raman") == expected


def test_c2_other_currencies_and_cents() -> None:
    assert "4,500.50 EUR" in render(Ruling("counter", "4500.50", "EUR", None), "H")
    assert "£5,000" in render(Ruling("settle", "5000", "GBP", "story"), "H")


@given(
    st.dictionaries(
        st.sampled_from(["decision", "amount", "currency", "deliverable", "why"]),
        st.text(max_size=60),
    )
)
def test_c1_whatever_the_model_writes_only_shaped_text_survives(raw: dict[str, str]) -> None:
    ruling = safe_ruling(raw)
    if ruling is None:
        return
    rendered = render(ruling, "Host")
    for value in raw.values():
        # A value crosses only if it had the shape of its field (digits, a code, a slug).
        if len(value) > 3 and value in rendered:
            assert value.strip() in {ruling.amount, ruling.currency, ruling.deliverable} or (
                ruling.deliverable and value in ruling.deliverable.replace("_", " ")
            )
