"""Canaries per visitor-readable surface under a host-side model that leaks on purpose.

Runs the canary sweep (tests/confidentiality/test_canary_sweep.py: every agent on the leaking
fake Gemini model of tests/support/leaky.py, attacks through every host-side writer, then every
visitor-readable surface read) and prints, per surface, the canaries found (goal: 0 on each),
with the run's wall time and the model answers that carried a leak per agent.

    .venv/bin/python bench/canaries.py [--runs N]

The sweep is a test, so the same figures fail CI when a surface leaks; this script is how they
are read and recorded in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SWEEP = "tests/confidentiality/test_canary_sweep.py"
LINE = re.compile(r"^  (?P<surface>.+?)\s{2,}(?P<count>\d+)\s*(?P<detail>.*)$")


def one_run() -> tuple[dict[str, tuple[int, str]], str, float, bool]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", SWEEP],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONUNBUFFERED": "1"},
        check=False,
    )
    elapsed = time.perf_counter() - started
    counts: dict[str, tuple[int, str]] = {}
    answers = ""
    for line in done.stdout.splitlines():
        if line.startswith("  model answers"):
            answers = line.strip()
        elif (hit := LINE.match(line)) is not None:
            counts[hit.group("surface").strip()] = (int(hit.group("count")), hit.group("detail"))
    return counts, answers, elapsed, done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    totals: dict[str, int] = {}
    for run in range(1, args.runs + 1):
        counts, answers, elapsed, passed = one_run()
        if not counts:
            sys.exit(f"run {run}: the sweep printed no figures (did it fail to start?)")
        print(f"run {run}: {elapsed:.1f} s, sweep {'passed' if passed else 'FAILED'}")
        for surface, (count, detail) in counts.items():
            totals[surface] = totals.get(surface, 0) + count
            print(f"  {surface:38} {count:4d}  {detail}")
        print(f"  {answers}")
    print(f"canaries over {args.runs} run(s), all surfaces: {sum(totals.values())} (goal 0)")


if __name__ == "__main__":
    main()
