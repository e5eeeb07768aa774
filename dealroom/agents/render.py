"""Rendering helpers shared by the agents' input builders (pure, no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Line:
    """One transcript line of the current session, as an agent reads it."""

    author: str
    """``participant``, ``agent`` or ``system``."""
    body: str
    id: str | None = None
    """The message id, where the agent must cite its source (Distil: a limit's ``source``)."""

    def to_json(self) -> dict[str, str]:
        line = {"author": self.author, "body": self.body}
        return line | {"id": self.id} if self.id else line


@dataclass(frozen=True, slots=True)
class Party:
    key: str
    name: str

    def to_json(self) -> dict[str, str]:
        return {"key": self.key, "name": self.name}


def document(value: Mapping[str, Any] | Sequence[Any] | None) -> str:
    """Stable JSON (sorted keys) so equal documents render to equal prompt text."""
    return json.dumps(value if value is not None else {}, sort_keys=True, ensure_ascii=False)


def transcript(lines: Sequence[Line], *, participant: str, agent: str) -> str:
    if not lines:
        return "(no messages yet in this session)"
    names = {"participant": participant, "agent": agent, "system": "system"}
    return "\n".join(
        f"{f'[{line.id}] ' if line.id else ''}{names.get(line.author, line.author)}: {line.body}"
        for line in lines
    )
