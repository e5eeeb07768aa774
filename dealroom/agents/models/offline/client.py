"""The offline ``ModelClient``: answers each request with the rules of the agent it is for."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Final, assert_never

from pydantic import BaseModel

from dealroom.agents.models.base import (
    AgentName,
    Chunk,
    Generation,
    ModelRequest,
    Usage,
    estimate_tokens,
    parse_output,
)
from dealroom.agents.models.offline.agreement import agreement_output
from dealroom.agents.models.offline.arvist import acc_update_output, arvist_output
from dealroom.agents.models.offline.context_filter import filter_output
from dealroom.agents.models.offline.distil import distil_output
from dealroom.agents.models.offline.guard import guard_output
from dealroom.agents.models.offline.offer_gen import offer_gen_output
from dealroom.agents.models.offline.persona import persona_output
from dealroom.agents.persona import PersonaInput

CHUNK_CHARS: Final = 16
"""How the offline stream splits its output: small pieces, like a model's token deltas."""

WORDS_PER_PIECE: Final = 3
"""With pacing on, the reply streams this many words a piece."""

REPLY_HEAD: Final = '{"reply":"'


class OfflineClient:
    """A ``ModelClient`` whose answers come from rules instead of a model."""

    engine: str = "offline"

    def __init__(self, *, delay: float = 0.0, stream_delay: float = 0.0) -> None:
        self.delay = delay
        """Seconds each call waits before answering (benchmarks model latency; default 0)."""
        self.stream_delay = stream_delay
        """Seconds between the pieces of a streamed reply (0: no pause, so the pipeline's
        coalescing makes the reply one delta). ``dealroom serve`` paces it
        (``DEALROOM_OFFLINE_STREAM_MS``) so the demo shows typing and a streamed reply."""

    async def generate(self, request: ModelRequest) -> Generation:
        await self._wait()
        text = respond(request)
        return Generation(
            output=parse_output(request, text),
            text=text,
            usage=_usage(request, text),
            model=request.model,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        await self._wait()
        text = respond(request)
        if self.stream_delay > 0:
            for number, piece in enumerate(paced_pieces(text)):
                if number:
                    await asyncio.sleep(self.stream_delay)
                yield Chunk(piece)
        else:
            for start in range(0, len(text), CHUNK_CHARS):
                yield Chunk(text[start : start + CHUNK_CHARS])
        yield Chunk("", usage=_usage(request, text))

    async def close(self) -> None:
        return None

    async def _wait(self) -> None:
        if self.delay > 0:
            await asyncio.sleep(self.delay)


def paced_pieces(text: str) -> list[str]:
    """``text`` cut for a paced stream: the reply a few words a piece (the first piece carries
    the object's opening), then the rest of the object in one piece. JSON escapes hold no
    whitespace, so cutting the encoded reply after whitespace never splits one. Output that
    does not open with the reply is one piece."""
    if not text.startswith(REPLY_HEAD):
        return [text]
    _, end = json.JSONDecoder().raw_decode(text, len(REPLY_HEAD) - 1)  # end: after the quote
    words = re.findall(r"\S+\s*", text[len(REPLY_HEAD) : end - 1])
    pieces = [
        "".join(words[start : start + WORDS_PER_PIECE])
        for start in range(0, len(words), WORDS_PER_PIECE)
    ] or [""]
    pieces[0] = REPLY_HEAD + pieces[0]
    return [*pieces, text[end - 1 :]]


def _usage(request: ModelRequest, text: str) -> Usage:
    return Usage(
        input_tokens=estimate_tokens(request.text),
        output_tokens=estimate_tokens(text),
        cached_tokens=0,
    )


def respond(request: ModelRequest) -> str:
    """The raw JSON output for ``request`` (a pure function of ``request.context``)."""
    output: BaseModel
    match request.agent:
        case AgentName.PERSONA:
            output = persona_output(PersonaInput.of(request))
        case AgentName.DISTIL:
            output = distil_output(request.context)
        case AgentName.CONTEXT_FILTER:
            output = filter_output(request.context)
        case AgentName.OFFER_GEN:
            output = offer_gen_output(request.context)
        case AgentName.AGREEMENT:
            output = agreement_output(request.context)
        case AgentName.GATE | AgentName.REPLAY:
            raise ValueError(f"{request.agent} runs make no model call of their own")
        case AgentName.ARVIST:
            output = arvist_output(request.context)
        case AgentName.ACC_UPDATE:
            output = acc_update_output(request.context)
        case AgentName.GUARD:
            output = guard_output(request.context)
        case _:
            assert_never(request.agent)
    # PersonaOutput declares ``reply`` first, so the serialised reply streams first.
    return output.model_dump_json()
