"""Rooms of any size: which participant keys a viewer is, which panes it reads, who an
agent's send may address, and what of room memory a teammate's pane sees (access R1-R8,
seats.side_of/may_send/member_key, visibility V2-V5)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealroom.domain.access import (
    SeatHolder,
    Viewer,
    keys_of,
    own_key,
    reaches,
    readable_keys,
)
from dealroom.domain.seats import (
    RoomKind,
    Seat,
    is_lead,
    may_send,
    member_key,
    on_host_side,
    side_of,
)
from dealroom.domain.visibility import is_visitor_facing, visible_memory

HOST_ID = UUID("00000000-0000-4000-8000-000000000001")
MANAGER_ID = UUID("00000000-0000-4000-8000-000000000002")
BUYER_ID = UUID("00000000-0000-4000-8000-000000000003")
COLLEAGUE_ID = UUID("00000000-0000-4000-8000-000000000004")
STRANGER_ID = UUID("00000000-0000-4000-8000-000000000005")

HOST_SIDE = ("host", "host_2", "host_3")
VISITOR_SIDE = ("visitor", "visitor_2", "visitor_3", "visitor_12")
UNKNOWN = ("admin", "guest", "hostess", "visitors", "host_x", "visitor_2a", "HOST", "")
MALFORMED = ("host_", "visitor_", "host_\u00b2", "visitor_\u0663")
"""Keys no room assigns (member_key numbers with ASCII digits from 2): an empty or non-ASCII
number is not a teammate's key, so it holds nothing like any other unknown key."""

TEAM = [
    SeatHolder("host", HOST_ID, None),
    SeatHolder("host_2", MANAGER_ID, None),
    SeatHolder("visitor", BUYER_ID, None),
    SeatHolder("visitor_2", COLLEAGUE_ID, None),
]
EVERY_PANE = frozenset({"host", "host_2", "visitor", "visitor_2"})


def account(account_id: UUID) -> Viewer:
    return Viewer(account_id=account_id, guest_key_hash=None)


def shared(room: list[SeatHolder], key: str) -> list[SeatHolder]:
    return [SeatHolder(h.key, h.account_id, h.guest_key_hash, h.key == key) for h in room]


# --- side_of, on_host_side, is_lead ---


@pytest.mark.parametrize("key", HOST_SIDE)
def test_the_host_and_its_team_sit_on_the_host_side(key: str) -> None:
    assert side_of(key) is Seat.HOST
    assert on_host_side(key)


@pytest.mark.parametrize("key", VISITOR_SIDE)
def test_the_visitor_and_its_team_sit_on_the_visitor_side(key: str) -> None:
    assert side_of(key) is Seat.VISITOR
    assert not on_host_side(key)


@pytest.mark.parametrize("key", UNKNOWN + MALFORMED)
def test_a_key_that_names_no_participant_sits_on_neither_side(key: str) -> None:
    assert side_of(key) is None
    assert not on_host_side(key)


def test_only_the_two_leads_are_leads() -> None:
    assert [k for k in HOST_SIDE + VISITOR_SIDE if is_lead(k)] == ["host", "visitor"]


# --- member_key ---


@pytest.mark.parametrize(
    ("side", "taken", "expected"),
    [
        (Seat.VISITOR, {"host", "visitor"}, "visitor_2"),
        (Seat.VISITOR, {"host", "visitor", "visitor_2"}, "visitor_3"),
        (Seat.VISITOR, {"visitor", "visitor_3"}, "visitor_2"),  # a removed member's gap
        (Seat.HOST, {"host", "visitor", "visitor_2"}, "host_2"),
    ],
)
def test_a_joining_member_takes_the_next_free_key_of_its_side(
    side: Seat, taken: set[str], expected: str
) -> None:
    assert member_key(side, taken) == expected


@given(st.sampled_from(Seat), st.sets(st.sampled_from(HOST_SIDE + VISITOR_SIDE + UNKNOWN)))
def test_a_member_key_is_free_on_its_side_and_never_a_lead(side: Seat, taken: set[str]) -> None:
    key = member_key(side, taken)
    assert key not in taken
    assert side_of(key) is side
    assert not is_lead(key)


# --- keys_of: R1, R4, R7 by key ---


@pytest.mark.parametrize(
    ("viewer", "expected"),
    [
        (HOST_ID, {"host"}),
        (MANAGER_ID, {"host_2"}),
        (BUYER_ID, {"visitor"}),
        (COLLEAGUE_ID, {"visitor_2"}),
        (STRANGER_ID, set()),
    ],
)
def test_an_account_is_exactly_the_participants_bound_to_it(
    viewer: UUID, expected: set[str]
) -> None:
    assert keys_of(account(viewer), TEAM) == expected


def test_a_guest_key_holds_a_teammate_seat_only_while_no_account_is_bound() -> None:
    unclaimed = [*TEAM[:3], SeatHolder("visitor_2", None, "k")]
    claimed = [*TEAM[:3], SeatHolder("visitor_2", COLLEAGUE_ID, "k")]
    guest = Viewer(account_id=None, guest_key_hash="k")
    assert keys_of(guest, unclaimed) == {"visitor_2"}
    assert keys_of(guest, claimed) == frozenset()  # R7


@pytest.mark.parametrize("key", UNKNOWN + MALFORMED)
def test_a_seat_under_an_unknown_key_holds_nothing(key: str) -> None:
    room = [*TEAM, SeatHolder(key, STRANGER_ID, "k")]
    assert keys_of(account(STRANGER_ID), room) == frozenset()
    assert keys_of(Viewer(None, "k"), room) == frozenset()


# --- readable_keys: R2, R3, R8 ---


@pytest.mark.parametrize("viewer", [HOST_ID, MANAGER_ID])
def test_the_host_side_reads_every_pane(viewer: UUID) -> None:  # R2
    assert readable_keys(keys_of(account(viewer), TEAM), TEAM) == EVERY_PANE


@pytest.mark.parametrize(("viewer", "own"), [(BUYER_ID, "visitor"), (COLLEAGUE_ID, "visitor_2")])
def test_a_visitor_side_participant_reads_only_its_own_pane(viewer: UUID, own: str) -> None:  # R3
    assert readable_keys(keys_of(account(viewer), TEAM), TEAM) == {own}


def test_a_shared_teammate_pane_is_read_by_the_rest_of_its_side() -> None:  # R8
    room = shared(TEAM, "visitor_2")
    assert readable_keys(frozenset({"visitor"}), room) == {"visitor", "visitor_2"}


def test_a_visitor_reads_no_host_side_pane_even_a_shared_one() -> None:  # R3, R8
    room = shared(TEAM, "host_2")
    assert readable_keys(frozenset({"visitor"}), room) == {"visitor"}
    assert readable_keys(frozenset({"visitor_2"}), room) == {"visitor_2"}


def test_an_unshared_lead_pane_is_not_read_by_its_teammate() -> None:  # R3
    assert "visitor" not in readable_keys(frozenset({"visitor_2"}), TEAM)
    assert "visitor" in readable_keys(frozenset({"visitor_2"}), shared(TEAM, "visitor"))


def test_a_pane_under_an_unknown_key_is_read_by_no_one() -> None:
    room = [*TEAM, SeatHolder("admin", STRANGER_ID, None, shared=True)]
    for held in ({"host"}, {"host_2"}, {"visitor"}, {"visitor_2"}):
        assert "admin" not in readable_keys(frozenset(held), room)


def test_a_stream_reaches_only_a_readable_pane() -> None:
    held = frozenset({"visitor_2"})
    readable = readable_keys(held, TEAM)
    assert reaches(readable, held, "visitor_2")
    assert not reaches(readable, held, "visitor")
    assert reaches(readable, held, None)  # a room-wide stream needs any seat
    assert not reaches(frozenset(), frozenset(), None)


# --- own_key: the pane a viewer writes into on a side ---


@pytest.mark.parametrize(
    ("held", "side", "expected"),
    [
        ({"visitor_2"}, Seat.VISITOR, "visitor_2"),
        ({"visitor", "visitor_2"}, Seat.VISITOR, "visitor"),
        ({"visitor_3", "visitor_2"}, Seat.VISITOR, "visitor_2"),
        ({"host_2"}, Seat.HOST, "host_2"),
        ({"host_2"}, Seat.VISITOR, None),
        ({"host", "visitor"}, Seat.HOST, "host"),
        (set(), Seat.VISITOR, None),
        ({"admin"}, Seat.HOST, None),
    ],
)
def test_own_key_is_the_lead_pane_when_held_else_the_members(
    held: set[str], side: Seat, expected: str | None
) -> None:
    assert own_key(frozenset(held), side) == expected


# --- may_send ---


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("host", "visitor", True),
        ("host", "visitor_2", True),
        ("host_2", "visitor", True),
        ("host_2", "visitor_2", True),
        ("visitor", "host", True),
        ("visitor_2", "host", True),
        ("visitor", "host_2", False),  # a visitor-side pane addresses only the host's own
        ("visitor", "visitor_2", False),
        ("visitor_2", "visitor", False),
        ("visitor", "visitor", False),
        ("host", "host_2", False),
        ("host_2", "host", False),
        ("host", "host", False),
        ("admin", "host", False),
        ("host", "admin", False),
        ("visitor", "admin", False),
    ],
)
def test_who_a_send_may_address(source: str, target: str, allowed: bool) -> None:
    assert may_send(source, target) is allowed


# --- properties over any room ---

KEYS = HOST_SIDE + VISITOR_SIDE + UNKNOWN[:4] + MALFORMED[:2]
ACCOUNTS = (HOST_ID, MANAGER_ID, BUYER_ID, COLLEAGUE_ID)


@st.composite
def rooms(draw: st.DrawFn) -> list[SeatHolder]:
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=8))
    return [
        SeatHolder(
            key,
            draw(st.none() | st.sampled_from(ACCOUNTS)),
            draw(st.none() | st.sampled_from(("k1", "k2"))),
            draw(st.booleans()),
        )
        for key in keys
    ]


viewers = st.builds(
    Viewer, st.none() | st.sampled_from((*ACCOUNTS, STRANGER_ID)), st.none() | st.just("k1")
)


@given(viewers, rooms())
def test_a_viewer_off_the_host_side_reads_no_other_visitor_pane_unless_shared(
    viewer: Viewer, room: list[SeatHolder]
) -> None:
    held = keys_of(viewer, room)
    if any(on_host_side(k) for k in held):
        return
    by_key = {h.key: h for h in room}
    for key in readable_keys(held, room) - held:
        assert side_of(key) is Seat.VISITOR, key  # never a host-side pane (R3)
        assert by_key[key].shared, key  # another visitor-side pane only when shared (R8)


@given(viewers, rooms())
def test_the_host_side_reads_every_participant_pane(viewer: Viewer, room: list[SeatHolder]) -> None:
    held = keys_of(viewer, room)
    if any(on_host_side(k) for k in held):
        assert readable_keys(held, room) == {h.key for h in room if side_of(h.key) is not None}


@given(viewers, rooms())
def test_an_unknown_key_holds_and_reveals_nothing(viewer: Viewer, room: list[SeatHolder]) -> None:
    held = keys_of(viewer, room)
    assert all(side_of(k) is not None for k in held)
    assert all(side_of(k) is not None for k in readable_keys(held, room))


@given(st.sampled_from(KEYS), st.sampled_from(KEYS))
def test_a_send_never_links_two_visitor_side_panes_nor_one_side_to_itself(
    source: str, target: str
) -> None:
    if not may_send(source, target):
        return
    assert side_of(source) is not None
    assert side_of(target) is not None
    assert side_of(source) is not side_of(target)
    if not on_host_side(source):
        assert target == "host"  # a visitor-side pane speaks only to the host's own pane


# --- what of room memory a teammate's pane sees (visibility V2, V4, V5) ---

MEMORY: dict[str, dict[str, Any]] = {
    "host": {"limits": {"sponsored_post": {"floor": "6000"}}, "public": {"rate": "8000"}},
    "host_2": {"note": "the manager's"},
    "visitor": {"budget": "ceiling 9250, private"},
    "visitor_2": {"role": "legal"},
    "deal": {"deliverable": "sponsored post"},
}


def test_the_managers_pane_gets_the_hosts_view() -> None:
    assert not is_visitor_facing("host_2")
    as_manager = visible_memory(MEMORY, pane="host_2", room_kind=RoomKind.DEAL)
    assert as_manager == visible_memory(MEMORY, pane="host", room_kind=RoomKind.DEAL)
    assert as_manager["host"]["limits"]  # V2: the host's private rules


@pytest.mark.parametrize("pane", ["visitor", "visitor_2"])
def test_a_brand_side_pane_sees_its_own_branch_and_no_teammates(pane: str) -> None:
    view = visible_memory(MEMORY, pane=pane, room_kind=RoomKind.DEAL)
    assert view[pane] == MEMORY[pane]  # V5
    assert view["host"] == {"public": MEMORY["host"]["public"]}  # V4
    others = {k for k in MEMORY if k not in (pane, "host", "deal")}
    assert others.isdisjoint(view)


@given(
    st.sampled_from(VISITOR_SIDE),
    st.dictionaries(st.sampled_from(HOST_SIDE + VISITOR_SIDE), st.just({"x": "1"}), max_size=6),
)
def test_a_brand_side_pane_never_sees_another_participants_branch(
    pane: str, branches: dict[str, dict[str, str]]
) -> None:
    view = visible_memory(branches, pane=pane, room_kind=RoomKind.DEAL)
    assert set(view) <= {pane}
