"""Who holds, reads and writes which pane (rules R1-R7 of dealroom.domain.access)."""

from __future__ import annotations

from uuid import UUID

import pytest

from dealroom.domain.access import (
    SeatHolder,
    Viewer,
    keys_of,
    reaches,
    readable_keys,
    reader_seat,
    seats_of,
    writable_panes,
)
from dealroom.domain.seats import RoomMode, Seat

HOST = Seat.HOST
VISITOR = Seat.VISITOR

HOST_ID = UUID("00000000-0000-4000-8000-000000000001")
VISITOR_ID = UUID("00000000-0000-4000-8000-000000000002")
STRANGER_ID = UUID("00000000-0000-4000-8000-000000000003")
GUEST_KEY = "guest-key-hash-aaaa"
OTHER_GUEST_KEY = "guest-key-hash-bbbb"

NO_SEATS: frozenset[Seat] = frozenset()
HOST_ONLY = frozenset({HOST})
VISITOR_ONLY = frozenset({VISITOR})
BOTH = frozenset({HOST, VISITOR})
ALL_SEAT_SETS = [NO_SEATS, HOST_ONLY, VISITOR_ONLY, BOTH]


def account(account_id: UUID) -> Viewer:
    return Viewer(account_id=account_id, guest_key_hash=None)


def guest(key: str) -> Viewer:
    return Viewer(account_id=None, guest_key_hash=key)


ANONYMOUS = Viewer(account_id=None, guest_key_hash=None)

ACCOUNT_ROOM = [
    SeatHolder(HOST, account_id=HOST_ID, guest_key_hash=None),
    SeatHolder(VISITOR, account_id=VISITOR_ID, guest_key_hash=None),
]
GUEST_ROOM = [
    SeatHolder(HOST, account_id=HOST_ID, guest_key_hash=None),
    SeatHolder(VISITOR, account_id=None, guest_key_hash=GUEST_KEY),
]
DEMO_ROOM = [
    SeatHolder(HOST, account_id=HOST_ID, guest_key_hash=None),
    SeatHolder(VISITOR, account_id=HOST_ID, guest_key_hash=None),
]
UNBOUND_VISITOR_ROOM = [
    SeatHolder(HOST, account_id=HOST_ID, guest_key_hash=None),
    SeatHolder(VISITOR, account_id=None, guest_key_hash=None),
]


def test_viewer_without_account_or_guest_key_is_anonymous() -> None:
    assert ANONYMOUS.anonymous is True


@pytest.mark.parametrize(
    "viewer", [account(VISITOR_ID), guest(GUEST_KEY), Viewer(VISITOR_ID, GUEST_KEY)]
)
def test_viewer_with_account_or_guest_key_is_not_anonymous(viewer: Viewer) -> None:
    assert viewer.anonymous is False


# --- seats_of: R1 (accounts) and R4 (guest keys) ---


def test_host_account_holds_the_host_seat() -> None:
    # R1: an account holds the seats bound to it.
    assert seats_of(account(HOST_ID), ACCOUNT_ROOM) == HOST_ONLY


def test_visitor_account_holds_the_visitor_seat() -> None:
    # R1: an account holds the seats bound to it.
    assert seats_of(account(VISITOR_ID), ACCOUNT_ROOM) == VISITOR_ONLY


def test_account_bound_to_no_seat_holds_nothing() -> None:
    # R1: an account holds only the seats bound to it.
    assert seats_of(account(STRANGER_ID), ACCOUNT_ROOM) == NO_SEATS


def test_host_holds_both_seats_of_its_demo_room() -> None:
    # R1: in self-chat both seats are bound to the host's account.
    assert seats_of(account(HOST_ID), DEMO_ROOM) == BOTH


def test_guest_key_holds_the_seat_bound_to_it() -> None:
    # R4: a guest key holds the seats bound to that key.
    assert seats_of(guest(GUEST_KEY), GUEST_ROOM) == VISITOR_ONLY


def test_other_guest_key_holds_nothing() -> None:
    # R4: a guest reads only rooms bound to its own key.
    assert seats_of(guest(OTHER_GUEST_KEY), GUEST_ROOM) == NO_SEATS


def test_guest_key_holds_nothing_in_a_room_bound_to_accounts() -> None:
    # R4: a seat with no guest key is not held by any guest key.
    assert seats_of(guest(GUEST_KEY), ACCOUNT_ROOM) == NO_SEATS


def test_account_holds_nothing_through_a_guest_bound_seat() -> None:
    # R1: a seat bound only to a guest key is not bound to any account.
    assert seats_of(account(VISITOR_ID), GUEST_ROOM) == NO_SEATS


@pytest.mark.parametrize(
    "holders",
    [ACCOUNT_ROOM, GUEST_ROOM, DEMO_ROOM, UNBOUND_VISITOR_ROOM],
    ids=["account-room", "guest-room", "demo-room", "unbound-visitor-room"],
)
def test_anonymous_viewer_holds_no_seat(holders: list[SeatHolder]) -> None:
    # R1/R4: a missing account or key never matches a seat's missing account or key.
    assert seats_of(ANONYMOUS, holders) == NO_SEATS


def test_guest_key_does_not_match_a_seat_with_no_key() -> None:
    # R4: an unbound seat (no account, no key) belongs to no guest.
    assert seats_of(guest(GUEST_KEY), UNBOUND_VISITOR_ROOM) == NO_SEATS


def test_signed_in_viewer_with_guest_cookie_holds_seats_of_both() -> None:
    # R1 + R4: a viewer carrying an account and a guest key holds the union of their seats.
    viewer = Viewer(account_id=VISITOR_ID, guest_key_hash=GUEST_KEY)
    holders = [
        SeatHolder(HOST, account_id=VISITOR_ID, guest_key_hash=None),
        SeatHolder(VISITOR, account_id=None, guest_key_hash=GUEST_KEY),
    ]
    assert seats_of(viewer, holders) == BOTH


def test_claimed_seat_is_held_by_the_claiming_account() -> None:
    # R1: after a claim, the visitor seat is bound to the account as well as the key.
    holders = [
        SeatHolder(HOST, account_id=HOST_ID, guest_key_hash=None),
        SeatHolder(VISITOR, account_id=VISITOR_ID, guest_key_hash=GUEST_KEY),
    ]
    assert seats_of(account(VISITOR_ID), holders) == VISITOR_ONLY


CLAIMED_ROOM = [
    SeatHolder(HOST, account_id=HOST_ID, guest_key_hash=None),
    SeatHolder(VISITOR, account_id=VISITOR_ID, guest_key_hash=GUEST_KEY),
]
"""A guest's room after the claim: the visitor seat keeps its key and is bound to the account."""


def test_a_guest_key_holds_no_seat_once_the_seat_is_claimed() -> None:
    # R7: a guest key holds a seat only while no account is bound to it; claimed means claimed.
    assert seats_of(guest(GUEST_KEY), CLAIMED_ROOM) == NO_SEATS


def test_the_old_guest_key_beside_another_account_holds_nothing() -> None:
    # R7 + R1: another account presenting the claimed key holds neither its own nor the key's.
    assert seats_of(Viewer(STRANGER_ID, GUEST_KEY), CLAIMED_ROOM) == NO_SEATS


def test_the_claiming_account_with_its_old_guest_key_holds_the_seat_through_the_account() -> None:
    # R1 + R7: the seat is the claimer's by its account; the key it still carries adds nothing.
    assert seats_of(Viewer(VISITOR_ID, GUEST_KEY), CLAIMED_ROOM) == VISITOR_ONLY
    assert seats_of(account(VISITOR_ID), CLAIMED_ROOM) == VISITOR_ONLY


def test_a_claimed_guest_key_reaches_no_stream_of_the_room() -> None:
    # R7 within the re-checks: a stream held by the old key reaches neither pane nor room.
    keys = keys_of(guest(GUEST_KEY), CLAIMED_ROOM)
    readable = readable_keys(keys, CLAIMED_ROOM)
    assert not any(reaches(readable, keys, pane) for pane in (VISITOR, HOST, None))


def test_seats_of_empty_room_is_empty() -> None:
    assert seats_of(account(HOST_ID), []) == NO_SEATS


# --- readable panes: R2 and R3 by key (tests/domain/test_access_participants.py has the rest) ---


def test_stranger_reads_nothing_in_another_guest_room() -> None:
    # R4 + R3: a different guest key holds no seat, so it reads no pane.
    held = keys_of(guest(OTHER_GUEST_KEY), GUEST_ROOM)
    assert readable_keys(held, GUEST_ROOM) == frozenset()


# --- reader_seat: R5 ---


@pytest.mark.parametrize("mode", list(RoomMode))
def test_reader_with_no_seat_has_no_reader_seat(mode: RoomMode) -> None:
    assert reader_seat(mode, NO_SEATS) is None


def test_demo_host_reads_from_the_visitor_pane() -> None:
    # R5: in a demo room the host previews its agent from the visitor's side.
    assert reader_seat(RoomMode.DEMO, BOTH) is VISITOR


@pytest.mark.parametrize("mode", [RoomMode.LIVE, RoomMode.SCRIPTED])
def test_host_reads_from_the_host_pane_outside_demo_rooms(mode: RoomMode) -> None:
    # R5: elsewhere a host's seat is the host pane.
    assert reader_seat(mode, HOST_ONLY) is HOST


@pytest.mark.parametrize("mode", [RoomMode.LIVE, RoomMode.SCRIPTED])
def test_holder_of_both_seats_reads_from_the_host_pane_outside_demo_rooms(
    mode: RoomMode,
) -> None:
    # R5: only a demo room turns the host's seat into the visitor pane.
    assert reader_seat(mode, BOTH) is HOST


@pytest.mark.parametrize("mode", list(RoomMode))
def test_visitor_reads_from_the_visitor_pane(mode: RoomMode) -> None:
    assert reader_seat(mode, VISITOR_ONLY) is VISITOR


def test_demo_reader_seat_for_host_account_resolved_from_room() -> None:
    # R1 + R5: the host opening its own link holds both seats and lands in the visitor pane.
    assert reader_seat(RoomMode.DEMO, seats_of(account(HOST_ID), DEMO_ROOM)) is VISITOR


# --- writable_panes: R6 ---


def test_host_writes_only_into_the_host_pane() -> None:
    # R6: the host reads both panes (R2) but never writes into the visitor's.
    assert writable_panes(HOST_ONLY) == HOST_ONLY


def test_visitor_writes_only_into_its_own_pane() -> None:
    # R6: a participant writes only into its own pane.
    assert writable_panes(VISITOR_ONLY) == VISITOR_ONLY


def test_viewer_with_no_seat_writes_nowhere() -> None:
    assert writable_panes(NO_SEATS) == NO_SEATS


def test_holder_of_both_seats_writes_into_both_of_its_panes() -> None:
    # R6: both panes are its own in a demo room.
    assert writable_panes(BOTH) == BOTH


@pytest.mark.parametrize("room", [ACCOUNT_ROOM, GUEST_ROOM, DEMO_ROOM, UNBOUND_VISITOR_ROOM])
@pytest.mark.parametrize(
    "viewer", [account(HOST_ID), account(VISITOR_ID), guest(GUEST_KEY), guest(OTHER_GUEST_KEY)]
)
def test_every_writable_pane_is_readable(room: list[SeatHolder], viewer: Viewer) -> None:
    # R6 within R2/R3: nobody writes into a pane it cannot read.
    held = keys_of(viewer, room)
    assert held <= readable_keys(held, room)


@pytest.mark.parametrize("seats", ALL_SEAT_SETS, ids=["none", "host", "visitor", "both"])
def test_reader_seat_is_a_writable_pane(seats: frozenset[Seat]) -> None:
    # R5 within R6: the default pane a reader writes into is one it may write into.
    for mode in RoomMode:
        seat = reader_seat(mode, seats)
        assert (seat is None) == (not seats)
        if seat is not None:
            assert seat in writable_panes(seats)


@pytest.mark.parametrize(
    ("seats", "pane", "expected"),
    [
        (frozenset({HOST}), VISITOR, True),  # R2: the host's stream of the visitor pane
        (frozenset({VISITOR}), HOST, False),  # R3: a visitor's only pane is its own
        (frozenset({VISITOR}), VISITOR, True),
        (frozenset(), VISITOR, False),
        (frozenset({VISITOR}), None, True),  # a room-wide stream (an offer's stage): any seat
        (frozenset(), None, False),
    ],
)
def test_held_seats_still_reach_a_stream(
    seats: frozenset[Seat], pane: Seat | None, expected: bool
) -> None:
    holders = [SeatHolder(HOST, HOST_ID, None), SeatHolder(VISITOR, VISITOR_ID, None)]
    keys = frozenset(str(seat) for seat in seats)
    assert reaches(readable_keys(keys, holders), keys, pane) is expected
