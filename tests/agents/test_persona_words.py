"""What the Gemini persona is told about people's words, the gate and the price (the same request
object the offline engine reads): the labels are named as forbidden, the buttons by their one
source, a guest's turn carries the gate directive, and the whole price is asked for."""

from __future__ import annotations

from dealroom.agents import persona
from dealroom.agents.models.base import ModelRequest
from dealroom.agents.persona import PersonaInput, Trigger
from dealroom.agents.render import Party
from dealroom.domain import pane_words
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import RoomKind


def _request(*, guest: bool, send_to: list[str]) -> ModelRequest:
    return persona.build(
        PersonaInput(
            room_kind=RoomKind.DEAL.value,
            pane="visitor",
            represents=Party("host", "Maya Lin"),
            speaking_with=Party("visitor", "A visitor"),
            memory={},
            plan="",
            account_facts=None,
            session=[],
            trigger=Trigger("message", "We could pay $5,000 for one sponsored post."),
            send_to=send_to,
            deliveries=[],
            stage=Stage.NO_WRITTEN_OFFER,
            guest=guest,
        ),
        model="gemini-test",
    )


def test_the_prompt_forbids_labels_and_names_the_buttons_from_their_one_source() -> None:
    system = _request(guest=False, send_to=["host"]).system
    assert "never write a stage label" in system
    for label in pane_words.BUTTON_LABELS.values():
        assert f'"{label}"' in system
    assert "platform fee" in system  # the whole price, told once


def test_a_guests_turn_that_may_send_carries_the_gate_directive() -> None:
    guest = _request(guest=True, send_to=["host"])
    assert "GUEST (not signed in)" in guest.prompt
    assert "Never say you are checking with Maya Lin now" in guest.prompt
    assert guest.context["guest"] is True
    assert "GUEST" not in _request(guest=False, send_to=["host"]).prompt
    assert "GUEST" not in _request(guest=True, send_to=[]).prompt  # nothing to hold: no gate
