"""A model edge that fails on purpose: the first N persona calls raise mid-stream (after one
chunk went out), every other call is the offline engine's."""

from __future__ import annotations

from collections.abc import AsyncIterator

from dealroom.agents.models.base import AgentName, Chunk, Generation, ModelError, ModelRequest
from dealroom.agents.models.offline import OfflineClient


class FlakyModel:
    """The model edge failing on purpose: the first ``failures`` persona calls raise."""

    engine = "offline"

    def __init__(self, failures: int, *, transient: bool = True) -> None:
        self.inner = OfflineClient()
        self.failures = failures
        self.transient = transient
        self.persona_calls = 0

    async def generate(self, request: ModelRequest) -> Generation:
        return await self.inner.generate(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        if request.agent is AgentName.PERSONA:
            self.persona_calls += 1
            if self.persona_calls <= self.failures:
                # Fail mid-stream, after the first chunk: deltas went out, nothing is stored.
                async for chunk in self.inner.stream(request):
                    yield chunk
                    break
                raise ModelError("503 from the model", transient=self.transient, status=503)
        async for chunk in self.inner.stream(request):
            yield chunk

    async def close(self) -> None:
        await self.inner.close()
