"""Waiting for a condition a background task brings about, bounded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def eventually(condition: Callable[[], bool], seconds: float = 2.0) -> bool:
    """Poll ``condition`` every 50 ms for up to ``seconds``; whether it came true."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()
