"""The `dealroom` command as an operator runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from dealroom.domain.passwords import OWASP_MINIMUM
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, AccountManager
from dealroom.schema.build import create_schema
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.passwords import passwords_for
from tests.support.backends import create_database, drop_database
from tests.support.clock import ManualClock


def _dealroom(*args: str, database_url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALROOM_")}
    if database_url:
        env["DEALROOM_DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, "-m", "dealroom.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_export_schema_prints_the_sdl_and_writes_it_with_output(tmp_path: Path) -> None:
    printed = _dealroom("export-schema")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == create_schema().as_str() + "\n"
    target = tmp_path / "schema.graphql"
    written = _dealroom("export-schema", "--output", str(target))
    assert written.returncode == 0, written.stderr
    assert target.read_text() == printed.stdout


async def test_migrate_brings_an_empty_database_to_head() -> None:
    url = await create_database()
    try:
        result = _dealroom("migrate", database_url=url)
        assert result.returncode == 0, result.stderr
        assert "migrated to head" in result.stdout
        again = _dealroom("migrate", database_url=url)
        assert again.returncode == 0, again.stderr
    finally:
        await drop_database(url)


async def test_grant_manager_creates_the_act_as_edge(db: Db, database_url: str) -> None:
    clock = ManualClock()
    for handle in ("agency", "talent"):
        await accounts.sign_up(
            db,
            clock,
            passwords_for(OWASP_MINIMUM),
            email=f"{handle}@example.com",
            password="long enough",
            handle=handle,
            display_name=handle,
            ttl_days=1,
        )
    await db.commit()
    await db.close()
    result = _dealroom("accounts", "grant-manager", "agency", "talent", database_url=database_url)
    assert result.returncode == 0, result.stderr
    edges = await db.scalars(select(AccountManager))
    handles = {a.id: a.handle for a in await db.scalars(select(Account))}
    await db.close()
    assert [(handles[e.manager_id], handles[e.managed_id]) for e in edges] == [("agency", "talent")]


async def test_an_unknown_handle_is_a_clear_cli_error(database_url: str, db: Db) -> None:
    del db  # the database is migrated and empty
    result = _dealroom("accounts", "set-operator", "nobody", database_url=database_url)
    assert result.returncode != 0
    assert "NOT_FOUND" in result.stderr


def test_serve_processes_default_to_the_cores_only_with_a_shared_broker() -> None:
    from dealroom.server import process_count

    assert process_count(None, shared_broker=True, cpus=2) == 2
    assert process_count(None, shared_broker=False, cpus=8) == 1  # in-process broker: one
    assert process_count(3, shared_broker=True, cpus=2) == 3
    with pytest.raises(ValueError, match="DEALROOM_REDIS_URL"):
        process_count(2, shared_broker=False, cpus=2)
    with pytest.raises(ValueError, match="at least 1"):
        process_count(0, shared_broker=True, cpus=2)


def test_a_child_that_loads_after_its_supervisor_died_still_stops(tmp_path: Path) -> None:
    """A `serve --processes N` child still loading its app when the supervisor is SIGKILLed is
    re-parented before it starts watching: it must compare against the supervisor's pid as
    recorded before the fork, not read its parent then (it would watch its new parent
    forever). Here the child's real parent is this test, alive throughout; the recorded
    supervisor is a process that has already exited."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\n"
            "from dealroom.server import supervisor_pid, watch_parent\n"
            "watch_parent(supervisor_pid(), poll=0.05)\n"
            "time.sleep(60)\n",
        ],
        env={**os.environ, "DEALROOM_SUPERVISOR_PID": str(gone.pid)},
    )
    try:
        returncode = child.wait(timeout=30)
    finally:
        child.kill()
    assert returncode == -15  # asked itself to stop (SIGTERM), long before its 60 s sleep
