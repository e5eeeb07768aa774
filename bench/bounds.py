"""Request bounds benchmark: the worst stall of a concurrent /health while 3 clients send
maximum-size bodies, before -> after, in one run.

Two real ``dealroom serve`` subprocesses on embedded defaults (SQLite, in-process broker):

* ``before``: the bounds opened wide (``DEALROOM_MAX_REQUEST_BYTES`` 1 GiB, document and literal
  bounds 1 GiB): in effect, no bounds;
* ``after``: the defaults (256 KiB body, 16 KiB document, 8 KiB literal).

Against each, 3 clients send ``--rounds`` POSTs each of a ``--size``-byte body (a GraphQL
document that is one comment, the cheapest thing to send and the dearest to lex), back to
back, while a fourth client polls ``/health`` every 10 ms; the figure is the longest any
/health took. Also reported: the same with 256 KiB bodies (the largest the defaults accept)
and the server's RSS afterwards. It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

import httpx
from _client import ServerProcess, free_port, machine_summary, ms, remove_tree

WIDE = str(1 << 30)


def body_of(size: int) -> bytes:
    head = b'{"query": "{ __typename }\\n#'
    tail = b'"}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


async def stall(base_url: str, size: int, rounds: int) -> tuple[float, list[int], float]:
    """(worst /health seconds, status codes of the big POSTs, wall seconds)."""
    body = body_of(size)
    done = asyncio.Event()
    worst = 0.0
    statuses: list[int] = []

    async def sender() -> None:
        async with httpx.AsyncClient(base_url=base_url, timeout=300) as http:
            for _ in range(rounds):
                try:
                    response = await http.post(
                        "/graphql", content=body, headers={"content-type": "application/json"}
                    )
                    statuses.append(response.status_code)
                except httpx.TransportError:
                    statuses.append(0)  # refused before the body was read: reset

    async def prober() -> None:
        nonlocal worst
        async with httpx.AsyncClient(base_url=base_url, timeout=300) as http:
            while not done.is_set():
                started = time.perf_counter()
                await http.get("/health")
                worst = max(worst, time.perf_counter() - started)
                await asyncio.sleep(0.01)

    probe = asyncio.create_task(prober())
    await asyncio.sleep(0.2)
    started = time.perf_counter()
    await asyncio.gather(*(sender() for _ in range(3)))
    wall = time.perf_counter() - started
    done.set()
    await probe
    return worst, sorted(set(statuses)), wall


async def measure(label: str, extra: dict[str, str], size: int, rounds: int) -> dict[str, object]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"dealroom-bounds-{label}-"))
    env = {
        **os.environ,
        "DEALROOM_DATA_DIR": str(data_dir),
        "DEALROOM_WORKERS": "0",
        "DEALROOM_ACCESS_LOG": "false",
        **extra,
    }
    env.pop("DEALROOM_DATABASE_URL", None)
    env.pop("DEALROOM_REDIS_URL", None)
    server = ServerProcess(env=env, port=free_port(), log_dir=data_dir)
    try:
        server.start()
        async with httpx.AsyncClient(base_url=server.base_url) as http:
            idle = []
            for _ in range(50):
                started = time.perf_counter()
                await http.get("/health")
                idle.append(time.perf_counter() - started)
        big = await stall(server.base_url, size, rounds)
        max_size = await stall(server.base_url, 256 * 1024, rounds)
        return {
            "label": label,
            "health_idle_worst": max(idle),
            "big": big,
            "max_size": max_size,
            "rss_mib": server.rss() / 2**20,
        }
    finally:
        server.stop()
        remove_tree(data_dir)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10 * 1024 * 1024, help="big body bytes")
    parser.add_argument("--rounds", type=int, default=3, help="bodies per client")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    for line in machine_summary():
        print(line)
    wide = {
        "DEALROOM_MAX_REQUEST_BYTES": WIDE,
        "DEALROOM_MAX_QUERY_CHARS": WIDE,
        "DEALROOM_MAX_LITERAL_CHARS": WIDE,
    }
    before = await measure("before", wide, args.size, args.rounds)
    after = await measure("after", {}, args.size, args.rounds)
    size_mib = args.size / 2**20
    print(f"\n3 clients x {args.rounds} POSTs, worst concurrent /health:")
    print(
        f"{'':8} {'idle':>8} {f'{size_mib:.0f} MiB bodies':>16} {'256 KiB bodies':>16} {'RSS':>8}"
    )
    for row in (before, after):
        big, small = row["big"], row["max_size"]
        assert isinstance(big, tuple)
        assert isinstance(small, tuple)
        print(
            f"{row['label']:8} {ms(float(row['health_idle_worst'])):>8} "  # type: ignore[arg-type]
            f"{ms(big[0]):>9} {big[1]!s:>6} {ms(small[0]):>9} {small[1]!s:>6} "
            f"{float(row['rss_mib']):>6.0f}MiB"  # type: ignore[arg-type]
        )
    b_big, a_big = before["big"], after["big"]
    assert isinstance(b_big, tuple)
    assert isinstance(a_big, tuple)
    print(
        f"\nworst /health stall, {size_mib:.0f} MiB bodies: before/after = "
        f"{b_big[0] / max(a_big[0], 1e-6):.0f}x"
    )
    if args.json:
        args.json.write_text(json.dumps({"before": before, "after": after}, default=str))


if __name__ == "__main__":
    asyncio.run(main())
