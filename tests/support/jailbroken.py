"""The adversarial model: a fake Gemini that is fully jailbroken.

Over the real fake server (tests/support/fake_gemini.py) and so through the real google-genai
client, it answers every request with every string field of the requested JSON schema filled
with the request's whole prompt — each section (split on blank lines) bounded, and the whole
bounded, so a transcript of echoes cannot grow without end while every part of the prompt
(the memory document included) is still repeated in every field. Fields that must take one
of a closed set of values (an enum) take the first; arrays hold one element; objects have
every property, optional ones included.

Where an attack needs the model to address something (a send's recipient) or to choose
(leave the ruling out, fill a covert one, file everything under ``host.public``), a test
passes ``patch``: ``patch(agent, prompt, answer) -> answer`` edits the echo before it goes
out. ``agent`` is read from the system instruction.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_gemini import JsonObject, Reply

SECTION_CHARS = 3_000
WHOLE_CHARS = 12_000

SYSTEMS = {
    "You are a negotiating agent": "persona",
    "You are the memory writer": "distil",
    "You choose which sections": "filter",
    "You write down the terms of a deal": "offer_gen",
}

Patch = Callable[[str, str, dict[str, Any]], dict[str, Any]]


def bounded(prompt: str) -> str:
    sections = [s[:SECTION_CHARS] for s in prompt.split("\n\n")]
    return "\n\n".join(sections)[:WHOLE_CHARS]


def agent_of(system: str) -> str:
    return next((name for prefix, name in SYSTEMS.items() if system.startswith(prefix)), "other")


def fill(schema: JsonObject, text: str, defs: JsonObject) -> Any:
    """A value of ``schema`` whose every string is ``text``."""
    if "$ref" in schema:
        return fill(defs[schema["$ref"].rsplit("/", 1)[-1]], text, defs)
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"]
        return fill(options[0], text, defs) if options else None
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {k: fill(v, text, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [fill(schema.get("items", {}), text, defs)]
    if kind == "string":
        limit = schema.get("maxLength")
        return text[:limit] if isinstance(limit, int) else text
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return None


def in_host_pane(prompt: str) -> bool:
    """The pane a persona or Distil prompt is for, from its first line (an echo quoted later
    in the prompt does not count)."""
    first = prompt.split("\n", 1)[0]
    return "PANE: host." in first


def default_patch(agent: str, prompt: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The one choice the echo cannot make: a send goes to the other side of the room."""
    if agent == "persona":
        other = "visitor" if in_host_pane(prompt) else "host"
        for send in answer.get("sends", []):
            send["to"] = other
    return answer


@dataclass
class Jailbroken:
    """A ``responder`` for FakeGemini; counts what it answered, per agent."""

    patch: Patch | None = None
    answered: dict[str, int] = field(default_factory=dict)

    def __call__(self, body: JsonObject) -> Reply:
        system = "".join(p.get("text", "") for p in body["systemInstruction"]["parts"])
        prompt = "".join(p.get("text", "") for c in body["contents"] for p in c["parts"])
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        agent = agent_of(system)
        answer = fill(schema, bounded(prompt), schema.get("$defs", {}))
        answer = default_patch(agent, prompt, answer)
        if self.patch is not None:
            answer = self.patch(agent, prompt, answer)
        self.answered[agent] = self.answered.get(agent, 0) + 1
        return Reply(json.dumps(answer), usage=(len(prompt) // 4, 100, 0), chunks=4)
