"""Start-up and operations: an unmigrated database is refused in one line naming `dealroom
migrate`; CLI errors are one line, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.backends import PG_FOR_PROCESS_TESTS, create_database, drop_database


def _dealroom(
    *args: str, database_url: str | None = None, cwd: Path | None = None, workers: str = "1"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALROOM_")}
    env["DEALROOM_WORKERS"] = workers
    if database_url:
        env["DEALROOM_DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, "-m", "dealroom.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=cwd,
    )


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
async def empty_database() -> AsyncIterator[str]:
    url = await create_database()
    yield url
    await drop_database(url)


def test_a_worker_refuses_an_unmigrated_database_in_one_line(empty_database: str) -> None:
    line = _one_line(_dealroom("worker", database_url=empty_database))

    assert "`dealroom migrate`" in line
    assert "no revision" in line


@pytest.fixture
async def empty_postgresql() -> AsyncIterator[str]:
    """PostgreSQL on both passes: on SQLite, serve migrates the embedded file itself, so the
    refusal is about a server database (a machine without PostgreSQL fails, never skips)."""
    url = await create_database(PG_FOR_PROCESS_TESTS)
    yield url
    await drop_database(url)


def test_serve_refuses_an_unmigrated_database_in_one_line(empty_postgresql: str) -> None:
    line = _one_line(_dealroom("serve", "--port", "0", database_url=empty_postgresql))

    assert "`dealroom migrate`" in line


def test_an_accounts_command_on_an_unmigrated_database_is_one_line(empty_database: str) -> None:
    line = _one_line(_dealroom("accounts", "set-operator", "mara", database_url=empty_database))

    # The start-up check's refusal, not a failed statement's (which names `dealroom migrate`
    # too, as a guess).
    assert "`dealroom migrate`" in line
    assert "no revision" in line


def test_an_accounts_command_from_another_directory_is_one_line(tmp_path: Path) -> None:
    """No DEALROOM_DATABASE_URL and no .dealroom here: a fresh embedded file, unmigrated
    (this printed a 157-line traceback)."""
    line = _one_line(_dealroom("accounts", "set-operator", "mara", cwd=tmp_path))

    assert "`dealroom migrate`" in line
    assert "no revision" in line


async def test_an_unknown_handle_is_one_line(database_url: str, engine: object) -> None:
    line = _one_line(_dealroom("accounts", "set-operator", "nobody", database_url=database_url))

    assert line.startswith("Error: NOT_FOUND")
