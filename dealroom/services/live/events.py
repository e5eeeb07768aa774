"""Pane events: what the broker carries and what subscribers receive.

A payload holds the event and ``prev``, the cursor of the previous event in the same pane.
A subscriber that has delivered up to cursor ``c`` delivers a live event only if its ``prev``
is ``c``; anything else means it missed something and it re-reads the database. So a lost
or reordered wake-up costs a query, never an event.
"""

from __future__ import annotations

import json
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from dealroom.domain.seats import AuthorKind, Seat, side_of
from dealroom.persistence.messages import NewMessage
from dealroom.persistence.models import Message, OfferEvent


def pane_channel(room_id: uuid.UUID, pane: str) -> str:
    """A pane's channel, by its participant's key (a ``Seat`` names its side's lead)."""
    return f"pane:{room_id}:{pane}"


def offer_channel(offer_id: uuid.UUID) -> str:
    """An offer's stage changes, for partner integrations (``offerStage``)."""
    return f"offer:{offer_id}"


@dataclass(frozen=True, slots=True)
class MessageView:
    """A stored message with its pane's seat: everything a reader projection needs."""

    id: uuid.UUID
    room_id: uuid.UUID
    seat: Seat
    """The side of the pane's participant."""
    seq: int
    author_kind: AuthorKind
    body: str
    session_no: int
    client_message_id: str | None
    created_at: datetime
    pane: str = ""
    """The pane's participant key ("" reads as the side's lead)."""

    @property
    def pane_key(self) -> str:
        return self.pane or self.seat.value

    @classmethod
    def from_row(cls, row: Message, pane: str) -> MessageView:
        """``pane``: the pane's participant key (a ``Seat`` for a side's lead)."""
        return cls(
            id=row.id,
            room_id=row.room_id,
            seat=side_of(pane) or Seat.VISITOR,
            pane=str(pane),
            seq=row.seq,
            author_kind=AuthorKind(row.author_kind),
            body=row.body,
            session_no=row.session_no,
            client_message_id=row.client_message_id,
            created_at=row.created_at,
        )

    @classmethod
    def from_new(cls, new: NewMessage, pane: str, seq: int, session_no: int) -> MessageView:
        """The view of a message an append stored from ``new`` as ``seq`` in ``session_no``."""
        return cls(
            id=new.id,
            room_id=new.room_id,
            seat=side_of(pane) or Seat.VISITOR,
            pane=str(pane),
            seq=seq,
            author_kind=AuthorKind(new.author_kind),
            body=new.body,
            session_no=session_no,
            client_message_id=new.client_message_id,
            created_at=new.created_at,
        )

    def to_json(self) -> dict[str, Any]:
        # Field by field, not ``dataclasses.asdict``, which deep-copies every value: 56
        # against 4 µs an encode (timeit), and every post and reply encodes one. The enums
        # stay as they are: ``json.dumps`` writes their values.
        return {
            "id": str(self.id),
            "room_id": str(self.room_id),
            "seat": self.seat,
            "pane": self.pane,
            "seq": self.seq,
            "author_kind": self.author_kind,
            "body": self.body,
            "session_no": self.session_no,
            "client_message_id": self.client_message_id,
            "created_at": self.created_at.isoformat(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MessageView:
        return cls(
            id=uuid.UUID(data["id"]),
            room_id=uuid.UUID(data["room_id"]),
            seat=Seat(data["seat"]),
            pane=str(data.get("pane", "")),
            seq=int(data["seq"]),
            author_kind=AuthorKind(data["author_kind"]),
            body=data["body"],
            session_no=int(data["session_no"]),
            client_message_id=data["client_message_id"],
            created_at=datetime.fromisoformat(data["created_at"]),
        )


@dataclass(frozen=True, slots=True)
class MessageAddedEvent:
    cursor: int
    prev: int
    message: MessageView

    def encode(self) -> str:
        return json.dumps(
            {
                "type": "MessageAdded",
                "cursor": self.cursor,
                "prev": self.prev,
                "message": self.message.to_json(),
            },
            separators=(",", ":"),
        )


@dataclass(frozen=True, slots=True)
class AgentTypingEvent:
    """An agent is composing in the pane (before the first delta). Ephemeral: not stored,
    no cursor of its own; ``after`` is the pane's last stored event when it was sent."""

    after: int
    message_id: uuid.UUID
    agent: str

    def encode(self) -> str:
        return json.dumps(
            {
                "type": "AgentTyping",
                "after": self.after,
                "message_id": str(self.message_id),
                "agent": self.agent,
            },
            separators=(",", ":"),
        )


@dataclass(frozen=True, slots=True)
class MessageDeltaEvent:
    """A streamed fragment of a reply being composed. Ephemeral: the stored message follows
    as MessageAdded with the same id, so a client that missed deltas loses nothing."""

    after: int
    message_id: uuid.UUID
    delta: str

    def encode(self) -> str:
        return json.dumps(
            {
                "type": "MessageDelta",
                "after": self.after,
                "message_id": str(self.message_id),
                "delta": self.delta,
            },
            separators=(",", ":"),
        )


@dataclass(frozen=True, slots=True)
class StageChangedEvent:
    """A written offer's stage changed. Stored (``offer_events``), so it has a cursor in the
    room's sequence and replays like a message. ``prev`` is the previous event on the channel
    it is published on: the pane's last event, or the offer's last stage change."""

    cursor: int
    prev: int
    offer_id: uuid.UUID
    stage: str
    version: int
    at: datetime

    def encode(self) -> str:
        return json.dumps(
            {
                "type": "StageChanged",
                "cursor": self.cursor,
                "prev": self.prev,
                "offer_id": str(self.offer_id),
                "stage": self.stage,
                "version": self.version,
                "at": self.at.isoformat(),
            },
            separators=(",", ":"),
        )


@dataclass(frozen=True, slots=True)
class LoginRequiredChangedEvent:
    """The visitor view's ``loginRequired`` flipped (the login gate went up, or a claim took
    it down). Ephemeral like typing: ``after`` is the pane's last stored event when it was
    sent; a client that reconnects reads ``Room.loginRequired``."""

    after: int
    login_required: bool

    def encode(self) -> str:
        return json.dumps(
            {"type": "LoginRequiredChanged", "after": self.after, "value": self.login_required},
            separators=(",", ":"),
        )


def stage_event(row: OfferEvent, prev: int) -> StageChangedEvent:
    return StageChangedEvent(
        cursor=row.seq,
        prev=prev,
        offer_id=row.offer_id,
        stage=row.stage,
        version=row.version,
        at=row.created_at,
    )


EphemeralEvent = AgentTypingEvent | MessageDeltaEvent | LoginRequiredChangedEvent
StoredEvent = MessageAddedEvent | StageChangedEvent
PaneEventData = StoredEvent | EphemeralEvent


DECODED_KEPT: Final = 64
"""Payloads whose decoded event is kept (``decode_shared``): the broker hands a channel's
subscribers their payload within a few loop turns, and no more than this many arrive in
between at the rates one process sustains. An evicted payload is only decoded again."""

_decoded: OrderedDict[int, tuple[str, PaneEventData | None]] = OrderedDict()


def decode_shared(payload: str) -> PaneEventData | None:
    """``decode``, once per payload object rather than once per subscriber.

    The broker hands every subscriber of a channel the same string, so the subscribers of a
    pane get one (frozen) event between them: it is parsed once, and the fan-out's tables
    (``schema/fanout.py``) compare it with itself by identity. Keyed by identity; each entry
    keeps its string alive, so an id is not reused while it is kept."""
    key = id(payload)
    found = _decoded.get(key)
    if found is not None and found[0] is payload:
        return found[1]
    event = decode(payload)
    _decoded[key] = (payload, event)
    if len(_decoded) > DECODED_KEPT:
        _decoded.popitem(last=False)
    return event


def decode(payload: str) -> PaneEventData | None:
    """Parse a broker payload; an unknown or malformed one is dropped (and forces a resync)."""
    try:
        data = json.loads(payload)
        kind = data.get("type")
        if kind == "MessageAdded":
            return MessageAddedEvent(
                cursor=int(data["cursor"]),
                prev=int(data["prev"]),
                message=MessageView.from_json(data["message"]),
            )
        if kind == "StageChanged":
            return StageChangedEvent(
                cursor=int(data["cursor"]),
                prev=int(data["prev"]),
                offer_id=uuid.UUID(data["offer_id"]),
                stage=str(data["stage"]),
                version=int(data["version"]),
                at=datetime.fromisoformat(data["at"]),
            )
        if kind == "MessageDelta":
            return MessageDeltaEvent(
                after=int(data["after"]),
                message_id=uuid.UUID(data["message_id"]),
                delta=str(data["delta"]),
            )
        if kind == "LoginRequiredChanged":
            return LoginRequiredChangedEvent(
                after=int(data["after"]), login_required=bool(data["value"])
            )
        if kind == "AgentTyping":
            return AgentTypingEvent(
                after=int(data["after"]),
                message_id=uuid.UUID(data["message_id"]),
                agent=str(data["agent"]),
            )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return None
