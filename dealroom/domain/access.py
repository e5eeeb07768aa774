"""Who may read and write what in a room: pure rules over a narrow view of the room.

Numbered rules are cited by the code and tests that depend on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from dealroom.domain.seats import RoomMode, Seat, is_lead, on_host_side, side_of


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
    key: str
    """The participant's key; its side (``seat``) is derived from it."""
    account_id: UUID | None
    guest_key_hash: str | None
    shared: bool = False
    """R8: its side's lead let the rest of the side read this pane."""

    @property
    def seat(self) -> Seat | None:
        return side_of(self.key)


class Seated(Protocol):
    """A participant row as access reads it (a model row, a writer's plain row, …)."""

    @property
    def key(self) -> str: ...
    @property
    def account_id(self) -> UUID | None: ...
    @property
    def guest_key_hash(self) -> str | None: ...


def holders(rows: Iterable[Seated]) -> list[SeatHolder]:
    """The seat holders of a room's participant rows. A row without ``shared`` (a writer's:
    a writer writes only its own pane, R6) shares nothing."""
    return [
        SeatHolder(r.key, r.account_id, r.guest_key_hash, bool(getattr(r, "shared", False)))
        for r in rows
    ]


def keys_of(viewer: Viewer, holders: Sequence[SeatHolder]) -> frozenset[str]:
    """The participants (by key) a viewer is in a room.

    R1: an account holds the seats bound to it. R4: a guest key holds only the seats bound to
    that key (a guest reads only rooms bound to its key). R7: a guest key holds a seat only
    while no account is bound to it. Claimed means claimed (seed 002, "Incognito &
    Mid-Session Claiming"): the claim binds the account beside the key, and from then on the
    old key reads and writes nothing of the room, and a stream it holds ends at the next
    re-check; the claiming account holds the seat by R1. A key on neither side holds nothing."""
    held: set[str] = set()
    for holder in holders:
        if holder.seat is None:
            continue
        if viewer.account_id is not None and holder.account_id == viewer.account_id:
            held.add(holder.key)
        if (
            viewer.guest_key_hash is not None
            and holder.account_id is None  # R7
            and holder.guest_key_hash == viewer.guest_key_hash
        ):
            held.add(holder.key)
    return frozenset(held)


def sides_of(keys: Iterable[str]) -> frozenset[Seat]:
    return frozenset(side for key in keys if (side := side_of(key)) is not None)


def seats_of(viewer: Viewer, holders: Sequence[SeatHolder]) -> frozenset[Seat]:
    """The sides a viewer sits on in a room (R1, R4, R7 through :func:`keys_of`)."""
    return sides_of(keys_of(viewer, holders))


def readable_keys(held: frozenset[str], holders: Sequence[SeatHolder]) -> frozenset[str]:
    """The panes (by key) a viewer holding ``held`` reads.

    R2: the host side (the host and the people it added) reads every pane of its rooms.
    R3: anyone else reads only its own pane. R8: a pane its side's lead shared is read by
    everyone on that side; nothing of the other side's non-host participants ever is."""
    if any(on_host_side(key) for key in held):
        return frozenset(h.key for h in holders if h.seat is not None)
    sides = sides_of(held)
    shared = {h.key for h in holders if h.shared and h.seat is not None and h.seat in sides}
    return held | shared


def reaches(readable: frozenset[str], held: frozenset[str], pane: str | None) -> bool:
    """Whether a viewer still reaches a held stream: a pane's stream needs that pane readable
    (R2, R3, R8); a room-wide stream (``pane`` None: an offer's stage) needs any seat (R1, R4)."""
    if pane is None:
        return bool(held)
    return pane in readable


def own_key(held: frozenset[str], side: Seat) -> str | None:
    """The pane a viewer writes into on ``side``: the side's lead's pane when it holds it,
    else its own member pane there."""
    keys = sorted((k for k in held if side_of(k) is side), key=lambda k: (not is_lead(k), k))
    return keys[0] if keys else None


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
