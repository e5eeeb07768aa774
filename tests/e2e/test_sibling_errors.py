"""A failing field does not break its siblings' unit of work (issue 9, defect 5)."""

from __future__ import annotations

import asyncio
import gc

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import Server
from tests.support.graphql import sign_up

QUERY = '{ me { memory } a: room(id: "x") { id } b: room(id: "y") { id } }'


async def test_sibling_fields_cancelled_by_an_error_leave_the_session_clean(
    server: Server, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """graphql-core cancels the siblings of a failed non-null field; a statement cut off
    mid-flight used to leave "Future exception was never retrieved ... PendingRollbackError"
    and, on PostgreSQL, a connection thrown away per request."""
    client = server.client()
    await sign_up(client, "mara", "Mara Ellison")
    opened_before = engine.pool.checkedin() + engine.pool.checkedout()  # type: ignore[attr-defined]

    for _ in range(20):
        body = await client.raw(QUERY)
        assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
    await asyncio.sleep(0.2)
    gc.collect()  # "never retrieved" is logged when the failed future is collected
    await asyncio.sleep(0.1)

    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "PendingRollbackError" not in logged
    assert "never retrieved" not in logged
    assert (await client.query("{ me { handle } }"))["me"]["handle"] == "mara"
    pool_size = engine.pool.checkedin() + engine.pool.checkedout()  # type: ignore[attr-defined]
    assert pool_size <= max(opened_before, 1) + 2  # no connection churned per request
