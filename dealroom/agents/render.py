"""Rendering helpers shared by the agents' input builders (pure, no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dealroom.domain.memory import RULINGS


@dataclass(frozen=True, slots=True)
class Line:
    """One transcript line of the current session, as an agent reads it."""

    author: str
    """``participant``, ``agent``, ``operator`` (an operator in the agent's seat) or ``system``."""
    body: str
    id: str | None = None
    """The message id, where the agent must cite its source (Distil: a limit's ``source``)."""
    relayed_from: str | None = None
    """Set on an agent's delivery of another participant's words: the sender's name. Such a
    line is a true relay, never the agent's own claim."""

    def to_json(self) -> dict[str, str]:
        data = {"author": self.author, "body": self.body}
        if self.id:
            data["id"] = self.id
        if self.relayed_from is not None:
            data["relayed_from"] = self.relayed_from
        return data

    @property
    def shown(self) -> str:
        """The body as agents read it: a relay carries its ``[relayed from …]`` mark."""
        if self.relayed_from is None:
            return self.body
        return f"[relayed from {self.relayed_from}] {self.body}"


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
    # An operator speaks in the agent's seat: the agent reads those lines as its seat's own.
    names = {"participant": participant, "agent": agent, "operator": agent, "system": "system"}
    return "\n".join(
        f"{f'[{line.id}] ' if line.id else ''}{names.get(line.author, line.author)}: {line.shown}"
        for line in lines
    )


def memory_view(memory: Mapping[str, Any]) -> str:
    """The memory document as an agent reads it. A ruling's ``dispatchId`` joins to a dispatch
    row that no agent's record shows by id, so the prompt leaves it out (a UUID costs some
    twenty tokens at every turn's uncached tail and tells the model nothing)."""
    rulings = memory.get(RULINGS)
    if not isinstance(rulings, Mapping):
        return document(memory)
    shown = {
        pane: [
            {k: v for k, v in entry.items() if k != "dispatchId"}
            if isinstance(entry, Mapping)
            else entry
            for entry in entries
        ]
        if isinstance(entries, list)
        else entries
        for pane, entries in rulings.items()
    }
    return document({**memory, RULINGS: shown})


def dispatch_record(entries: Sequence[Mapping[str, Any]]) -> str:
    """The dispatch record, one crossing a line, oldest first: ``sender → recipient (status):
    what crossed`` (the same facts as the rows' JSON at half the tokens)."""
    if not entries:
        return "(nothing has crossed yet)"
    # A substance is a model's words: a line break in it must not read as another crossing.
    return "\n".join(
        f"{entry.get('from')} → {entry.get('to')} ({entry.get('status')}): "
        f"{' '.join(str(entry.get('substance')).split())}"
        for entry in entries
    )
