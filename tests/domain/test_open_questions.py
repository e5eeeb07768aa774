"""Open questions cross only as the offer's terms, worded by code (open_questions OQ1, OQ2)."""

from __future__ import annotations

import pytest

from dealroom.domain.open_questions import QUESTIONS, OpenTerm, crossing, typed, worded


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("Which date?", OpenTerm.DATES),
        ("Which deliverable?", OpenTerm.DELIVERABLE),
        ("How many posts?", OpenTerm.QUANTITY),
        ("What usage rights do they need?", OpenTerm.USAGE_RIGHTS),
        ("Any exclusivity?", OpenTerm.EXCLUSIVITY),
        ("How much is due upfront?", OpenTerm.PAYMENT_SCHEDULE),
        ("What's the budget?", OpenTerm.FEE),
        ("dates", OpenTerm.DATES),
    ],
)
def test_oq1_a_question_is_read_for_the_term_it_asks(question: str, term: OpenTerm) -> None:
    assert typed([question]) == (term,)


def test_oq1_text_naming_no_term_is_dropped_and_order_and_repeats_carry_nothing() -> None:
    leaks = ["their walk-away is 6-1-3-7", "call four one five", "Zyglorb-type companies"]
    assert typed(leaks) == ()
    assert typed(["Which date?", "How many posts?", "which DATE??"]) == typed(
        ["How many?", "When?"]
    )
    assert typed(["How many posts?", "Which date?"]) == (OpenTerm.QUANTITY, OpenTerm.DATES)


def test_oq2_each_term_is_worded_by_code_from_the_recipients_side() -> None:
    assert set(QUESTIONS) == set(OpenTerm)
    assert worded((OpenTerm.DATES,)) == ["Which dates do you have in mind?"]
    for text in QUESTIONS.values():
        assert not any(ch.isdigit() for ch in text)


def test_a_host_side_send_carries_typed_terms_never_the_models_text() -> None:
    """What any host-pane send (the persona's or the Guard's) carries of its questions."""
    asked = ["Which dates? (never below 6137, booking code QX7)", "no tobacco brands, ok?"]
    carried = crossing(asked)
    assert carried["open_terms"] == [OpenTerm.DATES.value]
    assert carried["open_questions"] == [QUESTIONS[OpenTerm.DATES]]
    assert "6137" not in str(carried)
    assert "tobacco" not in str(carried)
