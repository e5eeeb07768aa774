"""A persona's reply as it streams (ARCHITECTURE "The turn", step 3): the model's output is
read chunk by chunk and the growing ``reply`` is published as coalesced ``MessageDelta``
events. Typing and deltas are ephemeral: best effort, never stored, never a failed turn."""

from __future__ import annotations

import asyncio
import uuid

import structlog
from pydantic_core import from_json

from dealroom.agents.models.base import ModelRequest
from dealroom.domain import pane_words
from dealroom.realtime.broker import Broker
from dealroom.services.live.events import MessageDeltaEvent
from dealroom.services.turns.ledger import CallSite, Ledger

log = structlog.get_logger(__name__)

DELTA_INTERVAL = 0.05
"""Seconds between MessageDelta events: deltas are coalesced, not one per token."""


async def stream(
    ledger: Ledger,
    broker: Broker,
    request: ModelRequest,
    site: CallSite,
    channel: str,
    message_id: uuid.UUID,
    after: int,
) -> str:
    """Stream the output; publish the growing ``reply`` as coalesced deltas."""
    loop = asyncio.get_running_loop()
    parts: list[str] = []
    sent = 0
    last = loop.time()

    async def flush(final: bool) -> None:
        nonlocal sent, last
        reply = _partial_reply("".join(parts))
        # PW1: once the draft names a system label, or may be starting one, the rest waits
        # for the stored reply (in people's words), which replaces the draft on every screen.
        reply = reply[: pane_words.safe_prefix(reply, final=final)]
        if len(reply) > sent and (final or loop.time() - last >= DELTA_INTERVAL):
            delta = MessageDeltaEvent(after, message_id, reply[sent:])
            sent, last = len(reply), loop.time()
            await ephemeral(broker, channel, delta.encode())

    async for chunk in ledger.stream(request, site):
        if chunk.text:
            parts.append(chunk.text)
            await flush(final=False)
    await flush(final=True)
    return "".join(parts)


async def ephemeral(broker: Broker, channel: str, payload: str) -> None:
    """Typing and deltas are best effort: a broker hiccup must not fail (and re-bill) a
    turn whose stored reply will reach every subscriber anyway."""
    try:
        await broker.publish(channel, payload)
    except Exception:
        log.warning("ephemeral_publish_failed", channel=channel)


def _partial_reply(text: str) -> str:
    """The ``reply`` property of a partial JSON object, as far as it has arrived."""
    try:
        value = from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return ""
    reply = value.get("reply") if isinstance(value, dict) else None
    return reply if isinstance(reply, str) else ""
