"""Garbage-collector settings for a long-lived server (issue 17, "Memory and pauses").

With thousands of subscriptions held, a full collection walks every tracked object the
process owns, most of which (modules, the schema, pools) live as long as the process. Moving
them to the permanent generation with ``gc.freeze()`` once start-up is over takes them out of
every later collection; a higher first threshold makes young collections rarer (a request
allocates many short-lived objects that reference counting frees anyway). Measured in
docs/BENCHMARKS.md ("The hot path at its floor").
"""

from __future__ import annotations

import gc
from typing import Final

YOUNG_THRESHOLD: Final = 50_000
"""Allocations between young collections (CPython's default is 700)."""


def settle_after_startup() -> int:
    """Collect once, then freeze what survived; returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)
    return gc.get_freeze_count()
