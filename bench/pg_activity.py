"""What PostgreSQL's client backends are busy with, second by second, while another benchmark
runs: ``pg_stat_activity`` sampled every ``--every`` seconds, each second's active backends
counted per statement (its first characters) and wait event.

Run it beside ``bench/turn_machine.py`` or ``bench/realtime.py`` and stop it with Ctrl-C (or
``--seconds``). A second whose active backends per sample stay high while the workers' CPU is low
is PostgreSQL's own work, and the statement named is the one to ``EXPLAIN`` (a statement planned
against statistics taken while nothing was queued can hold several backends busy through a whole
round).

Benchmarks are not tests: nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import time

import asyncpg
from _client import DEFAULT_PG_URL, _dsn

ACTIVE = """
SELECT coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-') AS waiting,
       left(regexp_replace(query, '\\s+', ' ', 'g'), $2) AS statement
FROM pg_stat_activity
WHERE state = 'active' AND pid <> $1 AND backend_type = 'client backend'
"""


async def sample(url: str, every: float, seconds: float, width: int, top: int) -> None:
    connection = await asyncpg.connect(_dsn(url), timeout=10)
    me = connection.get_server_pid()
    seen: collections.Counter[tuple[str, str]] = collections.Counter()
    samples, started = 0, time.monotonic()
    second = started
    try:
        while seconds <= 0 or time.monotonic() - started < seconds:
            for row in await connection.fetch(ACTIVE, me, width):
                seen[(row["waiting"], row["statement"])] += 1
            samples += 1
            if time.monotonic() - second >= 1.0:
                if seen:
                    busy = sum(seen.values()) / samples
                    print(f"{time.strftime('%H:%M:%S')} active backends a sample {busy:.2f}")
                    for (waiting, statement), count in seen.most_common(top):
                        print(f"  {count / samples:5.2f}  {waiting:<24} {statement}")
                seen.clear()
                samples, second = 0, time.monotonic()
            await asyncio.sleep(every)
    finally:
        await connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL, help="any database of the server")
    parser.add_argument("--every", type=float, default=0.05, help="seconds between samples")
    parser.add_argument("--seconds", type=float, default=0.0, help="0: until interrupted")
    parser.add_argument("--width", type=int, default=90, help="characters of each statement")
    parser.add_argument("--top", type=int, default=6, help="statements shown a second")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(sample(args.pg_url, args.every, args.seconds, args.width, args.top))


if __name__ == "__main__":
    main()
