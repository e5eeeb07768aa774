"""``dealroom worker`` tunes its collector as ``serve`` does (issue 17): what start-up made is
frozen, young collections come every ``DEALROOM_GC_YOUNG_THRESHOLD`` allocations, and every
pause is timed, one at least ``DEALROOM_GC_PAUSE_LOG_MS`` long logged. Until 2026-12-03 a
worker process kept CPython's collector as it was, with its pauses unseen."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine


async def _first_pause(stream: asyncio.StreamReader) -> dict[str, Any]:
    while line := await stream.readline():
        if line.startswith(b"{") and b'"gc_pause"' in line:
            found: dict[str, Any] = json.loads(line)
            return found
    raise AssertionError("the worker ended without logging a collection")


async def test_a_worker_process_times_its_collections_and_logs_a_long_one(
    engine: AsyncEngine, database_url: str
) -> None:
    env = {
        **os.environ,
        "DEALROOM_DATABASE_URL": database_url,
        "DEALROOM_WORKERS": "0",
        "DEALROOM_WEBHOOK_WORKERS": "1",
        "DEALROOM_WEBHOOK_POLL_SECONDS": "0.05",
        "DEALROOM_GC_YOUNG_THRESHOLD": "200",  # collections soon, from the polls alone
        "DEALROOM_GC_PAUSE_LOG_MS": "0.000001",  # every pause is "long"
        "DEALROOM_LOG_FORMAT": "json",
    }
    env.pop("DEALROOM_REDIS_URL", None)  # the webhook worker polls; no broker needed
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "dealroom.cli",
        "worker",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        pause = await asyncio.wait_for(_first_pause(process.stderr), timeout=60)
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()
    assert pause["pid"] == process.pid
    assert pause["generation"] in (0, 1, 2)
    assert pause["ms"] >= 0
