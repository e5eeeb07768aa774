"""Visits to a host's link, room memory seeding, who may read what, and the rooms list.

seed 000 "A deal room per conversation started"; seed 002 "Authentication Modes & Visitor
Resolution", layer 1 (seeding guards) and layer 5 (reader-relative projections).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant, Room
from tests.conftest import Server
from tests.support.graphql import Client, open_room, post
from tests.support.rooms import (
    OPEN_ROOM_FULL,
    ROOM,
    ROOMS,
    account_client,
    count_rows,
    grant,
    hold_effect,
    only_error,
    post_raw,
    room_ids,
    room_memory,
    set_account_memory,
    set_cookies,
)

GUEST_COOKIE = "dealroom_guest"
HOST = "devraman"
HOST_NAME = "Dev Raman"

VisitorFactory = Callable[[Server, Db], Awaitable[Client]]


async def _host(server: Server) -> tuple[Client, str]:
    client = server.client()
    return client, await account_client(client, HOST, HOST_NAME)


async def _guest(server: Server, db: Db) -> Client:
    return server.client()


async def _account(server: Server, db: Db) -> Client:
    client = server.client()
    await account_client(client, "maraellison", "Mara Ellison")
    return client


async def _acting(server: Server, db: Db) -> Client:
    """An operator acting as the visitor account Mara (seed 002 "Act-As Mode")."""
    mara_id = await account_client(server.client(), "maraellison", "Mara Ellison")
    manager = server.client()
    await account_client(manager, "opsadmin", "Ops Admin")
    await grant(db, "opsadmin", "maraellison")
    manager.headers["X-Act-As"] = mara_id
    return manager


VISITORS = pytest.mark.parametrize(
    "make_visitor", [_guest, _account, _acting], ids=["guest", "account", "acting-as-account"]
)


async def _read_room(client: Client, room_id: str) -> dict[str, Any]:
    room: dict[str, Any] = (await client.query(ROOM, {"id": room_id}))["room"]
    return room


def _by_seat(room: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["seat"]: p for p in room["participants"]}


# --- what a visit opens ------------------------------------------------------------------


async def test_a_guests_first_visit_gets_a_guest_key_cookie_and_a_visitor_room(
    server: Server,
) -> None:
    await _host(server)
    guest = server.client()

    response = await post_raw(guest, OPEN_ROOM_FULL, {"handle": HOST})

    payload = response.json()["data"]["openVisitorRoom"]
    cookie = set_cookies(response)[GUEST_COOKIE]
    assert payload["guestKey"]
    assert cookie.value == payload["guestKey"]
    assert cookie["httponly"] is True
    assert cookie["path"] == "/"
    assert payload["created"] is True
    room = payload["room"]
    assert room["title"] == f"A visitor × {HOST_NAME}"
    assert (room["kind"], room["mode"], room["readerSeat"]) == ("DEAL", "LIVE", "VISITOR")


async def test_only_a_visitor_who_could_reuse_a_room_waits_on_the_hosts_row(
    server: Server, count_statements: Callable[[], Any]
) -> None:
    """Visits to one host are serialised on its row so a visitor's racing bare visits cannot
    both create a room; a guest with no key yet has no room to reuse and no twin to race, so
    its first visit must not queue behind every other visitor's (a popular link). Row locks
    are PostgreSQL's (SQLite's ``BEGIN IMMEDIATE`` serialises every writer and renders no
    ``FOR UPDATE``): there this pins both sides."""
    await _host(server)
    guest = server.client()
    with count_statements() as first:
        await post_raw(guest, OPEN_ROOM_FULL, {"handle": HOST})
    with count_statements() as again:  # the cookie brings the key back: it may reuse
        await guest.query(OPEN_ROOM_FULL, {"handle": HOST})

    def locks(seen: list[str]) -> list[str]:
        return [s for s in seen if "FROM accounts" in s and "FOR UPDATE" in s]

    assert locks(list(first)) == []
    if server.engine.dialect.name == "postgresql":
        assert len(locks(list(again))) == 1, list(again)


async def test_the_guest_cookie_alone_brings_the_guest_back_to_its_room(server: Server) -> None:
    await _host(server)
    guest = server.client()
    first = await post_raw(guest, OPEN_ROOM_FULL, {"handle": HOST})
    assert "X-Guest-Key" not in guest.headers  # only the cookie jar carries the key

    again = (await guest.query(OPEN_ROOM_FULL, {"handle": HOST}))["openVisitorRoom"]

    assert again["room"]["id"] == first.json()["data"]["openVisitorRoom"]["room"]["id"]
    assert again["guestKey"] == first.json()["data"]["openVisitorRoom"]["guestKey"]
    assert again["created"] is False


@VISITORS
async def test_a_bare_revisit_reuses_the_room_while_the_visitor_has_not_spoken(
    server: Server, db: Db, make_visitor: VisitorFactory
) -> None:
    await _host(server)
    visitor = await make_visitor(server, db)
    first = await open_room(visitor, HOST)

    again = await open_room(visitor, HOST)

    assert again["room"]["id"] == first["room"]["id"]
    assert again["created"] is False
    assert await count_rows(db, Room, Room.kind == "deal") == 1


@VISITORS
async def test_after_the_visitor_speaks_a_bare_visit_starts_a_new_room(
    server: Server, db: Db, make_visitor: VisitorFactory
) -> None:
    await _host(server)
    visitor = await make_visitor(server, db)
    first = await open_room(visitor, HOST)
    await post(visitor, first["room"]["id"], "Can you do a post in March?")

    again = await open_room(visitor, HOST)

    assert again["created"] is True
    assert again["room"]["id"] != first["room"]["id"]
    # Rooms never close: the first conversation is still the visitor's.
    assert set(await room_ids(visitor)) >= {first["room"]["id"], again["room"]["id"]}


@VISITORS
async def test_new_conversation_always_starts_a_new_room(
    server: Server, db: Db, make_visitor: VisitorFactory
) -> None:
    await _host(server)
    visitor = await make_visitor(server, db)
    first = await open_room(visitor, HOST)

    fresh = await open_room(visitor, HOST, new=True)
    bare = await open_room(visitor, HOST)

    assert fresh["created"] is True
    assert fresh["room"]["id"] != first["room"]["id"]
    assert bare["room"]["id"] == fresh["room"]["id"]  # the newest empty room is reused


async def test_a_different_guest_never_gets_another_guests_room(server: Server) -> None:
    await _host(server)
    first_guest, second_guest = server.client(), server.client()
    first = await open_room(first_guest, HOST)

    second = await open_room(second_guest, HOST)

    assert second["guestKey"] != first["guestKey"]
    assert second["room"]["id"] != first["room"]["id"]
    assert second["created"] is True


async def test_a_signed_in_visitor_gets_no_guest_key_and_a_room_in_its_name(
    server: Server, db: Db
) -> None:
    await _host(server)
    visitor = await _account(server, db)

    response = await post_raw(visitor, OPEN_ROOM_FULL, {"handle": HOST})

    payload = response.json()["data"]["openVisitorRoom"]
    assert payload["guestKey"] is None
    assert GUEST_COOKIE not in set_cookies(response)
    visitor_seat = _by_seat(payload["room"])["VISITOR"]
    assert visitor_seat["isGuest"] is False
    assert visitor_seat["account"] == {"handle": "maraellison"}


async def test_the_host_visiting_its_own_link_gets_a_demo_room(server: Server) -> None:
    host, _ = await _host(server)

    opened = await open_room(host, HOST)

    room = opened["room"]
    assert opened["guestKey"] is None
    assert room["mode"] == "DEMO"
    assert room["kind"] == "DEAL"
    assert room["title"] == f"Demo · {HOST_NAME}"
    assert room["subtitle"] == f"Preview of {HOST_NAME}'s agent"


async def test_a_manager_acting_as_the_host_gets_the_demo_room(server: Server, db: Db) -> None:
    host, host_id = await _host(server)
    manager = server.client()
    await account_client(manager, "opsadmin", "Ops Admin")
    await grant(db, "opsadmin", HOST)
    manager.headers["X-Act-As"] = host_id

    opened = await open_room(manager, HOST)

    assert opened["room"]["mode"] == "DEMO"
    assert opened["room"]["title"] == f"Demo · {HOST_NAME}"
    assert opened["guestKey"] is None
    # It is the host's demo room: the host itself opens the same one.
    assert (await open_room(host, HOST))["room"]["id"] == opened["room"]["id"]


async def test_a_manager_acting_as_a_visitor_account_gets_that_accounts_rooms(
    server: Server, db: Db
) -> None:
    await _host(server)
    mara = await _account(server, db)
    maras_room = await open_room(mara, HOST)
    operator = server.client()
    await account_client(operator, "opsadmin", "Ops Admin")
    await grant(db, "opsadmin", "maraellison")
    me = await mara.query("{ me { id } }")
    operator.headers["X-Act-As"] = me["me"]["id"]

    opened = await open_room(operator, HOST)

    assert opened["room"]["id"] == maras_room["room"]["id"]
    assert opened["created"] is False
    visitor_seat = _by_seat(await _read_room(operator, opened["room"]["id"]))["VISITOR"]
    assert visitor_seat["account"] == {"handle": "maraellison"}
    assert await room_ids(operator) == await room_ids(mara)


async def test_an_unknown_handle_is_not_found_and_opens_nothing(server: Server, db: Db) -> None:
    await _host(server)
    guest = server.client()

    response = await post_raw(guest, OPEN_ROOM_FULL, {"handle": "nobody-here"})

    errors = response.json()["errors"]
    assert [e["extensions"]["code"] for e in errors] == ["NOT_FOUND"]
    assert await count_rows(db, Room, Room.kind == "deal") == 0
    assert await count_rows(db, Participant, Participant.key == "visitor") == 0


# --- memory seeding (seed 002 layer 1) ---------------------------------------------------


HOST_CANARY = "HOST-CANARY-floor-is-3200"
VISITOR_CANARY = "VISITOR-CANARY-never-below-900"
MANAGER_CANARY = "MANAGER-CANARY-ops-notes"


async def _seed_memories(server: Server, db: Db, make_visitor: VisitorFactory) -> Client:
    """The host, the visitor account and the operator each hold a distinct canary."""
    await _host(server)
    visitor = await make_visitor(server, db)
    canaries = {HOST: HOST_CANARY, "maraellison": VISITOR_CANARY, "opsadmin": MANAGER_CANARY}
    ids = await _account_ids(server, list(canaries))
    for handle, account_id in ids.items():
        document = {"rules": {"floor": canaries[handle]}, "style": f"{canaries[handle]} style"}
        await set_account_memory(db, account_id, document)
    return visitor


async def _account_ids(server: Server, handles: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for handle in handles:
        body = await server.client().raw(
            "query($h: String!) { account(handle: $h) { id } }", {"h": handle}
        )
        if body.get("data") and body["data"].get("account"):
            found[handle] = body["data"]["account"]["id"]
    return found


@VISITORS
async def test_the_hosts_account_memory_seeds_the_host_branch(
    server: Server, db: Db, make_visitor: VisitorFactory
) -> None:
    visitor = await _seed_memories(server, db, make_visitor)

    opened = await open_room(visitor, HOST)

    memory = await room_memory(db, opened["room"]["id"])
    assert HOST_CANARY in json.dumps(memory.get("host"))


@pytest.mark.parametrize("make_visitor", [_account, _acting], ids=["account", "acting-as-account"])
async def test_the_visitors_account_memory_never_enters_the_room(
    server: Server, db: Db, make_visitor: VisitorFactory
) -> None:
    visitor = await _seed_memories(server, db, make_visitor)

    opened = await open_room(visitor, HOST)

    dump = json.dumps(await room_memory(db, opened["room"]["id"]))
    assert HOST_CANARY in dump  # the room was seeded at all
    assert VISITOR_CANARY not in dump
    assert MANAGER_CANARY not in dump


# --- who may read what -------------------------------------------------------------------


async def _other_guest(server: Server) -> Client:
    other = server.client()
    await open_room(other, HOST)  # a guest with rooms of its own
    return other


async def _other_account(server: Server) -> Client:
    other = server.client()
    await account_client(other, "outsider", "Out Sider")
    return other


async def _anonymous(server: Server) -> Client:
    return server.client()


@pytest.mark.parametrize(
    "make_reader",
    [_other_guest, _other_account, _anonymous],
    ids=["other-guest", "other-account", "anonymous"],
)
async def test_a_room_is_not_found_for_anyone_without_a_seat(
    server: Server, make_reader: Callable[[Server], Awaitable[Client]]
) -> None:
    await _host(server)
    guest = server.client()
    opened = await open_room(guest, HOST)
    reader = await make_reader(server)

    error = await only_error(reader, ROOM, {"id": opened["room"]["id"]})

    assert error["extensions"]["code"] == "NOT_FOUND"
    assert (
        error["message"] == (await only_error(reader, ROOM, {"id": str(uuid.uuid4())}))["message"]
    )


async def test_a_malformed_room_id_is_bad_user_input(server: Server) -> None:
    await _host(server)
    guest = server.client()
    await open_room(guest, HOST)

    error = await only_error(guest, ROOM, {"id": "not-a-room"})

    assert error["extensions"]["code"] == "BAD_USER_INPUT"


PANE = """
query($id: ID!, $seat: Seat!) {
  room(id: $id) {
    pane(seat: $seat) {
      seat relationshipLabel
      messages(first: 10) { edges { node { body seat alignment authorKind } } }
    }
  }
}
"""


async def test_the_visitor_cannot_read_the_host_pane(server: Server) -> None:
    host, _ = await _host(server)
    guest = server.client()
    room_id = (await open_room(guest, HOST))["room"]["id"]
    await post(host, room_id, "Private: my floor is 3200.")

    body = await guest.raw(PANE, {"id": room_id, "seat": "HOST"})

    assert [e["extensions"]["code"] for e in body["errors"]] == ["FORBIDDEN"]
    assert "3200" not in json.dumps(body)


async def test_the_visitor_reads_its_own_pane(server: Server) -> None:
    await _host(server)
    guest = server.client()
    room_id = (await open_room(guest, HOST))["room"]["id"]
    await post(guest, room_id, "Hello there")

    pane = (await guest.query(PANE, {"id": room_id, "seat": "VISITOR"}))["room"]["pane"]

    assert pane["relationshipLabel"] == f"You and {HOST_NAME}'s agent"
    assert [e["node"]["body"] for e in pane["messages"]["edges"]] == ["Hello there"]
    assert pane["messages"]["edges"][0]["node"]["alignment"] == "RIGHT"


async def test_the_host_reads_both_panes(server: Server) -> None:
    host, _ = await _host(server)
    guest = server.client()
    room_id = (await open_room(guest, HOST))["room"]["id"]
    await post(guest, room_id, "Can you do March 12?")
    await post(host, room_id, "Agent: hold out for 3200.")

    visitor_pane = (await host.query(PANE, {"id": room_id, "seat": "VISITOR"}))["room"]["pane"]
    host_pane = (await host.query(PANE, {"id": room_id, "seat": "HOST"}))["room"]["pane"]

    assert [e["node"] for e in visitor_pane["messages"]["edges"]] == [
        {
            "body": "Can you do March 12?",
            "seat": "VISITOR",
            "alignment": "LEFT",
            "authorKind": "PARTICIPANT",
        }
    ]
    assert visitor_pane["relationshipLabel"] == "Your agent and A visitor"
    assert [e["node"]["body"] for e in host_pane["messages"]["edges"]] == [
        "Agent: hold out for 3200."
    ]
    assert host_pane["messages"]["edges"][0]["node"]["alignment"] == "RIGHT"
    assert host_pane["relationshipLabel"] == "You and your agent"


async def test_reader_seat_and_subtitle_follow_the_reader(server: Server, db: Db) -> None:
    host, _ = await _host(server)
    guest = server.client()
    guest_room = (await open_room(guest, HOST))["room"]["id"]
    mara = await _account(server, db)
    mara_room = (await open_room(mara, HOST))["room"]["id"]

    seen = {
        (who, room): await _read_room(client, room)
        for who, client, room in [
            ("guest", guest, guest_room),
            ("host", host, guest_room),
            ("mara", mara, mara_room),
            ("host", host, mara_room),
        ]
    }

    assert {key: (r["readerSeat"], r["subtitle"]) for key, r in seen.items()} == {
        ("guest", guest_room): ("VISITOR", f"{HOST_NAME}'s agent"),
        ("host", guest_room): ("HOST", "Your agent and A visitor"),
        ("mara", mara_room): ("VISITOR", f"{HOST_NAME}'s agent"),
        ("host", mara_room): ("HOST", "Your agent and Mara Ellison"),
    }


async def test_participants_show_guests_and_accounts_the_same_from_each_side(
    server: Server, db: Db
) -> None:
    host, _ = await _host(server)
    guest = server.client()
    guest_room = (await open_room(guest, HOST))["room"]["id"]
    mara = await _account(server, db)
    mara_room = (await open_room(mara, HOST))["room"]["id"]
    host_seat = {
        "seat": "HOST",
        "displayName": HOST_NAME,
        "isGuest": False,
        "account": {"handle": HOST},
    }

    for reader in (guest, host):
        assert _by_seat(await _read_room(reader, guest_room)) == {
            "HOST": host_seat,
            "VISITOR": {
                "seat": "VISITOR",
                "displayName": "A visitor",
                "isGuest": True,
                "account": None,
            },
        }
    for reader in (mara, host):
        assert _by_seat(await _read_room(reader, mara_room)) == {
            "HOST": host_seat,
            "VISITOR": {
                "seat": "VISITOR",
                "displayName": "Mara Ellison",
                "isGuest": False,
                "account": {"handle": "maraellison"},
            },
        }


# --- the rooms list ----------------------------------------------------------------------


async def test_rooms_lists_exactly_the_readers_rooms_most_recently_active_first(
    server: Server, db: Db
) -> None:
    host, _ = await _host(server)
    home = (await host.query("{ me { homeRoom { id } } }"))["me"]["homeRoom"]["id"]
    guests = [server.client() for _ in range(3)]
    opened = [(await open_room(g, HOST))["room"]["id"] for g in guests]
    other_host = server.client()
    await account_client(other_host, "otherhost", "Other Host")
    elsewhere = await open_room(guests[0], "otherhost")  # guest 0 also visits someone else
    await post(guests[0], opened[0], "first room comes back to life")
    await post(guests[2], opened[2], "third room, newest activity")

    host_rooms = await room_ids(host)
    guest_rooms = await room_ids(guests[0])

    assert host_rooms == [opened[2], opened[0], opened[1], home]
    assert guest_rooms == [opened[0], elsewhere["room"]["id"]]
    assert elsewhere["room"]["id"] not in host_rooms
    assert (await host.query(ROOMS, {"first": 100}))["rooms"]["totalCount"] == 4


async def test_an_anonymous_reader_has_no_rooms(server: Server) -> None:
    await _host(server)
    await open_room(server.client(), HOST)

    assert await room_ids(server.client()) == []


async def _pages(client: Client, first: int) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        page = (await client.query(ROOMS, {"first": first, "after": after}))["rooms"]
        pages.append(page)
        if not page["pageInfo"]["hasNextPage"]:
            return pages
        assert len(pages) < 20, "paging does not end"
        after = page["pageInfo"]["endCursor"]


async def _host_with_rooms(server: Server, deal_rooms: int) -> Client:
    host, _ = await _host(server)
    for _ in range(deal_rooms):
        guest = server.client()
        room_id = (await open_room(guest, HOST))["room"]["id"]
        await post(guest, room_id, "hello")
    return host


async def test_rooms_pages_through_every_room_without_duplicates_or_gaps(server: Server) -> None:
    host = await _host_with_rooms(server, 7)
    everything = await room_ids(host)
    assert len(everything) == 8  # seven deal rooms and the home room

    pages = await _pages(host, 3)

    assert [len(p["edges"]) for p in pages] == [3, 3, 2]
    assert [p["pageInfo"]["hasNextPage"] for p in pages] == [True, True, False]
    assert [e["node"]["id"] for p in pages for e in p["edges"]] == everything
    assert all(p["pageInfo"]["endCursor"] == p["edges"][-1]["cursor"] for p in pages)


async def test_a_last_page_that_is_exactly_full_has_no_next_page(server: Server) -> None:
    host = await _host_with_rooms(server, 7)  # eight rooms with the home room

    pages = await _pages(host, 4)

    assert [len(p["edges"]) for p in pages] == [4, 4]
    assert [p["pageInfo"]["hasNextPage"] for p in pages] == [True, False]


async def test_rooms_paging_holds_when_rooms_share_an_activity_time(server: Server, db: Db) -> None:
    host, host_id = await _host(server)
    same_moment = server.clock.now()
    for n in range(6):
        room = Room(
            id=uuid.uuid4(),
            kind="deal",
            mode="live",
            host_account_id=uuid.UUID(host_id),
            title=f"Tied {n}",
            memory={},
            created_at=same_moment,
            last_activity_at=same_moment,
        )
        await db.add(room)
        await db.add(Participant(room_id=room.id, key="host", account_id=uuid.UUID(host_id)))
    await db.commit()
    everything = await room_ids(host)
    assert len(everything) == 7

    pages = await _pages(host, 2)

    paged = [e["node"]["id"] for p in pages for e in p["edges"]]
    assert paged == everything
    assert len(set(paged)) == 7


@pytest.mark.parametrize(
    "cursor",
    ["garbage!!", "ZTo1", "cjpub3QtYS1kYXRlfHh5eg"],
    ids=["not-base64", "event-cursor", "room-prefix-bad-body"],
)
async def test_a_bad_rooms_cursor_is_bad_user_input(server: Server, cursor: str) -> None:
    host, _ = await _host(server)

    error = await only_error(host, ROOMS, {"first": 5, "after": cursor})

    assert error["extensions"]["code"] == "BAD_USER_INPUT"


async def test_an_empty_rooms_cursor_is_bad_user_input(server: Server) -> None:
    """ "" is no cursor this server issued; a pane's messages(after: "") already rejects it.
    Taken as "no cursor", the first page comes back claiming hasPreviousPage."""
    host, _ = await _host(server)

    body = await host.raw('{ rooms(first: 5, after: "") { pageInfo { hasPreviousPage } } }')

    assert [e["extensions"]["code"] for e in body.get("errors") or []] == ["BAD_USER_INPUT"], body


@pytest.mark.parametrize("first", [0, -1, 101])
async def test_rooms_first_out_of_range_is_bad_user_input(server: Server, first: int) -> None:
    host, _ = await _host(server)

    error = await only_error(host, ROOMS, {"first": first})

    assert error["extensions"]["code"] == "BAD_USER_INPUT"


# --- loginRequired (seed 000 "The login gate lives in the mechanism") -------------------


LOGIN_REQUIRED = "query($id: ID!) { room(id: $id) { loginRequired } }"


async def _login_required(client: Client, room_id: str) -> bool:
    value: bool = (await client.query(LOGIN_REQUIRED, {"id": room_id}))["room"]["loginRequired"]
    return value


async def test_login_required_is_false_by_default(server: Server) -> None:
    host, _ = await _host(server)
    guest = server.client()
    opened = await open_room(guest, HOST)

    assert opened["room"]["loginRequired"] is False
    assert await _login_required(guest, opened["room"]["id"]) is False
    assert await _login_required(host, opened["room"]["id"]) is False


async def test_login_required_is_true_for_a_guest_with_a_held_effect(
    server: Server, db: Db
) -> None:
    await _host(server)
    guest = server.client()
    room_id = (await open_room(guest, HOST))["room"]["id"]
    await hold_effect(db, room_id)

    listed = await guest.query("{ rooms(first: 5) { edges { node { id loginRequired } } } }")

    assert await _login_required(guest, room_id) is True
    assert listed["rooms"]["edges"] == [{"node": {"id": room_id, "loginRequired": True}}]


async def test_login_required_is_false_in_the_hosts_view(server: Server, db: Db) -> None:
    host, _ = await _host(server)
    guest = server.client()
    room_id = (await open_room(guest, HOST))["room"]["id"]
    await hold_effect(db, room_id)

    assert await _login_required(host, room_id) is False
    assert await _login_required(guest, room_id) is True


async def test_login_required_is_false_once_held_effects_are_replayed(
    server: Server, db: Db
) -> None:
    await _host(server)
    guest = server.client()
    room_id = (await open_room(guest, HOST))["room"]["id"]
    await hold_effect(db, room_id, status="replayed")

    assert await _login_required(guest, room_id) is False


async def test_login_required_is_false_for_a_signed_in_visitor(server: Server, db: Db) -> None:
    await _host(server)
    mara = await _account(server, db)
    room_id = (await open_room(mara, HOST))["room"]["id"]
    await hold_effect(db, room_id)

    assert await _login_required(mara, room_id) is False
