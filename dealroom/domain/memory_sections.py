"""Reading room memory by sections, for the context filter: the menu of section paths and
the sub-document holding the chosen ones."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from dealroom.domain.memory import MISSING, SEGMENT, parse_path, value_at


def section_paths(document: Mapping[str, Any], max_depth: int = 3) -> list[str]:
    """The dotted paths of the sections (sections and values) down to ``max_depth``, sorted:
    the menu the context filter chooses from. Keys that are not path segments (M1) cannot be
    named, so they are not offered."""
    paths: list[str] = []

    def walk(node: Mapping[str, Any], prefix: str, depth: int) -> None:
        for key, child in node.items():
            if not isinstance(key, str) or not SEGMENT.fullmatch(key):
                continue
            path = f"{prefix}.{key}" if prefix else key
            paths.append(path)
            if depth < max_depth and isinstance(child, Mapping):
                walk(child, path, depth + 1)

    if max_depth >= 1:
        walk(document, "", 1)
    return sorted(paths)


def select_paths(
    document: Mapping[str, Any], paths: Sequence[str], *, always: Sequence[str] = ()
) -> dict[str, Any]:
    """The sub-document holding exactly the named sections that exist (whole subtrees), plus
    ``always``.

    Unknown or malformed paths are ignored: the context filter narrows what an agent reads
    and can never fabricate memory, so every value in the result is in ``document`` at the
    same path."""
    selected: dict[str, Any] = {}
    for path in [*always, *paths]:
        segments = parse_path(path)
        if segments is None:
            continue
        found = value_at(document, segments)
        if found is MISSING:
            continue
        node = selected
        for segment in segments[:-1]:
            child = node.get(segment)
            if not isinstance(child, dict):
                child = {}
                node[segment] = child
            node = child
        node[segments[-1]] = copy.deepcopy(found)
    return selected
