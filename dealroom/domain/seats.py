"""Seats, room kinds and the reader-relative projections of seed 002, layer 5.

Roles are derived, never stored: in a deal room the host is the seller ("talent") and the
visitor the buyer ("brand"). Which side of the screen a bubble sits on, and the headers a
reader sees, are pure functions of the reader's seat.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from functools import cache
from typing import assert_never


class Seat(StrEnum):
    HOST = "host"
    VISITOR = "visitor"


HOST_KEY = Seat.HOST.value
"""The host participant's key: the represented principal, one per room."""
VISITOR_KEY = Seat.VISITOR.value
"""The visitor side's lead: the participant who opened the room (the buying account)."""


@cache  # a re-check round asks for thousands of keys: a dict lookup, not the enum's call
def side_of(key: str) -> Seat | None:
    """The side a participant key sits on, derived from the key: ``host`` and its team
    (``host_2`` …) on the host side, ``visitor`` and its team (``visitor_2`` …) on the
    visitor side; any other key is on neither and holds nothing."""
    side, joined, number = key.partition("_")
    if side not in (HOST_KEY, VISITOR_KEY):
        return None
    if joined and not (number.isascii() and number.isdigit()):
        return None  # "host_", "visitor_x", "visitor_٣": no side
    return Seat(side)


def on_host_side(key: str) -> bool:
    """The host and the people it added (a manager) act for the principal: their panes get
    the host's view and their sends to the other side pass the firewall like the host's."""
    return side_of(key) is Seat.HOST


def is_lead(key: str) -> bool:
    """The first participant of a side: the host, or the visitor who opened the room."""
    return key in (HOST_KEY, VISITOR_KEY)


def may_send(source: str, target: str) -> bool:
    """Who an agent's send may address: the host side speaks to each participant on the
    visitor side; a visitor-side pane speaks only to the host's own pane, where the host's
    judgement rules. Nothing crosses between two non-host participants, nor within a side."""
    if on_host_side(source):
        return side_of(target) is Seat.VISITOR
    return side_of(source) is Seat.VISITOR and target == HOST_KEY


def member_key(side: Seat, taken: Iterable[str]) -> str:
    """The next free key on ``side`` for a participant who joins it (``visitor_2`` …)."""
    used = set(taken)
    n = 2
    while f"{side.value}_{n}" in used:
        n += 1
    return f"{side.value}_{n}"


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


def pane_label(
    reader_seat: Seat, pane_seat: Seat, names: RoomNames, *, own: bool, pane_name: str | None
) -> str:
    """:func:`pane_relationship_label` for a room with teammates: another participant's pane
    is named by that participant (``pane_name``; None for a guest), a teammate's on the
    reader's own side included."""
    if own or pane_seat != reader_seat:
        visitor = pane_name if pane_seat is Seat.VISITOR else names.visitor
        return pane_relationship_label(reader_seat, pane_seat, RoomNames(names.host, visitor))
    who = pane_name or GUEST_NAME
    match pane_seat:
        case Seat.HOST:
            return f"{who} and your agent"
        case Seat.VISITOR:
            return f"{who} and {names.host}'s agent"
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
