"""The context filter: generous, selects existing sections by path, never summarises (seed
000 "A generous context filter"). It only ever sees the already visibility-filtered document,
so it is not trusted with confidentiality and cannot fabricate a memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import Line, document, transcript


class FilterOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paths: list[str] = Field(
        default_factory=list,
        description="Dotted paths of the sections to keep; anything plausibly relevant.",
    )


PROMPT = """You choose which sections of a memory document an agent should read for its next
reply. Be generous: include anything plausibly relevant; an agent missing one crucial fact is
worse than one carrying some irrelevant detail. Answer only with dotted paths that exist in
the list of available paths. Never summarise, never write new text.
Reply with JSON matching the schema.
"""


@dataclass(frozen=True, slots=True)
class FilterInput:
    pane: str
    memory: Mapping[str, Any]
    paths: Sequence[str]
    session: Sequence[Line]


def build(inputs: FilterInput, *, model: str, visitor_facing: bool) -> ModelRequest:
    context: dict[str, Any] = {
        "agent": AgentName.CONTEXT_FILTER.value,
        "pane": inputs.pane,
        "memory": dict(inputs.memory),
        "paths": list(inputs.paths),
        "session": [line.to_json() for line in inputs.session],
    }
    prompt = "\n\n".join(
        [
            f"AVAILABLE PATHS:\n{document(list(inputs.paths))}",
            f"MEMORY:\n{document(context['memory'])}",
            "CURRENT SESSION:\n" + transcript(inputs.session, participant="them", agent="agent"),
        ]
    )
    return ModelRequest(
        agent=AgentName.CONTEXT_FILTER,
        model=model,
        system=PROMPT,
        prompt=prompt,
        context=context,
        output=FilterOutput,
        visitor_facing=visitor_facing,
    )
