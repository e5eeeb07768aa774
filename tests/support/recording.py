"""The model edge, recorded: what every agent call was given, so a test can prove what an
agent could not have seen (ARCHITECTURE "Room memory": every model request is one object,
the rendered prompt and the filtered context it was rendered from).

``RecordingClient`` wraps a real engine (the offline one, or Gemini against the fake
server). It records every ``ModelRequest`` it is handed — failed ones included — can be told
to fail the first N calls matching a predicate with a transient ``ModelError`` (a model
outage is the edge, not our code), and can answer chosen calls from a script instead of the
engine (a model that misbehaves on purpose).

Also here: canaries, reading a pane the way a client app does (over GraphQL and over a
subscription), and reading the rows a turn leaves behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select, update

from dealroom.agents.models.base import (
    AgentName,
    Chunk,
    Generation,
    ModelClient,
    ModelError,
    ModelRequest,
    Usage,
    estimate_tokens,
    parse_output,
)
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Dispatch, Message, Participant, Room
from tests.support.graphql import Client, Subscription

Predicate = Callable[[ModelRequest], bool]
Script = Callable[[ModelRequest], BaseModel | None]
"""Answers a request itself (the returned output, as a model would), or None for the engine."""

SCRIPTED_CHUNK = 24


@dataclass
class _Outage:
    left: int
    when: Predicate


class RecordingClient:
    """A ``ModelClient`` that records every request it is given, then fails it, answers it
    from ``script``, or passes it to ``inner``."""

    def __init__(self, inner: ModelClient, *, script: Script | None = None) -> None:
        self.inner = inner
        self.engine = inner.engine
        self.script = script
        self.requests: list[ModelRequest] = []
        """Every request, in the order the engine was called (failed ones included)."""
        self.failed: list[ModelRequest] = []
        """The requests this edge failed on purpose."""
        self._outages: list[_Outage] = []

    def fail_first(self, count: int, when: Predicate) -> None:
        """The next ``count`` calls matching ``when`` fail with a transient ModelError."""
        self._outages.append(_Outage(count, when))

    def _take(self, request: ModelRequest) -> None:
        self.requests.append(request)
        for outage in self._outages:
            if outage.left > 0 and outage.when(request):
                outage.left -= 1
                self.failed.append(request)
                raise ModelError(
                    f"{request.agent}: injected outage at the model edge",
                    transient=True,
                    status=503,
                )

    def _scripted(self, request: ModelRequest) -> str | None:
        output = self.script(request) if self.script is not None else None
        return output.model_dump_json() if output is not None else None

    async def generate(self, request: ModelRequest) -> Generation:
        self._take(request)
        text = self._scripted(request)
        if text is None:
            return await self.inner.generate(request)
        return Generation(
            output=parse_output(request, text),
            text=text,
            usage=_usage(request, text),
            model=request.model,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self._take(request)
        text = self._scripted(request)
        if text is None:
            async for chunk in self.inner.stream(request):
                yield chunk
            return
        for start in range(0, len(text), SCRIPTED_CHUNK):
            yield Chunk(text[start : start + SCRIPTED_CHUNK])
        yield Chunk("", usage=_usage(request, text))

    async def close(self) -> None:
        await self.inner.close()

    # --- reading what was recorded ------------------------------------------------------

    def where(
        self,
        agent: AgentName | None = None,
        *,
        visitor_facing: bool | None = None,
        pane: str | None = None,
    ) -> list[ModelRequest]:
        return [
            r
            for r in self.requests
            if (agent is None or r.agent is agent)
            and (visitor_facing is None or r.visitor_facing is visitor_facing)
            and (pane is None or r.context.get("pane") == pane)
        ]


def _usage(request: ModelRequest, text: str) -> Usage:
    return Usage(input_tokens=estimate_tokens(request.text), output_tokens=estimate_tokens(text))


def trigger_kind(request: ModelRequest) -> str | None:
    trigger = request.context.get("trigger")
    return trigger.get("kind") if isinstance(trigger, Mapping) else None


# --- canaries ------------------------------------------------------------------------------

_LETTERS = str.maketrans("0123456789", "ghijklmnop")


def canary(purpose: str) -> str:
    """A distinct, unguessable marker: ``CANARY-<purpose>-<32 letters>``. Letters only, so no
    rule that reads amounts or dates can mistake it for a term and change the negotiation."""
    return f"CANARY-{purpose}-{uuid.uuid4().hex.translate(_LETTERS)}"


def everything_sent(request: ModelRequest) -> str:
    """All a model could read from this request: the text and the context it came from."""
    return f"{request.text}\n{json.dumps(request.context, ensure_ascii=False, default=str)}"


def found_in(text: str, canaries: Iterable[str]) -> set[str]:
    return {c for c in canaries if c in text}


# --- the attack corpus ---------------------------------------------------------------------

ATTACKS_FILE = Path(__file__).parent.parent / "data" / "prompt-extraction" / "attacks.json"
"""A copy in the repo (MIT, see SOURCE.md beside it), so a clean clone runs the tests."""


def load_attacks() -> list[str]:
    """The 105 prompt-extraction attack strings (y0mingzhang/prompt-extraction, MIT)."""
    attacks = json.loads(ATTACKS_FILE.read_text(encoding="utf-8"))
    assert isinstance(attacks, list)
    assert all(isinstance(a, str) for a in attacks)
    return [a for a in attacks if a.strip()]


# --- a pane as a client app reads it ---------------------------------------------------------

PANE_PAGE = """
query($id: ID!, $seat: Seat!, $after: String) {
  room(id: $id) {
    subtitle
    participants { seat displayName isGuest }
    lastMessage { id body }
    pane(seat: $seat) {
      relationshipLabel
      messages(first: 100, after: $after) {
        edges { cursor node { id body authorKind seat sessionNo } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""


async def read_pane(client: Client, room_id: str, seat: str) -> list[dict[str, Any]]:
    """Every page of a pane, as raw GraphQL responses (the whole response is what the
    reader received, so a confidentiality check reads all of it)."""
    pages: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        data = await client.query(PANE_PAGE, {"id": room_id, "seat": seat, "after": after})
        pages.append(data)
        info = data["room"]["pane"]["messages"]["pageInfo"]
        if not info["hasNextPage"]:
            return pages
        after = info["endCursor"]


def pane_bodies(pages: list[dict[str, Any]]) -> list[str]:
    return [e["node"]["body"] for p in pages for e in p["room"]["pane"]["messages"]["edges"]]


@dataclass
class EventLog:
    """Everything a subscription delivered (stored messages, system lines, typing and every
    streamed delta), drained continuously so the socket never backs up."""

    sub: Subscription
    events: list[dict[str, Any]] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        while True:
            self.events.append(await self.sub.event(timeout=3600))
            arrived, self._arrived = self._arrived, asyncio.Event()
            arrived.set()

    def message_ids(self) -> set[str]:
        return {e["message"]["id"] for e in self.events if isinstance(e.get("message"), dict)}

    async def wait_for(self, message_id: str, timeout: float = 15.0) -> None:
        """Until the stored message ``message_id`` arrived (a fact, not a pause)."""
        async with asyncio.timeout(timeout):
            while message_id not in self.message_ids():
                await self._arrived.wait()

    def dump(self) -> str:
        return json.dumps(self.events, ensure_ascii=False)


@contextlib.asynccontextmanager
async def draining(sub: Subscription) -> AsyncIterator[EventLog]:
    log = EventLog(sub)
    task = asyncio.create_task(log.run())
    try:
        yield log
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


# --- rows a turn leaves behind ---------------------------------------------------------------
#
# Each read ends its unit at once: on SQLite the server and the fixture share a connection.


async def room_rows(db: Db, model: type[Any], room_id: str) -> list[Any]:
    try:
        return list(await db.scalars(select(model).where(model.room_id == uuid.UUID(room_id))))
    finally:
        await db.close()


async def pane_keys(db: Db, room_id: str) -> dict[uuid.UUID, str]:
    """Participant id → key, for one room."""
    return {p.id: p.key for p in await room_rows(db, Participant, room_id)}


async def pane_messages(db: Db, room_id: str, key: str) -> list[Message]:
    keys = await pane_keys(db, room_id)
    rows: list[Message] = await room_rows(db, Message, room_id)
    return sorted((m for m in rows if keys[m.participant_id] == key), key=lambda m: m.seq)


async def room_memory(db: Db, room_id: str) -> dict[str, Any]:
    try:
        room = await db.get(Room, uuid.UUID(room_id))
        assert room is not None
        return dict(room.memory or {})
    finally:
        await db.close()


async def write_room_memory(
    db: Db, room_id: str, document: Mapping[str, Any], *, now: datetime | None = None
) -> None:
    """Arrange a room's memory directly (a state the agents could have written)."""
    values: dict[str, Any] = {
        "memory": dict(document),
        "memory_version": Room.memory_version + 1,
    }
    if now is not None:
        values["memory_updated_at"] = now
    try:
        await db.execute(update(Room).where(Room.id == uuid.UUID(room_id)).values(**values))
        await db.commit()
    finally:
        await db.close()


async def dispatches(db: Db, room_id: str) -> list[Dispatch]:
    rows: list[Dispatch] = await room_rows(db, Dispatch, room_id)
    return sorted(rows, key=lambda d: (d.created_at, d.position))


async def agent_runs(db: Db, room_id: str) -> list[AgentRun]:
    rows: list[AgentRun] = await room_rows(db, AgentRun, room_id)
    return sorted(rows, key=lambda r: r.created_at)
