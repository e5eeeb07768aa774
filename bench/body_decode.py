"""Request body decoding benchmark: how long the server's event loop stalls while three
clients loop sending the costliest JSON body the limits let through, and what a concurrent
``/health`` sees meanwhile.

The server runs in this process (uvicorn on a loopback port, embedded SQLite, no agent
workers) beside a monitor task that sleeps 1 ms at a time and records how late it wakes: that
lateness is the event-loop stall. The clients run in a child process (this script with
``--clients``) so their own work is not on the server's loop. Each phase sends bodies of
``DEALROOM_MAX_REQUEST_BYTES`` minus a little:

* ``string``: one long string in ``variables`` (the cheap shape of that size: the baseline);
* ``nested``: ``variables`` made of small nested arrays (``[[[[]]]],...``), the dearest shape
  to decode and to check for depth per byte.

For each it prints the worst and the 99th-percentile stall, ``/health`` p50 and max, and the
status codes the big bodies got; then the CPU one body's decode costs in this process, and the
nested/string ratios. It asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

LIMIT = 256 * 1024
PHASES = ("string", "nested")


def body_of(shape: str, size: int = LIMIT - 200) -> bytes:
    if shape == "string":
        return json.dumps(
            {"query": "{ __typename }", "variables": {"pad": "x" * (size - 60)}}
        ).encode()
    unit = "[[[[]]]]"
    count = (size - 60) // (len(unit) + 1)
    padding = "[" + ",".join([unit] * count) + "]"
    return ('{"query":"{ __typename }","variables":{"pad":' + padding + "}}").encode()


# --- the clients (child process) ---------------------------------------------------------------


async def clients(base_url: str, shape: str, seconds: float) -> dict[str, object]:
    body = body_of(shape)
    deadline = time.monotonic() + seconds
    statuses: dict[int, int] = {}
    health: list[float] = []

    async def sender() -> None:
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as http:
            while time.monotonic() < deadline:
                response = await http.post(
                    "/graphql", content=body, headers={"content-type": "application/json"}
                )
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    async def prober() -> None:
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as http:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                await http.get("/health/live")
                health.append(time.perf_counter() - started)
                await asyncio.sleep(0.01)

    await asyncio.gather(prober(), *(sender() for _ in range(3)))
    return {
        "bytes": len(body),
        "statuses": statuses,
        "health_p50": statistics.median(health),
        "health_max": max(health),
        "health_n": len(health),
    }


# --- the server and the stall monitor (this process) -------------------------------------------


async def monitor(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - started - 0.001)


async def phase(base_url: str, shape: str, seconds: float) -> dict[str, object]:
    lags: list[float] = []
    stop = asyncio.Event()
    watcher = asyncio.create_task(monitor(lags, stop))
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--clients",
        base_url,
        "--shape",
        shape,
        "--seconds",
        str(seconds),
        stdout=subprocess.PIPE,
    )
    out, _ = await child.communicate()
    stop.set()
    await watcher
    result: dict[str, object] = json.loads(out)
    lags.sort()
    result["stall_max"] = lags[-1]
    result["stall_p99"] = lags[int(len(lags) * 0.99)]
    return result


def decode_cost(shape: str, rounds: int = 20) -> float:
    """Seconds of CPU one body's decode (or refusal) costs, best of ``rounds``."""
    from dealroom.config import Settings
    from dealroom.request_limits import JsonTooDeep, decode_json

    settings = Settings()
    body = body_of(shape)
    best = float("inf")
    for _ in range(rounds):
        started = time.thread_time()
        with contextlib.suppress(JsonTooDeep):
            decode_json(body, settings.max_json_depth, settings.max_json_items)
        best = min(best, time.thread_time() - started)
    return best


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def serve(seconds: float) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="dealroom-body-decode-"))
    os.environ.update(
        {"DEALROOM_DATA_DIR": str(data_dir), "DEALROOM_WORKERS": "0", "DEALROOM_DEMO": "0"}
    )
    for name in ("DEALROOM_DATABASE_URL", "DEALROOM_REDIS_URL"):
        os.environ.pop(name, None)
    from dealroom.app import create_app
    from dealroom.cli import _migrate
    from dealroom.config import Settings
    from dealroom.server import start_in_background

    settings = Settings()
    await _migrate(settings)
    server = await start_in_background(create_app(settings))
    base_url = f"http://127.0.0.1:{server.port}"
    try:
        rows = {shape: await phase(base_url, shape, seconds) for shape in PHASES}
    finally:
        await server.stop()
    print(f"3 clients looping {seconds:.0f} s each phase; /health/live probed every 10 ms")
    print(
        f"{'body':8} {'bytes':>8} {'stall max':>11} {'stall p99':>11} "
        f"{'/health p50':>12} {'/health max':>12}  statuses"
    )
    for shape, row in rows.items():
        print(
            f"{shape:8} {row['bytes']!s:>8} {ms(float(row['stall_max'])):>11} "  # type: ignore[arg-type]
            f"{ms(float(row['stall_p99'])):>11} {ms(float(row['health_p50'])):>12} "  # type: ignore[arg-type]
            f"{ms(float(row['health_max'])):>12}  {row['statuses']}"  # type: ignore[arg-type]
        )
    for shape in PHASES:
        print(f"decode (or refusal) of one {shape} body: {ms(decode_cost(shape))} CPU")
    nested, string = rows["nested"], rows["string"]
    print(
        "nested/string: stall max "
        f"{float(nested['stall_max']) / float(string['stall_max']):.1f}x, "  # type: ignore[arg-type]
        "/health p50 "
        f"{float(nested['health_p50']) / float(string['health_p50']):.1f}x"  # type: ignore[arg-type]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="each phase's length")
    parser.add_argument("--clients", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--shape", choices=PHASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.clients:
        print(json.dumps(asyncio.run(clients(args.clients, args.shape, args.seconds))))
        return
    asyncio.run(serve(args.seconds))


if __name__ == "__main__":
    main()
