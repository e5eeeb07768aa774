"""A fake Gemini API served over real HTTP (uvicorn on a loopback port), so tests drive the
real google-genai client end to end: request building, retries, timeouts, SSE parsing.

It answers ``POST /{version}/models/{model}:generateContent`` and
``POST /{version}/models/{model}:streamGenerateContent?alt=sse``, records every request in
``requests`` and answers from a script::

    async with running_fake_gemini() as gemini:
        gemini.script(Fail(429), Reply('{"reply": "hi"}', usage=(120, 8, 100)))
        client = GeminiClient("key", base_url=gemini.base_url)

When the script is empty, ``responder`` (a callable taking the parsed request body) decides;
without one the server answers 501 "no scripted response": a status the client does not
retry, so a test that forgot to script fails at once and says why.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from dealroom.server import start_in_background

JsonObject = dict[str, Any]
"""A parsed JSON object: its values are whatever the client sent."""

STATUS_NAMES: Mapping[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful answer whose model output is ``text``."""

    text: str
    usage: tuple[int, int, int] = (0, 0, 0)
    """(prompt tokens, candidate tokens, cached prompt tokens)."""
    chunks: int = 1
    """Streaming: the text is split into this many SSE events (by characters)."""
    delay: float = 0.0
    """Seconds before the response starts."""
    chunk_delay: float = 0.0
    """Streaming: seconds between events."""
    thoughts: int = 0
    """Thinking tokens reported beside the candidate tokens."""
    finish_reason: str = "STOP"
    url_metadata: tuple[tuple[str, str], ...] = ()
    """URL Context: ``(retrieved URL, URL_RETRIEVAL_STATUS_…)`` pairs reported on the
    candidate as ``urlContextMetadata``."""
    search_queries: tuple[str, ...] = ()
    """Search grounding: queries reported on the candidate as ``groundingMetadata``."""


def url_read(url: str, text: str, status: str = "URL_RETRIEVAL_STATUS_SUCCESS") -> Reply:
    """An answer of the URL Context tool: ``text``, with ``url`` retrieved at ``status``."""
    return Reply(text, usage=(900, 120, 0), url_metadata=((url, status),))


@dataclass(frozen=True, slots=True)
class Fail:
    """An HTTP error with Gemini's error body."""

    status: int
    message: str = "scripted failure"


@dataclass(frozen=True, slots=True)
class Hang:
    """No answer for ``seconds`` (or until the client goes away), then a 504."""

    seconds: float


Scripted = Reply | Fail | Hang


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    """Lower-cased names."""
    body: JsonObject
    api_version: str
    model: str
    action: str
    """``generateContent`` or ``streamGenerateContent``."""

    @property
    def system(self) -> str:
        """The system instruction's text."""
        instruction: JsonObject = self.body.get("systemInstruction") or {}
        return "".join(part.get("text", "") for part in instruction.get("parts", []))

    @property
    def contents(self) -> str:
        """The text of all contents (the prompt)."""
        return "".join(
            part.get("text", "")
            for content in self.body.get("contents", [])
            for part in content.get("parts", [])
        )

    @property
    def roles(self) -> list[str]:
        return [content.get("role", "") for content in self.body.get("contents", [])]

    @property
    def generation_config(self) -> JsonObject:
        config: JsonObject = self.body.get("generationConfig") or {}
        return config

    @property
    def tools(self) -> list[JsonObject]:
        """The tools the request offered the model (``urlContext``, ``googleSearch``, …)."""
        tools: list[JsonObject] = self.body.get("tools") or []
        return tools

    @property
    def schema(self) -> JsonObject:
        """The response schema sent, whichever field carried it."""
        config = self.generation_config
        schema: JsonObject = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        return schema


def _split(text: str, parts: int) -> list[str]:
    parts = max(1, parts)
    return [text[len(text) * i // parts : len(text) * (i + 1) // parts] for i in range(parts)]


def _usage(reply: Reply, *, final: bool) -> JsonObject:
    prompt, candidates, cached = reply.usage
    usage: JsonObject = {"promptTokenCount": prompt}
    if final:
        usage["candidatesTokenCount"] = candidates
        if reply.thoughts:
            usage["thoughtsTokenCount"] = reply.thoughts
    if cached:
        usage["cachedContentTokenCount"] = cached
    usage["totalTokenCount"] = prompt + (candidates + reply.thoughts if final else 0)
    return usage


def _answer(reply: Reply, text: str, model: str, *, final: bool) -> JsonObject:
    candidate: JsonObject = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if final:
        candidate["finishReason"] = reply.finish_reason
    if final and reply.url_metadata:
        candidate["urlContextMetadata"] = {
            "urlMetadata": [
                {"retrievedUrl": url, "urlRetrievalStatus": status}
                for url, status in reply.url_metadata
            ]
        }
    if final and reply.search_queries:
        candidate["groundingMetadata"] = {"webSearchQueries": list(reply.search_queries)}
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(reply, final=final),
        "modelVersion": model,
        "responseId": "fake-response",
    }


def error_body(status: int, message: str) -> JsonObject:
    return {"error": {"code": status, "message": message, "status": STATUS_NAMES.get(status, "")}}


@dataclass
class FakeGemini:
    base_url: str = ""
    requests: list[Recorded] = field(default_factory=list)
    responder: Callable[[JsonObject], Scripted] | None = None
    _script: deque[Scripted] = field(default_factory=deque)
    _closing: asyncio.Event = field(default_factory=asyncio.Event)

    def script(self, *responses: Scripted) -> None:
        """Queue answers for the next requests, in order."""
        self._script.extend(responses)

    @property
    def pending(self) -> int:
        """Scripted answers not used yet."""
        return len(self._script)

    def reset(self) -> None:
        self.requests.clear()
        self._script.clear()
        self.responder = None

    @functools.cached_property
    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{version}/models/{call}", self._handle, methods=["POST"])])

    async def _handle(self, request: Request) -> Response:
        model, _, action = request.path_params["call"].partition(":")
        raw = await request.body()
        body: JsonObject = json.loads(raw) if raw else {}
        self.requests.append(
            Recorded(
                method=request.method,
                path=request.url.path,
                query=dict(request.query_params),
                headers={key.lower(): value for key, value in request.headers.items()},
                body=body,
                api_version=request.path_params["version"],
                model=model,
                action=action,
            )
        )
        if action not in ("generateContent", "streamGenerateContent"):
            return JSONResponse(error_body(404, f"unknown method {action}"), status_code=404)
        if self._script:
            scripted = self._script.popleft()
        elif self.responder is not None:
            scripted = self.responder(body)
        else:
            return JSONResponse(error_body(501, "no scripted response"), status_code=501)
        match scripted:
            case Fail(status, message):
                return JSONResponse(error_body(status, message), status_code=status)
            case Hang(seconds):
                await self._wait(request, seconds)
                return JSONResponse(error_body(504, "hung"), status_code=504)
            case Reply():
                await self._wait(request, scripted.delay)
                if action == "streamGenerateContent":
                    return StreamingResponse(
                        self._events(scripted, model), media_type="text/event-stream"
                    )
                return JSONResponse(_answer(scripted, scripted.text, model, final=True))

    async def _events(self, reply: Reply, model: str) -> AsyncIterator[str]:
        pieces = _split(reply.text, reply.chunks)
        for index, piece in enumerate(pieces):
            if index and reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            answer = _answer(reply, piece, model, final=index == len(pieces) - 1)
            yield f"data: {json.dumps(answer)}\r\n\r\n"

    async def _wait(self, request: Request, seconds: float) -> None:
        """Sleep, but stop early when the client hangs up or the server shuts down."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while (left := deadline - loop.time()) > 0 and not self._closing.is_set():
            if await request.is_disconnected():
                return
            await asyncio.sleep(min(left, 0.02))


@asynccontextmanager
async def running_fake_gemini() -> AsyncIterator[FakeGemini]:
    fake = FakeGemini()
    running = await start_in_background(fake.app)
    fake.base_url = f"http://127.0.0.1:{running.port}"
    try:
        yield fake
    finally:
        fake._closing.set()
        await running.stop()
