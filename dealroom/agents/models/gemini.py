"""The Gemini engine: structured generation and streaming through google-genai.

Retries are the SDK's: without ``HttpRetryOptions`` it retries nothing. With them, every
request (``generateContent`` and the opening of ``streamGenerateContent``) is retried on the
listed statuses and on httpx timeouts and connection errors, with exponential backoff and
jitter. A stream that fails after its first chunk is not retried: the caller has already
seen text.

The output schema goes out as ``responseJsonSchema`` (pydantic's JSON Schema, with its
``additionalProperties: false``, enums, ``anyOf`` nulls and ``$defs``) and carries an
explicit ``propertyOrdering`` on every object in field-declaration order, so ``reply`` is
the first key the persona writes and can be streamed out of the partial JSON.
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import AsyncGenerator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from google import genai
from google.genai import errors, types
from pydantic import BaseModel

from dealroom.agents.models import thinking
from dealroom.agents.models.base import (
    AgentName,
    Chunk,
    Generation,
    ModelError,
    ModelRequest,
    Usage,
    parse_output,
)

JsonSchema = dict[str, Any]
"""A JSON Schema document as pydantic emits it (values of any JSON type)."""

TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""Statuses worth another attempt: the SDK retries them, and a ModelError says so."""


def _transport_errors() -> tuple[type[Exception], ...]:
    """Timeouts and connection failures of whichever httpx the SDK sends with: google-genai
    3.x defaults to ``httpx2`` (its own exception classes), older versions to ``httpx``."""
    found: list[type[Exception]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        error = getattr(module, "TransportError", None)
        if isinstance(error, type) and issubclass(error, Exception):
            found.append(error)
    return tuple(found)


TRANSPORT_ERRORS = _transport_errors()


def _async_transport() -> object:
    """An async transport of the httpx the SDK sends with (``httpx2`` when installed)."""
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        transport: object = module.AsyncHTTPTransport()
        return transport
    raise ImportError("google-genai needs httpx2 or httpx")


@functools.cache
def _schema(output: type[BaseModel]) -> JsonSchema:
    schema = output.model_json_schema()
    _order_properties(schema)
    return schema


def response_json_schema(output: type[BaseModel]) -> JsonSchema:
    """``output``'s JSON Schema with ``propertyOrdering`` on every object: Gemini otherwise
    may order an object's keys alphabetically. A fresh copy each call (the SDK may mutate)."""
    return copy.deepcopy(_schema(output))


def _order_properties(node: object) -> None:
    if isinstance(node, dict):
        properties = node.get("properties")
        if node.get("type") == "object" and isinstance(properties, dict):
            node.setdefault("propertyOrdering", list(properties))
        for value in list(node.values()):
            _order_properties(value)
    elif isinstance(node, list):
        for item in node:
            _order_properties(item)


def _usage(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    """Thinking tokens are billed as output, so they count as output here."""
    if metadata is None:
        return Usage()
    return Usage(
        input_tokens=metadata.prompt_token_count or 0,
        output_tokens=(metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0),
        cached_tokens=metadata.cached_content_token_count or 0,
    )


@contextmanager
def _model_errors(request: ModelRequest) -> Iterator[None]:
    """Every failure of the call itself becomes a ModelError (after the SDK's retries)."""
    where = f"gemini {request.model} ({request.agent})"
    try:
        yield
    except errors.APIError as exc:
        raise ModelError(
            f"{where}: HTTP {exc.code} {exc.status}: {exc.message}",
            transient=exc.code in TRANSIENT_STATUS,
            status=exc.code,
        ) from exc
    except errors.UnknownApiResponseError as exc:
        raise ModelError(f"{where}: unreadable response: {exc}", transient=True) from exc
    except TRANSPORT_ERRORS as exc:
        raise ModelError(
            f"{where}: {type(exc).__name__}: {str(exc) or 'no detail'}", transient=True
        ) from exc


class GeminiClient:
    """A :class:`~dealroom.agents.models.base.ModelClient` over the Gemini Developer API."""

    engine = "gemini"

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str | None = None,
        timeout_seconds: float = 30.0,
        attempts: int = 4,
        initial_delay: float = 0.5,
        max_delay: float = 8.0,
        thinking_budget: int | None = None,
        thinking: Mapping[AgentName, int | None] | None = None,
    ) -> None:
        self._budget = thinking_budget
        """Every agent's budget unless ``thinking`` names the agent's own."""
        self._budgets = dict(thinking or {})
        self._client = genai.Client(
            api_key=api_key,
            vertexai=False,  # never switched to Vertex by GOOGLE_GENAI_USE_VERTEXAI
            http_options=types.HttpOptions(
                base_url=base_url,
                # responseJsonSchema and propertyOrdering are documented on v1beta; the
                # SDK's default for the Gemini API is v1.
                api_version="v1beta",
                # Milliseconds; httpx applies it to connecting and to each read, so a
                # stream may run longer as long as chunks keep coming.
                timeout=max(1, round(timeout_seconds * 1000)),
                retry_options=types.HttpRetryOptions(
                    attempts=attempts,
                    initial_delay=initial_delay,
                    max_delay=max_delay,
                    http_status_codes=sorted(TRANSIENT_STATUS),
                ),
                # The SDK switches to aiohttp whenever it is importable (a dependency of
                # test tools, not ours) unless handed a transport; one transport everywhere
                # keeps timeouts and transport errors the same in tests and production.
                async_client_args={"transport": _async_transport()},
            ),
        )

    @property
    def sdk(self) -> genai.Client:
        """The google-genai client, for a call outside the structured protocol (the link
        reader's plain-text call with the URL Context tool, agents/link_reader.py)."""
        return self._client

    def _thinking(self, request: ModelRequest) -> types.ThinkingConfig | None:
        """The agent's budget, unless the request's model would refuse it (a room that picks
        another model): then the model's default, never a failed call."""
        budget = self._budgets.get(request.agent, self._budget)
        if budget is None or thinking.problem(request.model, budget) is not None:
            return None
        return types.ThinkingConfig(thinking_budget=budget)

    def config(self, request: ModelRequest) -> types.GenerateContentConfig:
        """The request's configuration as it is sent (the token benchmark prices it)."""
        return types.GenerateContentConfig(
            system_instruction=request.system,
            response_mime_type="application/json",
            response_json_schema=response_json_schema(request.output),
            # None leaves the model's default. Thinking is billed as output and delays the
            # first streamed word; 0 turns it off where the model allows.
            thinking_config=self._thinking(request),
        )

    async def generate(self, request: ModelRequest) -> Generation:
        with _model_errors(request):
            response = await self._client.aio.models.generate_content(
                model=request.model, contents=request.prompt, config=self.config(request)
            )
        text = response.text
        finish = _finish_reason(response)
        if text is None:
            blocked = response.prompt_feedback.block_reason if response.prompt_feedback else None
            raise ModelError(
                f"gemini {request.model} ({request.agent}) returned no text "
                f"(finish reason {finish}, block reason {blocked})",
                transient=True,
            )
        output = parse_output(request, text)
        extra = {"model_version": response.model_version, "finish_reason": finish}
        return Generation(
            output=output,
            text=text,
            usage=_usage(response.usage_metadata),
            model=request.model,
            extra={key: value for key, value in extra.items() if value is not None},
        )

    async def stream(self, request: ModelRequest) -> AsyncGenerator[Chunk, None]:
        usage = Usage()
        with _model_errors(request):
            responses = await self._client.aio.models.generate_content_stream(
                model=request.model, contents=request.prompt, config=self.config(request)
            )
            try:
                async for response in responses:
                    if response.usage_metadata is not None:
                        usage = _usage(response.usage_metadata)
                    if text := response.text:
                        yield Chunk(text)
            finally:
                # A consumer that stops early must not leave the HTTP stream open.
                if isinstance(responses, AsyncGenerator):
                    await responses.aclose()
        yield Chunk("", usage=usage)

    async def close(self) -> None:
        await self._client.aio.aclose()
        self._client.close()


def _finish_reason(response: types.GenerateContentResponse) -> str | None:
    if not response.candidates or response.candidates[0].finish_reason is None:
        return None
    return str(response.candidates[0].finish_reason.value)
