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

    def to_json(self) -> dict[str, str]:
        return {"author": self.author, "body": self.body}


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
    return "\n".join(f"{names.get(line.author, line.author)}: {line.body}" for line in lines)
