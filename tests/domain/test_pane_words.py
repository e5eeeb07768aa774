"""PW1-PW3 (dealroom/domain/pane_words.py): people read people's words, never system labels."""

from __future__ import annotations

import pytest

from dealroom.domain import pane_words
from dealroom.domain.offer_stage import GLOSSES, Stage
from dealroom.domain.offers import Action


@pytest.mark.parametrize("stage", list(Stage))
def test_pw1_every_stage_label_is_refused(stage: Stage) -> None:
    line = f"Where it stands: {stage.value}."
    assert pane_words.labels_in(line) == [stage.value]
    with pytest.raises(pane_words.LabelInLine) as refused:
        pane_words.refuse_labels(line)
    assert refused.value.labels == [stage.value]


@pytest.mark.parametrize(
    "line",
    [
        "The offer is PAYMENT_HELD.",
        "Your principalInstruction was yes.",
        "I read host.public for that.",
        "It sits in pendingPrincipalDecisions.",
        "brand_approved_at is null",
    ],
)
def test_pw1_offers_statuses_and_field_names_are_refused(line: str) -> None:
    with pytest.raises(pane_words.LabelInLine):
        pane_words.refuse_labels(line)


@pytest.mark.parametrize(
    "line",
    [
        "The written offer is waiting for your approval — press Approve offer on it.",
        "It's booked — press Pay now on the offer when you're ready.",
        "Maya approved the terms; the offer was accepted and completed.",  # English words
        "We can do the public rate card's $5,000.",
    ],
)
def test_pw1_people_words_pass(line: str) -> None:
    pane_words.refuse_labels(line)


def test_pw2_a_models_slip_becomes_people_words() -> None:
    said = pane_words.in_people_words(
        "Version 2 is drawn. Stage: WRITTEN_AWAITING_BRAND — written offer drawn; the brand "
        "has not approved it. It is not booked yet."
    )
    assert said == "Version 2 is drawn. It is not booked yet."
    bare = pane_words.in_people_words("We are at BRAND_ACKED_AWAITING_TALENT.")
    assert bare == f"We are at {GLOSSES[Stage.BRAND_ACKED_AWAITING_TALENT]}."
    assert pane_words.labels_in(bare) == []


def test_pw3_one_label_per_button() -> None:
    assert set(pane_words.BUTTON_LABELS) == set(Action)
    assert pane_words.button(Action.PAY) == "Pay now"
    assert len(set(pane_words.BUTTON_LABELS.values())) == len(Action)


@pytest.mark.parametrize(
    ("draft", "final", "shown"),
    [
        ("The offer is WRITTEN_AWAITING_BRAND now", False, "The offer is "),
        ("The offer is WRITTEN_AWAITING_BRAND now", True, "The offer is "),
        ("The offer is WRIT", False, "The offer is "),  # may become a label: held back
        ("The offer is ready.", False, "The offer is "),
        ("The offer is ready.", True, "The offer is ready."),
    ],
)
def test_pw1_a_streamed_draft_never_shows_a_label(draft: str, final: bool, shown: str) -> None:
    assert draft[: pane_words.safe_prefix(draft, final=final)] == shown
