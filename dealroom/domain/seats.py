"""Seats, room kinds and the reader-relative projections of seed 002, layer 5.

Roles are derived, never stored: in a deal room the host is the seller ("talent") and the
visitor the buyer ("brand"). Which side of the screen a bubble sits on, and the headers a
reader sees, are pure functions of the reader's seat.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import assert_never


class Seat(StrEnum):
    HOST = "host"
    VISITOR = "visitor"


class RoomKind(StrEnum):
    HOME = "home"
    DEAL = "deal"


class RoomMode(StrEnum):
    LIVE = "live"
    DEMO = "demo"
    SCRIPTED = "scripted"


class AuthorKind(StrEnum):
    PARTICIPANT = "participant"
    AGENT = "agent"
    SYSTEM = "system"
    OPERATOR = "operator"
    """An operator speaking in the agent's seat of a taken-over pane."""


class Alignment(StrEnum):
    LEFT = "left"
    RIGHT = "right"


GUEST_NAME = "A visitor"


def message_alignment(reader_seat: Seat, pane_seat: Seat, author: AuthorKind) -> Alignment:
    """A1 (seed 002 layer 5): in one's own pane one's own words are on the right and the agent
    on the left; when the host reads the visitor's pane, the agent (the host's
    representative) is on the right and the visitor on the left."""
    if reader_seat == pane_seat:
        return Alignment.RIGHT if author is AuthorKind.PARTICIPANT else Alignment.LEFT
    match author:
        case AuthorKind.AGENT | AuthorKind.OPERATOR:  # the operator sits in the agent's seat
            return Alignment.RIGHT
        case AuthorKind.PARTICIPANT | AuthorKind.SYSTEM:
            return Alignment.LEFT
        case _:
            assert_never(author)


@dataclass(frozen=True, slots=True)
class RoomNames:
    """Display names the headers are built from; ``visitor`` is None for a guest."""

    host: str
    visitor: str | None

    @property
    def visitor_or_guest(self) -> str:
        return self.visitor or GUEST_NAME


def conversation_subtitle(
    kind: RoomKind, mode: RoomMode, reader_seat: Seat, names: RoomNames
) -> str:
    """The header under a room's title, from the reader's side (seed 002 layer 5)."""
    if kind is RoomKind.HOME:
        return "You and your agent"
    if mode is RoomMode.DEMO:
        return f"Preview of {names.host}'s agent"
    match reader_seat:
        case Seat.HOST:
            return f"Your agent and {names.visitor_or_guest}"
        case Seat.VISITOR:
            return f"{names.host}'s agent"
        case _:
            assert_never(reader_seat)


def pane_relationship_label(reader_seat: Seat, pane_seat: Seat, names: RoomNames) -> str:
    """Who talks with whom in one pane, said from the reader's side."""
    if pane_seat == reader_seat:
        match pane_seat:
            case Seat.HOST:
                return "You and your agent"
            case Seat.VISITOR:
                return f"You and {names.host}'s agent"
            case _:
                assert_never(pane_seat)
    match pane_seat:
        case Seat.HOST:
            return f"{names.host} and their agent"
        case Seat.VISITOR:
            return f"Your agent and {names.visitor_or_guest}"
        case _:
            assert_never(pane_seat)


def deal_room_title(host_name: str, visitor_name: str | None) -> str:
    """seed 002: an anonymous visit is titled "A visitor × <Host>"."""
    return f"{visitor_name or GUEST_NAME} × {host_name}"


def shown_room_title(
    stored: str, host_name: str, brand: str | None, topic: str | None, opened: date
) -> str:
    """A guest's room says something in a list: the brand's name when the conversation has
    told it, else the first topic and the day it opened ("Sponsored post · Dec 6 × Maya Lin");
    a room with neither keeps its stored title, as does every other room."""
    if not stored.startswith(f"{GUEST_NAME} ×"):
        return stored
    if brand:
        return deal_room_title(host_name, brand)
    if topic:
        day = f"{opened.strftime('%b')} {opened.day}"
        return f"{topic[:1].upper()}{topic[1:]} · {day} × {host_name}"
    return stored


def demo_room_title(host_name: str) -> str:
    """seed 002, self-chat: the host previewing their own agent."""
    return f"Demo · {host_name}"


def home_room_title(display_name: str) -> str:
    return f"{display_name} · your agent"
