"""Reader-relative projections of seed 002 layer 5: bubble sides, headers and titles."""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from itertools import product

import pytest

from dealroom.domain.seats import (
    GUEST_NAME,
    Alignment,
    AuthorKind,
    RoomKind,
    RoomMode,
    RoomNames,
    Seat,
    conversation_subtitle,
    deal_room_title,
    demo_room_title,
    home_room_title,
    message_alignment,
    pane_relationship_label,
    shown_room_title,
)

HOST = Seat.HOST
VISITOR = Seat.VISITOR
PARTICIPANT = AuthorKind.PARTICIPANT
AGENT = AuthorKind.AGENT
SYSTEM = AuthorKind.SYSTEM
OPERATOR = AuthorKind.OPERATOR
LEFT = Alignment.LEFT
RIGHT = Alignment.RIGHT

NAMES = RoomNames(host="Dev Raman", visitor="Mara Ellison")
GUEST_NAMES = RoomNames(host="Dev Raman", visitor=None)

# The full table: reader seat × pane seat × author kind.
ALIGNMENT_TABLE = [
    # seed 002 layer 5: in one's own pane one's own words are on the right, the agent on the left.
    pytest.param(HOST, HOST, PARTICIPANT, RIGHT, id="host-own-pane-own-words-right"),
    pytest.param(HOST, HOST, AGENT, LEFT, id="host-own-pane-agent-left"),
    pytest.param(HOST, HOST, SYSTEM, LEFT, id="host-own-pane-system-left"),
    pytest.param(VISITOR, VISITOR, PARTICIPANT, RIGHT, id="visitor-own-pane-own-words-right"),
    pytest.param(VISITOR, VISITOR, AGENT, LEFT, id="visitor-own-pane-agent-left"),
    pytest.param(VISITOR, VISITOR, SYSTEM, LEFT, id="visitor-own-pane-system-left"),
    # seed 002 layer 5: the host reading the visitor's pane sees its agent (its representative)
    # on the right and the visitor on the left.
    pytest.param(HOST, VISITOR, AGENT, RIGHT, id="host-reads-visitor-pane-agent-right"),
    pytest.param(HOST, VISITOR, PARTICIPANT, LEFT, id="host-reads-visitor-pane-visitor-left"),
    pytest.param(HOST, VISITOR, SYSTEM, LEFT, id="host-reads-visitor-pane-system-left"),
    # Not in the seed, and unreachable (access R3: a visitor never reads the host pane); pinned
    # to the function's one rule for another's pane: the agent right, everyone else left.
    pytest.param(VISITOR, HOST, AGENT, RIGHT, id="visitor-reads-host-pane-agent-right"),
    pytest.param(VISITOR, HOST, PARTICIPANT, LEFT, id="visitor-reads-host-pane-host-left"),
    pytest.param(VISITOR, HOST, SYSTEM, LEFT, id="visitor-reads-host-pane-system-left"),
    # An operator speaks in the agent's seat of a taken-over pane, placed as the agent.
    pytest.param(HOST, HOST, OPERATOR, LEFT, id="host-own-pane-operator-left"),
    pytest.param(VISITOR, VISITOR, OPERATOR, LEFT, id="visitor-own-pane-operator-left"),
    pytest.param(HOST, VISITOR, OPERATOR, RIGHT, id="host-reads-visitor-pane-operator-right"),
    pytest.param(VISITOR, HOST, OPERATOR, RIGHT, id="visitor-reads-host-pane-operator-right"),
]


@pytest.mark.parametrize(("reader", "pane", "author", "expected"), ALIGNMENT_TABLE)
def test_message_alignment_places_bubble_per_seed_002_layer_5(
    reader: Seat, pane: Seat, author: AuthorKind, expected: Alignment
) -> None:
    assert message_alignment(reader, pane, author) == expected


def test_alignment_table_covers_every_reader_pane_and_author() -> None:
    covered = [tuple(p.values[:3]) for p in ALIGNMENT_TABLE]
    assert sorted(covered) == sorted(product(Seat, Seat, AuthorKind))


def test_system_messages_are_always_on_the_left() -> None:
    sides = {message_alignment(r, p, SYSTEM) for r, p in product(Seat, Seat)}
    assert sides == {LEFT}


def test_guest_name_is_a_visitor() -> None:
    # seed 002: an anonymous visitor is shown as "A visitor".
    assert GUEST_NAME == "A visitor"


def test_visitor_or_guest_is_the_visitor_display_name_when_known() -> None:
    assert NAMES.visitor_or_guest == "Mara Ellison"


def test_visitor_or_guest_is_a_visitor_for_a_guest() -> None:
    assert GUEST_NAMES.visitor_or_guest == "A visitor"


def test_visitor_or_guest_is_a_visitor_for_an_empty_display_name() -> None:
    assert RoomNames(host="Dev Raman", visitor="").visitor_or_guest == "A visitor"


@pytest.mark.parametrize("reader", list(Seat))
def test_home_room_subtitle_is_you_and_your_agent(reader: Seat) -> None:
    subtitle = conversation_subtitle(RoomKind.HOME, RoomMode.LIVE, reader, NAMES)
    assert subtitle == "You and your agent"


@pytest.mark.parametrize("reader", list(Seat))
def test_demo_room_subtitle_is_a_preview_of_the_host_agent(reader: Seat) -> None:
    subtitle = conversation_subtitle(RoomKind.DEAL, RoomMode.DEMO, reader, NAMES)
    assert subtitle == "Preview of Dev Raman's agent"


def test_live_deal_room_subtitle_for_host_names_the_visitor() -> None:
    subtitle = conversation_subtitle(RoomKind.DEAL, RoomMode.LIVE, HOST, NAMES)
    assert subtitle == "Your agent and Mara Ellison"


def test_live_deal_room_subtitle_for_host_names_a_guest_as_a_visitor() -> None:
    subtitle = conversation_subtitle(RoomKind.DEAL, RoomMode.LIVE, HOST, GUEST_NAMES)
    assert subtitle == "Your agent and A visitor"


def test_live_deal_room_subtitle_for_visitor_names_the_host_agent() -> None:
    subtitle = conversation_subtitle(RoomKind.DEAL, RoomMode.LIVE, VISITOR, NAMES)
    assert subtitle == "Dev Raman's agent"


def test_scripted_deal_room_subtitle_is_read_like_a_live_one() -> None:
    host_view = conversation_subtitle(RoomKind.DEAL, RoomMode.SCRIPTED, HOST, NAMES)
    visitor_view = conversation_subtitle(RoomKind.DEAL, RoomMode.SCRIPTED, VISITOR, NAMES)
    assert (host_view, visitor_view) == ("Your agent and Mara Ellison", "Dev Raman's agent")


@pytest.mark.parametrize(
    ("reader", "pane", "names", "expected"),
    [
        pytest.param(HOST, HOST, NAMES, "You and your agent", id="host-own-pane"),
        pytest.param(VISITOR, VISITOR, NAMES, "You and Dev Raman's agent", id="visitor-own-pane"),
        pytest.param(
            HOST, VISITOR, NAMES, "Your agent and Mara Ellison", id="host-reads-visitor-pane"
        ),
        pytest.param(
            HOST,
            VISITOR,
            GUEST_NAMES,
            "Your agent and A visitor",
            id="host-reads-guest-pane",
        ),
        # Unreachable (access R3), pinned for completeness.
        pytest.param(
            VISITOR, HOST, NAMES, "Dev Raman and their agent", id="visitor-reads-host-pane"
        ),
    ],
)
def test_pane_relationship_label_is_said_from_the_reader_side(
    reader: Seat, pane: Seat, names: RoomNames, expected: str
) -> None:
    assert pane_relationship_label(reader, pane, names) == expected


def test_guest_deal_room_title_is_a_visitor_times_host() -> None:
    # seed 002: an unclaimed room is titled "A visitor × [Host]".
    assert deal_room_title("Dev Raman", None) == "A visitor × Dev Raman"


def test_signed_in_visitor_deal_room_title_names_the_visitor_first() -> None:
    assert deal_room_title("Dev Raman", "Mara Ellison") == "Mara Ellison × Dev Raman"


def test_deal_room_title_with_empty_visitor_name_falls_back_to_a_visitor() -> None:
    assert deal_room_title("Dev Raman", "") == "A visitor × Dev Raman"


def test_demo_room_title_is_demo_dot_host() -> None:
    # seed 002 self-chat: the room is titled "Demo · [Host]".
    assert demo_room_title("Dev Raman") == "Demo · Dev Raman"


def test_home_room_title_is_name_dot_your_agent() -> None:
    assert home_room_title("Dev Raman") == "Dev Raman · your agent"


@pytest.mark.parametrize(
    ("enum", "values"),
    [
        (Seat, ["host", "visitor"]),
        (RoomKind, ["home", "deal"]),
        (RoomMode, ["live", "demo", "scripted"]),
        (AuthorKind, ["participant", "agent", "system", "operator"]),
        (Alignment, ["left", "right"]),
    ],
)
def test_enum_values_are_the_stored_strings(enum: type[StrEnum], values: list[str]) -> None:
    assert [member.value for member in enum] == values


def test_a_guest_rooms_title_says_what_it_is_about() -> None:
    opened = date(2026, 12, 6)
    stored = deal_room_title("Maya Lin", None)
    assert shown_room_title(stored, "Maya Lin", "Glow Co", "sponsored post", opened) == (
        "Glow Co × Maya Lin"
    )
    assert shown_room_title(stored, "Maya Lin", None, "sponsored post", opened) == (
        "Sponsored post · Dec 6 × Maya Lin"
    )
    assert shown_room_title(stored, "Maya Lin", None, None, opened) == "A visitor × Maya Lin"
    # a claimed room keeps the title the claim gave it
    claimed = deal_room_title("Maya Lin", "Mara Ellison")
    assert shown_room_title(claimed, "Maya Lin", "Glow Co", "reel", opened) == claimed
