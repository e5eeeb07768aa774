"""The after-commit publish path gives up quietly: a channel whose publish keeps failing gets a
RESYNC for this process's subscribers, and the publishes after it still go out."""

from __future__ import annotations

import asyncio

from dealroom.realtime.broker import RESYNC, InProcessBroker, Subscription
from dealroom.services.publish import publish_all


class RefusingBroker(InProcessBroker):
    """A real in-process broker whose publishes to ``refused`` always fail."""

    def __init__(self, refused: str) -> None:
        super().__init__()
        self.refused = refused
        self.attempts = 0

    async def publish(self, channel: str, payload: str) -> None:
        if channel == self.refused:
            self.attempts += 1
            raise ConnectionError("broker unreachable")
        await super().publish(channel, payload)


def _drain(sub: Subscription) -> list[str]:
    got = []
    while (payload := sub.take()) is not None:
        got.append(payload)
    return got


async def test_a_publish_that_keeps_failing_resyncs_its_channel_and_skips_nothing() -> None:
    broker = RefusingBroker("pane:a:visitor")
    async with (
        broker.subscribe(["pane:a:visitor"]) as failed,
        broker.subscribe(["pane:b:visitor"]) as other,
    ):
        await asyncio.wait_for(
            publish_all(
                broker,
                [("pane:a:visitor", "lost"), ("pane:b:visitor", "after")],
                delays=(0.0, 0.0),
            ),
            timeout=2.0,
        )
        assert broker.attempts == 3  # one attempt more than pauses
        assert _drain(failed) == [RESYNC]
        assert _drain(other) == ["after"]
