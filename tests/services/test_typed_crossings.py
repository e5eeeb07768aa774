"""Typed crossings (held_sends C6) and F10's configurable band on the held-send screen: what
the host's side sends a visitor crosses on its own only as a ruling or code's text."""

from __future__ import annotations

from decimal import Decimal

from dealroom.config import Settings
from dealroom.services.gate import held_sends

MEMORY = {"host": {"limits": {"reel": {"floor": "6137", "currency": "USD", "source": "m-1"}}}}


def test_c6_free_text_from_the_host_side_waits_for_the_principal() -> None:
    paraphrase = "Zyglorb-type companies are a no for them"  # no value the firewall knows
    assert held_sends.screen(MEMORY, paraphrase, {"open_questions": []}) == [held_sends.FREE_TEXT]
    guard = {"open_questions": [], "origin": "guard"}  # the Guard's text is a model's too
    assert held_sends.screen(MEMORY, paraphrase, guard) == [held_sends.FREE_TEXT]


def test_c6_a_ruling_and_codes_own_lines_cross_on_their_own() -> None:
    ruling = {"decision": "counter", "amount": "9000", "currency": "USD", "deliverable": None}
    assert held_sends.screen(MEMORY, "Dev can do this at $9,000.", {"ruling": ruling}) == []
    notice = {"open_questions": [], "origin": "goal"}
    assert held_sends.screen(MEMORY, "The offer is being written up.", notice) == []


def test_f10_the_band_is_the_settings_band() -> None:
    ruling = {"decision": "counter", "amount": "6400", "currency": "USD", "deliverable": None}
    payload = {"ruling": ruling}
    text = "Dev can do this at $6,400."  # 4.3% over the floor
    assert held_sends.screen(MEMORY, text, payload)  # the default band, 5%
    assert held_sends.screen(MEMORY, text, payload, band_percent=Decimal(4)) == []
    band = Settings(firewall_band_percent=Decimal("2.5")).firewall_band_percent
    assert held_sends.screen(MEMORY, text, payload, band_percent=band) == []
