"""Who may read and write what in a room: pure rules over a narrow view of the room.

Numbered rules are cited by the code and tests that depend on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from dealroom.domain.seats import RoomMode, Seat


@dataclass(frozen=True, slots=True)
class Viewer:
    """The effective reader of a request: an account (after act-as), a guest key, or both."""

    account_id: UUID | None
    guest_key_hash: str | None

    @property
    def anonymous(self) -> bool:
        return self.account_id is None and self.guest_key_hash is None


@dataclass(frozen=True, slots=True)
class SeatHolder:
    seat: Seat
    account_id: UUID | None
    guest_key_hash: str | None


def seats_of(viewer: Viewer, holders: Sequence[SeatHolder]) -> frozenset[Seat]:
    """The seats a viewer holds in a room.

    R1: an account holds the seats bound to it. R4: a guest key holds only the seats bound to
    that key (a guest reads only rooms bound to its key). R7: a guest key holds a seat only
    while no account is bound to it. Claimed means claimed (seed 002, "Incognito &
    Mid-Session Claiming"): the claim binds the account beside the key, and from then on the
    old key reads and writes nothing of the room, and a stream it holds ends at the next
    re-check; the claiming account holds the seat by R1."""
    held: set[Seat] = set()
    for holder in holders:
        if viewer.account_id is not None and holder.account_id == viewer.account_id:
            held.add(holder.seat)
        if (
            viewer.guest_key_hash is not None
            and holder.account_id is None  # R7
            and holder.guest_key_hash == viewer.guest_key_hash
        ):
            held.add(holder.seat)
    return frozenset(held)


_EVERY_SEAT = frozenset(Seat)


def readable_panes(seats: frozenset[Seat]) -> frozenset[Seat]:
    """R2: the host reads both panes of its rooms. R3: a visitor reads only its own pane."""
    if Seat.HOST in seats:
        return _EVERY_SEAT
    return seats


def reaches(seats: frozenset[Seat], pane: Seat | None) -> bool:
    """Whether seats still reach a held stream: a pane's stream needs that pane readable (R2,
    R3); a room-wide stream (``pane`` None: an offer's stage) needs any seat (R1, R4)."""
    if pane is None:
        return bool(seats)
    return pane in readable_panes(seats)


def reader_seat(mode: RoomMode, seats: frozenset[Seat]) -> Seat | None:
    """The pane a reader writes into by default.

    R5: in a demo room the host previews its agent from the visitor's side, so its own seat
    there is the visitor pane; elsewhere a host's seat is the host pane."""
    if not seats:
        return None
    if mode is RoomMode.DEMO and Seat.VISITOR in seats:
        return Seat.VISITOR
    if Seat.HOST in seats:
        return Seat.HOST
    return Seat.VISITOR


def writable_panes(seats: frozenset[Seat]) -> frozenset[Seat]:
    """R6: a participant writes only into its own pane(s) — never into another's, host or not."""
    return seats
