"""The API as client developers meet it, over real HTTP: the GraphQL-over-HTTP rules, persisted
queries, CORS, the ops switches, and real npm clients (``tests/js``) run by Node."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import browser, new_context, offline
from tests.conftest import Server
from tests.support.graphql import Client

__all__ = ["browser", "new_context", "offline"]

JS = Path(__file__).resolve().parent.parent / "js"
INSTALLED = JS / "node_modules" / ".installed"


@dataclass(frozen=True)
class Node:
    """Node.js and the locked npm packages of ``tests/js``."""

    executable: str

    async def run(
        self, script: str, *args: str, timeout: float = 120.0, env: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        """(exit status, stdout, stderr) of ``node tests/js/<script> args...``."""
        process = await asyncio.create_subprocess_exec(
            self.executable,
            str(JS / script),
            *args,
            cwd=JS,
            env={**os.environ, **(env or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        return process.returncode or 0, out.decode(), err.decode()

    async def run_json(self, script: str, *args: str) -> list[dict[str, Any]]:
        """The JSON lines a script printed; it must exit 0."""
        code, out, err = await self.run(script, *args)
        assert code == 0, f"node {script} exited {code}:\n{out}\n{err}"
        return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def node() -> Node:
    """Node and ``tests/js``'s packages (``make test`` installs them with ``npm ci``). Missing,
    the tests skip with the command to run, except under CI=true, where they fail."""
    executable = shutil.which("node")
    problem = None
    if executable is None:
        problem = "node is not installed (apt-get install nodejs npm)"
    elif not INSTALLED.exists():
        stamp = INSTALLED.relative_to(JS.parent.parent)
        problem = f"the npm clients are not installed: run `make {stamp}`"
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)
    assert executable is not None
    return Node(executable)


@pytest.fixture
def client(server: Server) -> Client:
    return server.client()
