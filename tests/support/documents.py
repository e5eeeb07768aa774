"""Reading memory documents in tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

Path: TypeAlias = tuple[str, ...]


def leaves(document: Mapping[str, Any], prefix: Path = ()) -> dict[Path, Any]:
    """Every value in a document by its path; an empty section counts as a value."""
    found: dict[Path, Any] = {}
    for key, value in document.items():
        path = (*prefix, key)
        if isinstance(value, Mapping) and value:
            found |= leaves(value, path)
        else:
            found[path] = value
    return found
