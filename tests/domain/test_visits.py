"""What a visit to a host's link opens (rules VT1-VT4 of dealroom.domain.visits)."""

from __future__ import annotations

from uuid import UUID

import pytest

from dealroom.domain.seats import RoomMode
from dealroom.domain.visits import (
    NewRoom,
    PriorRoom,
    VisitorKind,
    new_room,
    room_to_reuse,
    visitor_kind,
)

HOST_ID = UUID("00000000-0000-4000-8000-0000000000a1")
VISITOR_ID = UUID("00000000-0000-4000-8000-0000000000b2")
PRIOR_ID = UUID("00000000-0000-4000-8000-0000000000c3")

EMPTY_PRIOR = PriorRoom(room_id=PRIOR_ID, visitor_has_spoken=False)
SPOKEN_PRIOR = PriorRoom(room_id=PRIOR_ID, visitor_has_spoken=True)


# --- visitor_kind (seed 002 "Authentication Modes & Visitor Resolution") ---


def test_visit_without_account_is_a_guest() -> None:
    # seed 002 mode 3: anonymous visitors start without an account.
    assert visitor_kind(HOST_ID, None) is VisitorKind.GUEST


def test_visit_by_another_account_is_an_account_visit() -> None:
    # seed 002 mode 1 (and mode 2: act-as resolves to the managed account first).
    assert visitor_kind(HOST_ID, VISITOR_ID) is VisitorKind.ACCOUNT


def test_visit_by_the_host_account_is_self() -> None:
    # seed 002 mode 4: the host (or someone acting as the host) opens its own link.
    assert visitor_kind(HOST_ID, HOST_ID) is VisitorKind.SELF


def test_visit_by_an_equal_but_distinct_uuid_of_the_host_is_self() -> None:
    assert visitor_kind(HOST_ID, UUID(str(HOST_ID))) is VisitorKind.SELF


# --- room_to_reuse: VT1 and VT2 ---


def test_bare_visit_reuses_newest_room_while_visitor_has_not_spoken() -> None:
    # VT1: an empty room is reused so bare revisits do not litter the list.
    assert room_to_reuse(EMPTY_PRIOR, new_conversation=False) == PRIOR_ID


def test_bare_visit_starts_a_new_room_once_visitor_has_spoken() -> None:
    # VT1: once the visitor has spoken, a visit starts a new room.
    assert room_to_reuse(SPOKEN_PRIOR, new_conversation=False) is None


def test_bare_first_visit_starts_a_new_room() -> None:
    # VT1: with no prior room there is nothing to reuse.
    assert room_to_reuse(None, new_conversation=False) is None


@pytest.mark.parametrize(
    "prior", [None, EMPTY_PRIOR, SPOKEN_PRIOR], ids=["no-prior", "empty-prior", "spoken-prior"]
)
def test_new_conversation_always_starts_a_new_room(prior: PriorRoom | None) -> None:
    # VT2: newConversation always starts one, even over an empty prior room.
    assert room_to_reuse(prior, new_conversation=True) is None


# --- new_room: VT3 and VT4 ---


def test_guest_room_is_live_and_titled_a_visitor_times_host() -> None:
    # VT3: a guest's room is "A visitor × <Host>".
    assert new_room(VisitorKind.GUEST, "Dev Raman", None) == NewRoom(
        RoomMode.LIVE, "A visitor × Dev Raman"
    )


def test_guest_room_title_ignores_any_visitor_name() -> None:
    # VT3: a guest is always "A visitor", whatever name is passed along.
    assert new_room(VisitorKind.GUEST, "Dev Raman", "Mara Ellison") == NewRoom(
        RoomMode.LIVE, "A visitor × Dev Raman"
    )


def test_account_room_is_live_and_titled_visitor_times_host() -> None:
    assert new_room(VisitorKind.ACCOUNT, "Dev Raman", "Mara Ellison") == NewRoom(
        RoomMode.LIVE, "Mara Ellison × Dev Raman"
    )


def test_account_room_without_visitor_name_is_titled_a_visitor_times_host() -> None:
    assert new_room(VisitorKind.ACCOUNT, "Dev Raman", None) == NewRoom(
        RoomMode.LIVE, "A visitor × Dev Raman"
    )


def test_host_own_visit_opens_a_demo_room() -> None:
    # VT4: the host's own visit is a demo room titled "Demo · <Host>" (seed 002 mode 4).
    assert new_room(VisitorKind.SELF, "Dev Raman", None) == NewRoom(
        RoomMode.DEMO, "Demo · Dev Raman"
    )


def test_host_own_visit_is_a_demo_room_whatever_visitor_name_is_passed() -> None:
    # VT4: self-chat is never a live deal room, even when a visitor name is supplied.
    assert new_room(VisitorKind.SELF, "Dev Raman", "Dev Raman") == NewRoom(
        RoomMode.DEMO, "Demo · Dev Raman"
    )


@pytest.mark.parametrize(
    ("account_id", "mode"),
    [(None, RoomMode.LIVE), (VISITOR_ID, RoomMode.LIVE), (HOST_ID, RoomMode.DEMO)],
    ids=["guest", "account", "self"],
)
def test_only_the_host_own_visit_opens_a_demo_room(account_id: UUID | None, mode: RoomMode) -> None:
    # VT3/VT4 end to end: the visitor kind decides the room mode.
    kind = visitor_kind(HOST_ID, account_id)
    assert new_room(kind, "Dev Raman", "Mara Ellison").mode is mode
