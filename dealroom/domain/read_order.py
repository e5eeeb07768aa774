"""The order a pane's lines were read in, for a reader that needs to know what each reply
answered (Offer-Gen deciding which terms both sides said yes to).

A pane's lines are stored in commit order. A participant's post can be committed before an
agent line that its answer then read — a counter delivered while "Agreed." was in flight —
so commit order can put a yes before the offer it accepted. The run that answered a post
read everything committed before its reply, so the post belongs just before that reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")


def as_answered(ids: Sequence[str], answered_by: Mapping[str, str]) -> list[int]:
    """RO1: the indices of ``ids`` (a pane's lines, commit order) with each answered post moved
    to just before the reply that answered it (``answered_by``: post id → reply id). A post
    whose reply is not among ``ids`` keeps its place; every index appears exactly once."""
    position = {line_id: index for index, line_id in enumerate(ids)}
    moved: dict[int, list[int]] = {}
    for post, reply in answered_by.items():
        at, before = position.get(post), position.get(reply)
        if at is not None and before is not None and at < before:
            moved.setdefault(before, []).append(at)
    skipped = {index for group in moved.values() for index in group}
    order: list[int] = []
    for index in range(len(ids)):
        order.extend(sorted(moved.get(index, ())))
        if index not in skipped:
            order.append(index)
    return order


def reordered(items: Sequence[T], order: Sequence[int]) -> list[T]:
    return [items[index] for index in order]
