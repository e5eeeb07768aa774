"""The reader's room list, live: which of its rooms changed (a new room, a message, a stage
change), so a client re-reads that room instead of polling the list.

Hints, not records: an activity names a room and what happened in it, never content; the
client reads the room through the API it always uses, with its access rules. Nothing is
stored for it, so nothing is replayed: every (re)subscription starts with a ``RESYNC`` activity
(re-read the list), and a lost wake-up costs at most the next activity.

The stream follows the pane channels the reader reads in its newest rooms (the host both
panes, anyone else its own) and the account's own channel, where a room opened with the
account as host is announced (``announce_new_room``). A new room's panes are followed from
its announcement on. It also follows the ended-credentials channel: the session it was opened
with signing out ends it at once (``services/live/endings.py``).
"""

from __future__ import annotations

import asyncio
import enum
import uuid
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dealroom.domain import access
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant, Room
from dealroom.realtime.broker import QUEUE_LIMIT, RESYNC, Broker, Subscription
from dealroom.services.live.endings import ENDED_CHANNEL
from dealroom.services.live.events import (
    MessageAddedEvent,
    StageChangedEvent,
    decode_shared,
    pane_channel,
)
from dealroom.services.live.publish import publish_after_commit


class ActivityKind(enum.Enum):
    NEW_ROOM = "NEW_ROOM"
    PEOPLE_CHANGED = "PEOPLE_CHANGED"
    MESSAGE = "MESSAGE"
    STAGE_CHANGED = "STAGE_CHANGED"
    RESYNC = "RESYNC"


@dataclass(frozen=True, slots=True)
class Activity:
    kind: ActivityKind
    room_id: uuid.UUID | None
    """None for RESYNC: re-read the whole list."""
    cursor: int | None = None
    """The stored event's cursor in the room (MESSAGE, STAGE_CHANGED)."""


class SessionEnded(Exception):
    """The session the stream was opened with signed out (close the socket, 4401)."""


def account_rooms_channel(account_id: uuid.UUID) -> str:
    return f"account-rooms:{account_id}"


def announce_new_room(
    db: Db,
    broker: Broker,
    account_id: uuid.UUID,
    room_id: uuid.UUID,
    panes: Sequence[str] | None = None,
) -> None:
    """After ``db`` commits, tell the account's room-list streams (every process) that its
    list changed in ``room_id``, and which of its panes to follow there: both leads' in a
    room it now hosts (``panes`` None), the ones it joined, none in one it left."""
    payload = str(room_id) if panes is None else " ".join((str(room_id), *panes))
    publish_after_commit(db, broker, [(account_rooms_channel(account_id), payload)])


def announce_people(
    db: Db, broker: Broker, account_id: uuid.UUID, room_id: uuid.UUID, panes: Sequence[str]
) -> None:
    """After ``db`` commits, tell the account's room-list streams that someone joined or left
    ``room_id``, and which new panes there to follow (none for one who left)."""
    payload = " ".join((_PEOPLE + str(room_id), *panes))
    publish_after_commit(db, broker, [(account_rooms_channel(account_id), payload)])


_PEOPLE = "~"
"""Marks an announcement of people joining or leaving a room already on the list."""


def followed_panes(
    rooms: Iterable[Room], held: Mapping[uuid.UUID, Sequence[Participant]], account_id: uuid.UUID
) -> dict[str, uuid.UUID]:
    """Pane channel -> room, for the panes the account reads (access R2, R3, R8): every pane
    of a room where it sits on the host's side, its own elsewhere (and those its side shared
    with it); ``held`` is each room's participants."""
    panes: dict[str, uuid.UUID] = {}
    for room in rooms:
        seats = access.holders(held.get(room.id, ()))
        keys = access.keys_of(access.Viewer(account_id=account_id, guest_key_hash=None), seats)
        if room.host_account_id == account_id:
            keys |= {Seat.HOST.value, Seat.VISITOR.value}  # R2, also before its rows are read
        for key in access.readable_keys(keys, seats) | keys:
            panes[pane_channel(room.id, key)] = room.id
    return panes


def _announced(payload: str) -> tuple[uuid.UUID, tuple[str, ...]]:
    """A room-list announcement: the room and the panes to follow in it."""
    room, spaced, keys = payload.partition(" ")
    if not spaced:  # a room the reader now hosts: both leads' panes
        return uuid.UUID(room), (Seat.HOST.value, Seat.VISITOR.value)
    return uuid.UUID(room), tuple(keys.split())


class _Tagged(Subscription):
    """One channel's listener feeding a stream's shared queue with ``(channel, payload)``:
    the fanout offers a payload without its channel, and a room-list activity is named by the
    channel it came on."""

    __slots__ = ("_into",)

    def __init__(self, channel: str, into: asyncio.Queue[tuple[str, str]]) -> None:
        super().__init__((channel,))
        self.idle_resync = None  # nothing is replayed: no heartbeat to take
        self._into = into

    def offer(self, payload: str) -> None:
        if self._into.qsize() >= QUEUE_LIMIT:
            # A slow reader loses hints, not rooms: it is told to re-read the list.
            while not self._into.empty():
                self._into.get_nowait()
            payload = RESYNC
        self._into.put_nowait((self.channels[0], payload))


async def room_activity(
    broker: Broker,
    account_id: uuid.UUID,
    rooms: list[Room],
    session_hash: str | None,
    participants: Mapping[uuid.UUID, Sequence[Participant]] | None = None,
) -> AsyncGenerator[Activity, None]:
    """Activities in ``rooms`` (the reader's newest, with their ``participants``) and rooms it
    hosts or joins later, until closed. Raises ``SessionEnded`` when ``session_hash`` signs
    out."""
    panes = followed_panes(rooms, participants or {}, account_id)
    own = account_rooms_channel(account_id)
    queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    joined: list[_Tagged] = []

    async def follow(channel: str) -> None:
        tagged = _Tagged(channel, queue)
        await broker.join(tagged)
        joined.append(tagged)

    try:
        for channel in (own, ENDED_CHANNEL, *panes):
            await follow(channel)
        yield Activity(ActivityKind.RESYNC, None)
        while True:
            channel, payload = await queue.get()
            if payload == RESYNC:
                yield Activity(ActivityKind.RESYNC, None)
            elif channel == ENDED_CHANNEL:
                if session_hash is not None and payload == session_hash:
                    raise SessionEnded
            elif channel == own:
                people = payload.startswith(_PEOPLE)
                room_id, keys = _announced(payload.removeprefix(_PEOPLE))
                for key in keys:
                    pane = pane_channel(room_id, key)
                    if pane not in panes:
                        panes[pane] = room_id
                        await follow(pane)
                kind = ActivityKind.PEOPLE_CHANGED if people else ActivityKind.NEW_ROOM
                yield Activity(kind, room_id)
            else:
                activity = _activity(panes.get(channel), payload)
                if activity is not None:
                    yield activity
    finally:
        for tagged in joined:
            await broker.leave(tagged)


def _activity(room_id: uuid.UUID | None, payload: str) -> Activity | None:
    if room_id is None:
        return None
    event = decode_shared(payload)
    if isinstance(event, MessageAddedEvent):
        return Activity(ActivityKind.MESSAGE, room_id, event.cursor)
    if isinstance(event, StageChangedEvent):
        return Activity(ActivityKind.STAGE_CHANGED, room_id, event.cursor)
    return None  # typing, deltas, the login gate: not a change to the list
