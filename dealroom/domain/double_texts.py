"""Double texts: several posts by one participant before the pane's agent has answered.

People write in bursts ("Hi" / "we're Acme" / "can you do $7,000?"). Answering each post on
its own gives three replies, the first asking for what the third already said, and a persona
and a Distil call per post. The strategy is a setting (``DEALROOM_DOUBLE_TEXT``), named as
LangGraph names its double-texting options:

- ``coalesce`` (the default): a run answers its post and every later post of the pane it
  read; the runs of those posts are marked answered by its reply. A post committed after the
  run read the pane (while the reply streams) keeps its own run, which reads the reply.
- ``enqueue``: every post gets its own run, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class DoubleText(StrEnum):
    COALESCE = "coalesce"
    ENQUEUE = "enqueue"


def later_posts(
    authors: Sequence[str], ids: Sequence[str], trigger_id: str | None, strategy: DoubleText
) -> list[int]:
    """DT1: the indices of the posts a run triggered by ``trigger_id`` answers besides its
    own — the participant's posts after it in the session it read (``authors`` and ``ids``
    of each line, in order). None under ``enqueue``, and none when the trigger is not in the
    session (a delivery, a stage notice, a post from an earlier session)."""
    if strategy == DoubleText.ENQUEUE or trigger_id is None or trigger_id not in ids:
        return []
    start = list(ids).index(trigger_id) + 1
    return [i for i in range(start, len(ids)) if authors[i] == "participant"]


def joined(bodies: Sequence[str]) -> str:
    """DT2: the posts one run answers, read as one message, each on its own line."""
    return "\n".join(body.strip() for body in bodies if body.strip())
