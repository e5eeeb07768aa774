"""One model protocol for every agent call (ARCHITECTURE "Agents").

An agent call is one :class:`ModelRequest`: the rendered prompt *and* the
visibility-filtered context it was rendered from. Both engines receive the same object:
Gemini reads ``system`` and ``prompt``; the offline engine reads ``context``. A test can
therefore prove what an agent could not have seen by inspecting the request alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel


class AgentName(StrEnum):
    PERSONA = "persona"
    DISTIL = "distil"
    CONTEXT_FILTER = "context_filter"
    OFFER_GEN = "offer_gen"
    AGREEMENT = "agreement"
    GATE = "gate"
    """The persona composing the login gate's line in a guest's pane (a run kind; its model
    call is a persona request)."""
    REPLAY = "replay"
    """Replaying a claimed room's held effects in order (a run kind; no model call)."""
    ARVIST = "arvist"
    ACC_UPDATE = "acc_update"
    GUARD = "guard"


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one agent call may see. ``system`` is the stable part (agent prompt and
    vocabularies) sent first so implicit prompt caching can apply; ``prompt`` is the
    per-turn part rendered from ``context`` and ends with the tail directives."""

    agent: AgentName
    model: str
    system: str
    prompt: str
    context: Mapping[str, Any]
    output: type[BaseModel]
    visitor_facing: bool = False
    """True when the agent speaks in (or for) a visitor's pane: confidentiality tests key on it."""
    input: BaseModel | None = None
    """The typed input ``context`` was rendered from (the persona's ``PersonaInput``), for
    readers in code; a model only ever sees ``prompt``."""

    @property
    def text(self) -> str:
        """All text that goes to a model, for confidentiality assertions."""
        return f"{self.system}\n{self.prompt}"


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of the model's raw output text; the last chunk of a stream carries usage."""

    text: str
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class Generation:
    output: BaseModel
    text: str
    usage: Usage
    model: str
    extra: Mapping[str, Any] = field(default_factory=dict)


class ModelError(Exception):
    """A model call failed. ``transient`` errors (429, 5xx, timeouts) may be retried."""

    def __init__(self, message: str, *, transient: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status


class ModelClient(Protocol):
    """Structured generation and streaming, with usage."""

    engine: str
    """``offline`` or ``gemini``: the ledger records it beside the model name."""

    async def generate(self, request: ModelRequest) -> Generation:
        """One structured call: the output parsed into ``request.output``."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """The raw JSON output as it arrives; the last chunk carries usage. The caller
        validates the joined text against ``request.output``."""
        ...

    async def close(self) -> None: ...


def parse_output(request: ModelRequest, text: str) -> BaseModel:
    """Validate a model's raw JSON against the request's schema (pydantic first, domain after)."""
    try:
        return request.output.model_validate_json(text)
    except ValueError as exc:
        raise ModelError(
            f"{request.agent} returned output that does not match its schema: {exc}",
            transient=True,
        ) from exc


def estimate_tokens(text: str) -> int:
    """About four characters a token: how the offline engine counts (price 0)."""
    return max(1, (len(text) + 3) // 4) if text else 0
