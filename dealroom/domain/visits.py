"""What a visit to a host's link opens (seed 000 "A deal room per conversation started";
seed 002 "Authentication Modes & Visitor Resolution")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never
from uuid import UUID

from dealroom.domain.seats import RoomMode, deal_room_title, demo_room_title


class VisitorKind(StrEnum):
    GUEST = "guest"
    ACCOUNT = "account"
    SELF = "self"
    """The host (or someone acting as the host) opening its own link."""


@dataclass(frozen=True, slots=True)
class PriorRoom:
    """The visitor's newest deal room with this host."""

    room_id: UUID
    visitor_has_spoken: bool


@dataclass(frozen=True, slots=True)
class NewRoom:
    mode: RoomMode
    title: str


def visitor_kind(host_id: UUID, account_id: UUID | None) -> VisitorKind:
    if account_id is None:
        return VisitorKind.GUEST
    return VisitorKind.SELF if account_id == host_id else VisitorKind.ACCOUNT


def room_to_reuse(prior: PriorRoom | None, new_conversation: bool) -> UUID | None:
    """VT1: a bare visit reuses the newest room with this host only while the visitor has not
    spoken in it; once they have, a visit starts a new room. VT2: ``newConversation`` always
    starts one."""
    if new_conversation or prior is None or prior.visitor_has_spoken:
        return None
    return prior.room_id


def new_room(kind: VisitorKind, host_name: str, visitor_name: str | None) -> NewRoom:
    """VT3: a guest's room is "A visitor × <Host>"; VT4: the host's own visit is a demo room."""
    match kind:
        case VisitorKind.SELF:
            return NewRoom(RoomMode.DEMO, demo_room_title(host_name))
        case VisitorKind.GUEST:
            return NewRoom(RoomMode.LIVE, deal_room_title(host_name, None))
        case VisitorKind.ACCOUNT:
            return NewRoom(RoomMode.LIVE, deal_room_title(host_name, visitor_name))
        case _:
            assert_never(kind)
