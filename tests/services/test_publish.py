"""The after-commit publish path gives up quietly: a channel whose publish keeps failing gets a
RESYNC for this process's subscribers, and the publishes after it still go out."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from dealroom.realtime.broker import RESYNC, InProcessBroker, Subscription
from dealroom.services.live.publish import RUNS_CHANNEL, RunSignal, publish_all


class BatchRecordingBroker(InProcessBroker):
    """A real in-process broker that records each ``publish_many`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[tuple[str, str]]] = []

    async def publish_many(self, published: Sequence[tuple[str, str]]) -> None:
        self.batches.append(list(published))
        await super().publish_many(published)


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
        # the batch's, then each event's own: one attempt more than pauses
        assert broker.attempts == 1 + 3
        assert _drain(failed) == [RESYNC]
        assert _drain(other) == ["after"]


async def test_the_events_and_the_runs_announce_go_out_in_one_batch() -> None:
    """One round trip on Redis (``Broker.publish_many``); this process's workers are woken
    without waiting for it."""
    broker = BatchRecordingBroker()
    signal = RunSignal(broker)
    woken = signal.changed
    async with broker.subscribe([RUNS_CHANNEL, "pane:a:visitor"]) as sub:
        await publish_all(broker, [("pane:a:visitor", "event")], announce=signal)
        assert woken.is_set()
        assert broker.batches == [[("pane:a:visitor", "event"), (RUNS_CHANNEL, "1")]]
        assert _drain(sub) == ["event", "1"]


async def test_one_event_alone_is_not_batched() -> None:
    broker = BatchRecordingBroker()
    async with broker.subscribe(["pane:a:visitor"]) as sub:
        await publish_all(broker, [("pane:a:visitor", "event")])
        assert broker.batches == []
        assert _drain(sub) == ["event"]
