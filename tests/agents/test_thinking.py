"""Thinking per agent (``DEALROOM_THINKING_<AGENT>``): each model's valid range, a setting a
model would refuse refused at start-up in one line, and each agent's budget on the wire."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from dealroom.agents.models import thinking
from dealroom.agents.models.base import AgentName
from dealroom.agents.models.gemini import GeminiClient
from dealroom.config import Settings
from tests.agents.test_gemini import PERSONA_ANSWER, answer, persona_request
from tests.support.fake_gemini import FakeGemini, Reply


@pytest.mark.parametrize(
    ("model", "budget", "ok"),
    [
        ("gemini-2.5-pro", 0, False),  # Pro cannot turn thinking off
        ("gemini-2.5-pro", 127, False),
        ("gemini-2.5-pro", 128, True),
        ("gemini-2.5-pro", -1, True),
        ("gemini-2.5-flash", 0, True),
        ("gemini-2.5-flash", 24576, True),
        ("gemini-2.5-flash", 24577, False),
        ("gemini-2.5-flash-lite", 0, True),
        ("gemini-2.5-flash-lite", 100, False),
        ("gemini-2.5-flash-lite", 512, True),
        ("gemini-2.0-flash", 0, False),  # does not think
        ("gemini-2.0-flash", None, True),
        ("models/gemini-2.5-pro", 0, False),
        ("some-future-model", 0, True),  # not second-guessed
    ],
)
def test_each_model_accepts_its_own_range(model: str, budget: int | None, ok: bool) -> None:
    assert (thinking.problem(model, budget) is None) is ok


def test_the_defaults_are_valid_and_every_agent_has_one() -> None:
    settings = Settings()
    assert set(settings.thinking_budgets) == set(thinking.AGENTS)
    for agent, budget in settings.thinking_budgets.items():
        assert thinking.problem(settings.model_of(agent), budget) is None, agent


def test_an_invalid_budget_is_refused_naming_the_setting() -> None:
    with pytest.raises(ValueError, match=r"DEALROOM_THINKING_GUARD=0 for gemini-2\.5-pro"):
        Settings(thinking_guard=0)
    # The same budget is fine on a model that can turn thinking off.
    assert Settings(thinking_guard=0, guard_model="gemini-2.5-flash").thinking_guard == 0


def test_the_server_refuses_to_start_with_one_line() -> None:
    env = {**os.environ, "DEALROOM_THINKING_GUARD": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "dealroom.cli", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "DEALROOM_THINKING_GUARD=0" in lines[0]
    assert "cannot turn thinking off" in lines[0]


async def test_each_agent_sends_its_own_budget(fake_gemini: FakeGemini) -> None:
    client = GeminiClient(
        "test-key",
        base_url=fake_gemini.base_url,
        thinking={AgentName.PERSONA: 512, AgentName.DISTIL: 0},
    )
    request = persona_request()
    on_pro = dataclasses.replace(request, model="gemini-2.5-pro")  # a room's pick
    fake_gemini.script(*(Reply(answer(PERSONA_ANSWER)) for _ in range(2)))
    try:
        await client.generate(request)
        await client.generate(on_pro)
    finally:
        await client.close()
    first, second = fake_gemini.requests
    assert first.generation_config.get("thinkingConfig") in (
        {"thinkingBudget": 512},
        {"thinking_budget": 512},
    )
    # 512 is fine on Pro too; the request keeps it.
    assert second.generation_config.get("thinkingConfig") is not None


async def test_a_budget_the_picked_model_refuses_falls_back_to_its_default(
    fake_gemini: FakeGemini,
) -> None:
    client = GeminiClient(
        "test-key", base_url=fake_gemini.base_url, thinking={AgentName.PERSONA: 0}
    )
    on_pro = dataclasses.replace(persona_request(), model="gemini-2.5-pro")
    fake_gemini.script(Reply(answer(PERSONA_ANSWER)))
    try:
        await client.generate(on_pro)
    finally:
        await client.close()
    [sent] = fake_gemini.requests
    assert "thinkingConfig" not in sent.generation_config
