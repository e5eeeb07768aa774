"""The context filter's rules: which memory paths a turn may need."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dealroom.agents.context_filter import FilterOutput
from dealroom.agents.models.offline.common import _at, _leaves, _list, _map, _str, _words
from dealroom.domain.terms import find_amounts, find_deliverables

ALWAYS: Final = ("deal", "goals", "offers", "rulings", "pendingPrincipalDecisions")


def filter_output(context: Mapping[str, Any]) -> FilterOutput:
    """Generous: every available path that shares a word, a deliverable or an amount with the
    session, plus the sections every agent needs. Only paths from the offered list."""
    pane = _str(context.get("pane"))
    memory = _map(context.get("memory"))
    paths = [p for p in _list(context.get("paths")) if isinstance(p, str)]
    said = " ".join(
        _str(line.get("body"))
        for line in _list(context.get("session"))
        if isinstance(line, Mapping)
    )
    words = _words(said)
    slugs = set(find_deliverables(said))
    amounts = {money.amount for money in find_amounts(said)}
    chosen: list[str] = []
    for path in paths:
        segments = path.split(".")
        if segments[0] in ALWAYS or segments[0] == pane or path.startswith("host.public"):
            chosen.append(path)
            continue
        if slugs.intersection(segments):
            chosen.append(path)
            continue
        values = [text for _p, text in _leaves(_at(memory, path))]
        path_words = _words(" ".join(segments).replace("_", " "))
        value_words = _words(" ".join(values))
        if words & (path_words | value_words) or slugs.intersection(
            find_deliverables(" ".join(values))
        ):
            chosen.append(path)
            continue
        if amounts and any(m.amount in amounts for v in values for m in find_amounts(v)):
            chosen.append(path)
    return FilterOutput(paths=chosen)
