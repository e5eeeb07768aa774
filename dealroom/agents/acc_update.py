"""AccUpdate, the courier of standing knowledge (seed 000 "Standing knowledge is merged in, and
announced"; the Guard's "same kind of exception on the inbound path").

Before a turn, when a bound account's durable memory is newer than the room's last seed or
merge, code merges the account's changed leaves into that participant's branch — the account
wins on conflict, and only that branch is ever written (D4). AccUpdate's judgement is narrow:
given the facts being merged and the branch they land in, it names the branch leaves those
facts make stale (a legacy floor the new limit replaces, a rate stated differently), so the
branch does not argue with itself. It can only remove, only in that branch, and never a leaf
being merged; the announcement is composed by code from what actually changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import document


class AccUpdateOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stale: list[str] = Field(
        default_factory=list,
        description="Dotted paths of the branch made stale by the merged facts (to remove). "
        "Usually empty. Never a path being merged.",
    )


PROMPT = """You are AccUpdate. A participant's standing knowledge (their long-term profile) has
changed since this room last saw it, and code is merging the changed facts into their branch
of the room's memory; the profile wins. Name the leaves of the branch that the merged facts
make stale — an older statement of the same fact under another path (a floor recorded as a
rate, a rule phrased differently). Leave everything else alone: a fact the merge does not
touch stays. Never name a path that is being merged. Most merges make nothing stale.
Reply with JSON matching the schema.
"""


@dataclass(frozen=True, slots=True)
class AccUpdateInput:
    pane: str
    merged: Mapping[str, Any]
    """The merged leaves by path (relative to the branch), with their new values (None: removed)."""
    branch: Mapping[str, Any]
    """The branch after the merge."""


def build(inputs: AccUpdateInput, *, model: str) -> ModelRequest:
    context: dict[str, Any] = {
        "agent": AgentName.ACC_UPDATE.value,
        "pane": inputs.pane,
        "merged": dict(inputs.merged),
        "branch": dict(inputs.branch),
    }
    prompt = "\n\n".join(
        [
            f"PARTICIPANT: {inputs.pane}.",
            f"MERGED FROM THE PROFILE (path: new value):\n{document(context['merged'])}",
            f"THE BRANCH AFTER THE MERGE:\n{document(context['branch'])}",
        ]
    )
    return ModelRequest(
        agent=AgentName.ACC_UPDATE,
        model=model,
        system=PROMPT,
        prompt=prompt,
        context=context,
        output=AccUpdateOutput,
        # It reads and writes one participant's own branch; in a deal room only the host's.
        visitor_facing=False,
    )


def allowed_removals(stale: Sequence[str], merged: Sequence[str]) -> list[str]:
    """D4: only branch leaves, never one being merged (nor above or below one)."""
    kept: list[str] = []
    for path in stale:
        if any(path == m or path.startswith(f"{m}.") or m.startswith(f"{path}.") for m in merged):
            continue
        if path not in kept:
            kept.append(path)
    return kept
