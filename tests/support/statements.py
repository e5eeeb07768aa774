"""What an engine's ``before_cursor_execute`` listeners hear, for tests of the raw lane and of
deferred writes: a statement by the raw lane comes without a cursor."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")


@contextmanager
def heard(engine: AsyncEngine, keep: Callable[[str, bool], T]) -> Iterator[list[T]]:
    """``keep(statement, by_raw_lane)`` of each statement heard while inside; BEGIN left out."""
    seen: list[T] = []

    def record(conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        assert conn is not None  # listeners may read the connection (its ``info``)
        if not statement.lstrip().upper().startswith("BEGIN"):
            seen.append(keep(statement, cursor is None))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
