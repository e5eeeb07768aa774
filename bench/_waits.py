"""How long processes waited for a CPU, sampled while a benchmark's block runs.

Linux keeps, for every task, the time it spent runnable but not running (the second field of
``/proc/<pid>/schedstat``, in nanoseconds), and for the whole machine the time at least one task
waited so (``/proc/pressure/cpu``'s ``some total``, in microseconds). A post that takes 100 ms
because its server process was waiting for a core is the machine's contention, not the code's work;
one that takes as long while its process ran or slept is the code, or something it waited on.
``bench/realtime.py`` lines these samples up with its slow seconds (the stalls that decide the
p99)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import psutil

PRESSURE = Path("/proc/pressure/cpu")
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def _schedstat(pid: int) -> tuple[int, int] | None:
    """Nanoseconds on a CPU and waiting for one, or None once the process is gone."""
    try:
        ran, waited, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return None
    return int(ran), int(waited)


def _pressure_us() -> int | None:
    """Microseconds in which some task waited for a CPU, since boot (None without PSI)."""
    try:
        some = PRESSURE.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(some.rsplit("total=", 1)[1])


def _busy_ms() -> float | None:
    """Milliseconds the machine's CPUs have been busy since boot, all of them summed (every
    field of ``/proc/stat``'s first line but idle and iowait; 10 ms ticks)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields[:8]) - fields[3] - fields[4]) * TICK_MS


def postgres_pids() -> list[int]:
    """Every PostgreSQL process of this machine, its backends included."""
    return [
        proc.pid
        for proc in psutil.process_iter(["name"])
        if (proc.info["name"] or "").startswith("postgres")
    ]


@dataclass
class Sample:
    at: float
    """time.monotonic()"""
    processes: dict[int, tuple[int, int]]
    """Per process still alive: nanoseconds run and waited since it started."""
    pressure_us: int | None
    busy_ms: float | None


@dataclass
class Waits:
    groups: dict[str, list[int]]
    samples: list[Sample] = field(default_factory=list)

    def take(self) -> None:
        found = {pid: _schedstat(pid) for pids in self.groups.values() for pid in pids}
        alive = {pid: times for pid, times in found.items() if times is not None}
        self.samples.append(Sample(time.monotonic(), alive, _pressure_us(), _busy_ms()))

    def by_second(self, began: float, seconds: int) -> list[dict[str, float]]:
        """Per whole second from ``began``: each group's milliseconds run and waited, the
        machine's milliseconds with some task waiting for a CPU, and its CPUs' busy
        milliseconds, all of them summed (differences between the samples nearest each
        second's edges; a process that ended within the second is left out of it)."""
        rows: list[dict[str, float]] = []
        if len(self.samples) < 2:
            return rows
        for second in range(seconds):
            start = _nearest(self.samples, began + second)
            end = _nearest(self.samples, began + second + 1)
            if end.at <= start.at:
                break
            row: dict[str, float] = {"second": second}
            inside = [sample for sample in self.samples if start.at <= sample.at <= end.at]
            for name, pids in self.groups.items():
                both = [pid for pid in pids if pid in start.processes and pid in end.processes]
                for index, what in enumerate(("ran", "waited")):
                    row[f"{name}_{what}_ms"] = (
                        sum(end.processes[pid][index] - start.processes[pid][index] for pid in both)
                        / 1e6
                    )
                row[f"{name}_at_once"] = _most_at_once(inside, pids)
            if start.pressure_us is not None and end.pressure_us is not None:
                row["pressure_ms"] = (end.pressure_us - start.pressure_us) / 1e3
            if start.busy_ms is not None and end.busy_ms is not None:
                row["machine_busy_ms"] = end.busy_ms - start.busy_ms
            rows.append(row)
        return rows


AT_ONCE_NS = 500_000
"""A process that ran this long (0.5 ms) between two samples counts as busy in that interval."""


def _most_at_once(samples: Sequence[Sample], pids: Iterable[int]) -> int:
    """The most of ``pids`` busy in any one interval between consecutive ``samples``: for
    PostgreSQL, how many backends worked at once (after an ``ANALYZE`` every connection the servers
    reach re-plans; at steady load a few carry the posts)."""
    most = 0
    for before, after in pairwise(samples):
        busy = sum(
            1
            for pid in pids
            if pid in before.processes
            and pid in after.processes
            and after.processes[pid][0] - before.processes[pid][0] > AT_ONCE_NS
        )
        most = max(most, busy)
    return most


def _nearest(samples: Sequence[Sample], at: float) -> Sample:
    return min(samples, key=lambda sample: abs(sample.at - at))


@contextlib.asynccontextmanager
async def cpu_waits(
    groups: Mapping[str, Iterable[int]], every: float = 0.1
) -> AsyncIterator[Waits]:
    """Sample ``groups`` (a name for each set of pids) every ``every`` seconds while the
    block runs. Reading ~40 small files a sample costs well under 1 % of a core."""
    waits = Waits({name: list(pids) for name, pids in groups.items()})

    async def loop() -> None:
        while True:
            waits.take()
            await asyncio.sleep(every)

    task = asyncio.create_task(loop())
    try:
        yield waits
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        waits.take()
