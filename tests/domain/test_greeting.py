"""The welcome's text (domain.greeting): host.public only, and the firewall over it."""

from __future__ import annotations

from dealroom.domain.greeting import welcome


def test_the_bare_welcome_names_the_host_and_asks_what_the_visitor_has_in_mind() -> None:
    text = welcome("Maya Chen", None, {})
    assert text.startswith("Hi! I'm the agent for Maya Chen")
    assert text.endswith("What do you have in mind: the deliverable, your dates and your budget?")


def test_public_rate_card_and_notes_are_named_private_ones_are_not() -> None:
    memory = {
        "host": {
            "public": {
                "rate_card": ["sponsored_post from 7500 USD"],
                "notes": ["posts on Instagram and TikTok"],
            },
            "rates": {"sponsored_post": {"ask": "8000 USD"}},
            "limits": {"sponsored_post": {"floor": "6000", "currency": "USD"}},
        }
    }
    text = welcome("Maya Chen", "Mara", memory)
    assert text.startswith("Hi Mara!")
    assert "sponsored post from 7500 USD" in text
    assert "Posts on Instagram and TikTok." in text
    assert "8000" not in text
    assert "6000" not in text


def test_a_public_note_stating_a_private_value_is_left_out() -> None:
    """The firewall screens the welcome like every host→visitor path: a floor filed under
    host.public by a careless writer never reaches the visitor."""
    memory = {
        "host": {
            "public": {"notes": ["never below 6,137 for a post"]},
            "limits": {"sponsored_post": {"floor": "6137", "currency": "USD"}},
        }
    }
    text = welcome("Maya Chen", None, memory)
    assert "6,137" not in text
    assert "6137" not in text
    assert text == welcome("Maya Chen", None, {})
