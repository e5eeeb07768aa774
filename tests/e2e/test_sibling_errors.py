"""A failing field does not break its siblings' unit of work."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import Server
from tests.support.graphql import sign_up

QUERY = '{ me { memory { version } } a: room(id: "x") { id } b: room(id: "y") { id } }'
"""``me``'s statement is in flight when ``a`` fails and graphql-core cancels it (``me { memory }``
alone would not validate: ``memory`` is an object)."""


@contextmanager
def pool_events(engine: AsyncEngine) -> Iterator[dict[str, int]]:
    """Connections the pool opened and threw away while the block ran."""
    counts = {"connect": 0, "invalidate": 0}
    pool = engine.sync_engine.pool

    def counter(name: str) -> Any:
        def count(*_args: object) -> None:
            counts[name] += 1

        return count

    listeners = [(name, counter(name)) for name in counts]
    for name, listener in listeners:
        event.listen(pool, name, listener)
    try:
        yield counts
    finally:
        for name, listener in listeners:
            event.remove(pool, name, listener)


async def test_sibling_fields_cancelled_by_an_error_leave_the_session_clean(
    server: Server, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """graphql-core cancels the siblings of a failed non-null field; a statement cut off mid-flight
    leaves no "Future exception was never retrieved ... PendingRollbackError" and no connection
    thrown away (and a new one opened) per request, on either backend."""
    client = server.client()
    await sign_up(client, "mara", "Mara Ellison")

    with pool_events(engine) as pool:
        for _ in range(20):
            body = await client.raw(QUERY)
            assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
            assert (
                "valid room id" in body["errors"][0]["message"]
            )  # the resolver's, not validation's
    await asyncio.sleep(0.2)
    gc.collect()  # "never retrieved" is logged when the failed future is collected
    await asyncio.sleep(0.1)

    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "PendingRollbackError" not in logged
    assert "never retrieved" not in logged
    assert (await client.query("{ me { handle } }"))["me"]["handle"] == "mara"
    # No connection churned per request (the pool may open one beside the sign-up's).
    assert pool["invalidate"] == 0
    assert pool["connect"] <= 1
