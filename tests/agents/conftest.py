"""One fake Gemini server per test run (real uvicorn on a loopback port), emptied before
every test; each test gets its own real google-genai client pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dealroom.agents.models.gemini import GeminiClient
from tests.support.fake_gemini import FakeGemini, running_fake_gemini


@pytest.fixture(scope="session")
async def fake_gemini_server() -> AsyncIterator[FakeGemini]:
    async with running_fake_gemini() as server:
        yield server


@pytest.fixture
def fake_gemini(fake_gemini_server: FakeGemini) -> FakeGemini:
    fake_gemini_server.reset()
    return fake_gemini_server


@pytest.fixture
async def gemini(fake_gemini: FakeGemini) -> AsyncIterator[GeminiClient]:
    """Four attempts with millisecond backoff: retries are real but fast."""
    client = GeminiClient(
        "test-key", base_url=fake_gemini.base_url, attempts=4, initial_delay=0.01, max_delay=0.02
    )
    yield client
    await client.close()
