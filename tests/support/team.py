"""Rooms with teammates: a member seated on a side as a row (the way an accepted invitation
leaves it), and the reads a client app makes of a room of many panes."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import update

from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant
from tests.support.graphql import Client

PANES = """
query($id: ID!) {
  room(id: $id) {
    participants { id key seat isYou sharedWithSide displayName }
    panes {
      key participantId seat
      messages(last: 100) { edges { node { id body authorKind } } }
    }
  }
}
"""
PANE_BY_PARTICIPANT = """
query($id: ID!, $participantId: ID!) {
  room(id: $id) {
    pane(participantId: $participantId) {
      key messages(last: 100) { edges { node { id body } } }
    }
  }
}
"""
PANE_BY_SEAT = """
query($id: ID!, $seat: Seat!) {
  room(id: $id) { pane(seat: $seat) { key participantId } }
}
"""
PANE_EVENTS_BY_PARTICIPANT = """
subscription($roomId: ID!, $participantId: ID!, $after: String) {
  paneEvents(roomId: $roomId, participantId: $participantId, after: $after) {
    __typename
    ... on MessageAdded { cursor message { id body } }
  }
}
"""


async def seat_member(db: Db, room_id: str, key: str, account_id: str) -> str:
    """Seat ``account_id`` as the room's participant ``key``; returns the participant's id."""
    participant_id = uuid.uuid4()
    row = Participant(
        id=participant_id,
        room_id=uuid.UUID(room_id),
        key=key,
        account_id=uuid.UUID(account_id),
    )
    try:
        await db.add(row)
        await db.commit()
        return str(participant_id)
    finally:
        await db.close()


async def share_pane(db: Db, room_id: str, key: str) -> None:
    """The side's lead shares ``key``'s pane with the rest of its side (access R8)."""
    try:
        await db.execute(
            update(Participant)
            .where(Participant.room_id == uuid.UUID(room_id), Participant.key == key)
            .values(shared=True)
        )
        await db.commit()
    finally:
        await db.close()


async def room_panes(client: Client, room_id: str) -> dict[str, Any]:
    """Room.participants and Room.panes as ``client`` reads them."""
    room: dict[str, Any] = (await client.query(PANES, {"id": room_id}))["room"]
    return room


async def participant_ids(client: Client, room_id: str) -> dict[str, str]:
    """Participant key → id, as ``client`` may know them."""
    return {p["key"]: p["id"] for p in (await room_panes(client, room_id))["participants"]}


def listed_panes(room: dict[str, Any]) -> list[str]:
    """The keys of the panes Room.panes listed, sorted."""
    return sorted(p["key"] for p in room["panes"])


def bodies(room: dict[str, Any], key: str) -> list[str]:
    pane = next(p for p in room["panes"] if p["key"] == key)
    return [e["node"]["body"] for e in pane["messages"]["edges"]]
