"""First run as a new user does it: `dealroom serve` on an empty embedded database seeds the
demo host and its banner names what to open; `DEALROOM_DEMO=0` serves an empty database;
`dealroom demo` is idempotent. Real processes on a temporary data directory."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.processes import free_port


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALROOM_")}
    env.pop("GEMINI_API_KEY", None)
    env.update({"DEALROOM_DATA_DIR": str(data_dir), "DEALROOM_MODEL_ENGINE": "offline", **extra})
    return env


def _serve_banner(env: dict[str, str]) -> tuple[list[str], int]:
    """Start `dealroom serve`, read its banner until uvicorn is up, check /z/maya, stop it."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "dealroom.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            # "Uvicorn running" comes after the socket is bound ("Application startup
            # complete" comes before it: a request then may be refused)
            if "Uvicorn running" in line:
                break
        status = _get_status(f"http://127.0.0.1:{port}/z/maya", process, lines)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return lines, status


def _get_status(url: str, process: subprocess.Popen[str], lines: list[str]) -> int:
    deadline = time.monotonic() + 30
    while True:
        try:
            return httpx.get(url, timeout=30).status_code
        except httpx.ConnectError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("serve never answered:\n" + "\n".join(lines)) from None
            time.sleep(0.1)


def test_serve_on_an_empty_database_seeds_the_demo_and_says_what_to_open(
    tmp_path: Path,
) -> None:
    lines, status = _serve_banner(_env(tmp_path))

    banner = "\n".join(lines)
    assert "/z/maya" in banner, banner
    assert "maya@demo.dealroom.test / dealroom-demo" in banner
    assert "floor 6000 USD" in banner
    assert "dealroom: open http://127.0.0.1:" in banner
    assert status == 200


def test_demo_off_serves_an_empty_database(tmp_path: Path) -> None:
    lines, status = _serve_banner(_env(tmp_path, DEALROOM_DEMO="0"))

    assert "/z/maya" not in "\n".join(lines)
    assert status == 404


def test_dealroom_demo_is_idempotent(tmp_path: Path) -> None:
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dealroom.cli", "demo"],
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    first, second = run(), run()

    assert first.returncode == 0, first.stderr
    assert "demo host seeded: maya" in first.stdout
    assert second.returncode == 0, second.stderr
    assert "demo host ready: maya" in second.stdout
    assert "http://127.0.0.1:8000/z/maya" in second.stdout


def test_serve_still_starts_when_the_demo_cannot_be_taught(tmp_path: Path) -> None:
    """A model that cannot be reached (Gemini at a closed port) fails the teaching turn: the
    banner says so and the server serves anyway."""
    env = _env(
        tmp_path,
        DEALROOM_MODEL_ENGINE="gemini",
        DEALROOM_GEMINI_BASE_URL=f"http://127.0.0.1:{free_port()}",
        DEALROOM_MODEL_ATTEMPTS="1",
        DEALROOM_MODEL_TIMEOUT_SECONDS="2",
    )
    env["GEMINI_API_KEY"] = "not-a-key"

    lines, status = _serve_banner(env)

    banner = "\n".join(lines)
    assert "the demo could not be seeded" in banner, banner
    assert "did not record a floor" in banner
    assert status == 200  # the account exists; a later start finishes the teaching
