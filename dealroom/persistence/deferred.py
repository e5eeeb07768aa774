"""Writes a unit of work sends later (``Db.defer``), and the raw lane's two ways of sending
several in one statement on PostgreSQL: as a batch before the unit's next statement or at its
commit (``raw_lane.batch``), or folded into the ``WITH`` of a unit's only write, autocommitted
(``raw_lane.folded``, ``Db.write_autocommit``). Each write's parameters are renamed
``<index>:<name>`` in the one statement."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Executable
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection

from dealroom.persistence import raw_lane


@dataclass(frozen=True, slots=True)
class Deferred:
    statement: Executable
    params: dict[str, Any]
    refuse: Callable[[], BaseException] | None


def _compiled_all(queued: Sequence[Deferred], dialect: Dialect) -> list[raw_lane.Compiled] | None:
    """Each write's raw lane form, or None when any of them must go through SQLAlchemy."""
    forms: list[raw_lane.Compiled] = []
    for write in queued:
        form = raw_lane.compiled(write.statement, dialect)
        if form is None or not form.takes(write.params):
            return None
        forms.append(form)
    return forms


def _checked(queued: Sequence[Deferred]) -> tuple[int, ...]:
    return tuple(index for index, write in enumerate(queued) if write.refuse is not None)


def _numbered(queued: Sequence[Deferred]) -> dict[str, Any]:
    return {
        f"{index}:{name}": value
        for index, write in enumerate(queued)
        for name, value in write.params.items()
    }


async def send_batched(connection: AsyncConnection, driver: Any, queued: list[Deferred]) -> bool:
    """Send ``queued`` as one statement on ``driver`` (the asyncpg connection under
    ``connection``, in its transaction); False when the raw lane cannot (nothing sent then). A
    write whose ``refuse`` check found no row raises it."""
    forms = _compiled_all(queued, connection.dialect)
    checked = _checked(queued)
    batch = raw_lane.batch(forms, checked) if forms is not None else None
    if batch is None:
        return False
    rows = await raw_lane.fetch(connection, driver, batch, _numbered(queued))
    for position, index in enumerate(checked):
        refuse = queued[index].refuse
        if refuse is not None and not rows[0][position]:
            raise refuse()
    return True


def folded(
    statement: Executable,
    params: dict[str, Any],
    queued: list[Deferred],
    dialect: Dialect,
    stored: str,
) -> tuple[raw_lane.Compiled, dict[str, Any]] | None:
    """``statement`` (a ``WITH`` on the raw lane) with ``queued`` folded into it, and the
    parameters of them all; None when the raw lane cannot fold them."""
    lead = raw_lane.compiled(statement, dialect)
    forms = _compiled_all(queued, dialect)
    if lead is None or not lead.takes(params) or forms is None:
        return None
    fold = raw_lane.folded(lead, forms, _checked(queued), stored)
    return None if fold is None else (fold, {**params, **_numbered(queued)})
