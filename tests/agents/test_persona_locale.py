"""The persona's request carries the pane reader's locale (L3 in ``domain/locale.py``): the
offline engine writes the price line in it, and the model prompt asks for amounts the way the
reader's offer card writes them; an en_US pane's request is as it always was."""

from __future__ import annotations

from decimal import Decimal

from dealroom.agents import persona
from dealroom.agents.persona import PersonaInput, Trigger
from dealroom.agents.render import Party
from dealroom.domain.money import display
from dealroom.domain.offer_stage import Stage


def _inputs(locale: str) -> PersonaInput:
    return PersonaInput(
        room_kind="deal",
        pane="visitor",
        represents=Party("host", "Maya Lin"),
        speaking_with=Party("visitor", "Acme Brand"),
        memory={},
        plan="",
        account_facts=None,
        session=[],
        trigger=Trigger("message", "Hi"),
        send_to=["host"],
        deliveries=[],
        stage=Stage.NO_WRITTEN_OFFER,
        locale=locale,
    )


def test_a_de_DE_pane_is_asked_for_de_DE_amounts_and_en_US_is_unchanged() -> None:
    german = persona.build(_inputs("de_DE"), model="m")
    assert display(Decimal("7350"), "USD", "de_DE") in german.prompt
    assert german.context["locale"] == "de_DE"
    english = persona.build(_inputs("en_US"), model="m")
    assert "MONEY:" not in english.prompt
    assert "locale" not in english.context
    assert PersonaInput.of(german).locale == "de_DE"
