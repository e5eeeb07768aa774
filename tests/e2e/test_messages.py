"""postMessage and pane reading over HTTP: own-pane writes, validation, idempotency, the rate
limit, cursors, sessions, pagination both ways and seed 002 layer 5 alignment."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from dealroom.domain.cursors import parse_event_cursor
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message
from tests.conftest import Server
from tests.support.graphql import POST, Client, GraphQLErrors, open_room, post, sign_up

PANE = """
query($id: ID!, $seat: Seat!, $first: Int, $after: String, $last: Int, $before: String) {
  room(id: $id) {
    readerSeat
    pane(seat: $seat) {
      seat
      messages(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { id body seat alignment cursor authorKind } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
}
"""


@dataclass
class Deal:
    """A host, a guest who opened the host's link, and the deal room between them."""

    host: Client
    guest: Client
    room_id: str


@pytest.fixture
async def deal(server: Server) -> Deal:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    opened = await open_room(guest, "devraman")
    return Deal(host=host, guest=guest, room_id=opened["room"]["id"])


async def message_count(db: Db) -> int:
    """Rows in ``messages``. Ends the unit at once: SQLite has one connection to share."""
    try:
        return int(await db.scalar(select(func.count()).select_from(Message)) or 0)
    finally:
        await db.close()


async def seqs_by_id(db: Db) -> dict[str, int]:
    try:
        rows = (await db.execute(select(Message.id, Message.seq))).all()
        return {str(row.id): int(row.seq) for row in rows}
    finally:
        await db.close()


async def stored_bodies(db: Db) -> list[str]:
    try:
        return [str(b) for b in await db.scalars(select(Message.body).order_by(Message.seq))]
    finally:
        await db.close()


async def post_errors(
    client: Client, room_id: str, body: str, cid: str | None = None, **extra: Any
) -> list[dict[str, Any]]:
    """The errors of a postMessage that must fail (sent as given: an empty ``cid`` stays empty)."""
    input_ = {
        "roomId": room_id,
        "body": body,
        "clientMessageId": uuid.uuid4().hex if cid is None else cid,
        **extra,
    }
    response = await client.raw(POST, {"input": input_})
    assert response.get("errors"), f"expected errors, got {response}"
    errors: list[dict[str, Any]] = response["errors"]
    return errors


def codes(errors: list[dict[str, Any]]) -> list[str]:
    return [e.get("extensions", {}).get("code") for e in errors]


async def read_pane(client: Client, room_id: str, seat: str, **page: Any) -> dict[str, Any]:
    data = await client.query(PANE, {"id": room_id, "seat": seat, **page})
    pane: dict[str, Any] = data["room"]["pane"]
    return pane


def bodies(pane: dict[str, Any]) -> list[str]:
    return [edge["node"]["body"] for edge in pane["messages"]["edges"]]


async def post_many(client: Client, room_id: str, count: int) -> list[dict[str, Any]]:
    return [await post(client, room_id, f"m{i:02d}") for i in range(count)]


# --- own pane only -------------------------------------------------------------------------


async def test_a_guest_post_lands_in_the_visitor_pane(deal: Deal) -> None:
    message = await post(deal.guest, deal.room_id, "hello from the guest")

    assert message["seat"] == "VISITOR"
    assert bodies(await read_pane(deal.host, deal.room_id, "VISITOR")) == ["hello from the guest"]
    assert bodies(await read_pane(deal.host, deal.room_id, "HOST")) == []


async def test_a_host_post_in_its_deal_room_lands_in_the_host_pane(deal: Deal) -> None:
    message = await post(deal.host, deal.room_id, "a note to my agent")

    assert message["seat"] == "HOST"
    assert bodies(await read_pane(deal.host, deal.room_id, "HOST")) == ["a note to my agent"]
    assert bodies(await read_pane(deal.host, deal.room_id, "VISITOR")) == []
    assert bodies(await read_pane(deal.guest, deal.room_id, "VISITOR")) == []


async def test_the_host_may_not_write_into_the_visitor_pane(deal: Deal, db: Db) -> None:
    errors = await post_errors(deal.host, deal.room_id, "spoofed", seat="VISITOR")

    assert codes(errors) == ["FORBIDDEN"]
    assert await message_count(db) == 0


async def test_a_visitor_may_not_write_into_the_host_pane(deal: Deal, db: Db) -> None:
    errors = await post_errors(deal.guest, deal.room_id, "spoofed", seat="HOST")

    assert codes(errors) == ["FORBIDDEN"]
    assert await message_count(db) == 0


async def test_a_visitor_may_not_read_the_host_pane(deal: Deal) -> None:
    with pytest.raises(GraphQLErrors) as failure:
        await read_pane(deal.guest, deal.room_id, "HOST")

    assert failure.value.codes == ["FORBIDDEN"]


async def test_in_a_demo_room_the_hosts_default_seat_is_the_visitor_pane(server: Server) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    opened = await open_room(host, "devraman")
    assert opened["room"]["mode"] == "DEMO"
    assert opened["room"]["readerSeat"] == "VISITOR"

    message = await post(host, opened["room"]["id"], "previewing my agent")

    assert message["seat"] == "VISITOR"
    assert bodies(await read_pane(host, opened["room"]["id"], "VISITOR")) == ["previewing my agent"]


async def test_in_a_demo_room_the_host_may_also_write_the_host_pane(server: Server) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    room_id = (await open_room(host, "devraman"))["room"]["id"]

    message = await post(host, room_id, "instructions", seat="HOST")

    assert message["seat"] == "HOST"
    assert bodies(await read_pane(host, room_id, "HOST")) == ["instructions"]
    assert bodies(await read_pane(host, room_id, "VISITOR")) == []


# --- body --------------------------------------------------------------------------------


async def test_the_body_is_trimmed(deal: Deal, db: Db) -> None:
    message = await post(deal.guest, deal.room_id, " \n\t hello there \n ")

    assert message["body"] == "hello there"
    assert await stored_bodies(db) == ["hello there"]


@pytest.mark.parametrize("body", ["", " ", " \n\t \r\n "], ids=["empty", "space", "whitespace"])
async def test_a_blank_body_is_rejected_and_nothing_stored(deal: Deal, db: Db, body: str) -> None:
    errors = await post_errors(deal.guest, deal.room_id, body)

    assert codes(errors) == ["BAD_USER_INPUT"]
    assert await message_count(db) == 0


async def test_a_body_of_8001_characters_is_rejected_and_nothing_stored(deal: Deal, db: Db) -> None:
    errors = await post_errors(deal.guest, deal.room_id, "x" * 8001)

    assert codes(errors) == ["BAD_USER_INPUT"]
    assert await message_count(db) == 0


async def test_a_body_of_exactly_8000_characters_is_accepted(deal: Deal, db: Db) -> None:
    message = await post(deal.guest, deal.room_id, "  " + "x" * 8000 + "  ")

    assert len(message["body"]) == 8000
    assert [len(b) for b in await stored_bodies(db)] == [8000]


# --- idempotency -------------------------------------------------------------------------


async def test_a_retry_with_the_same_client_message_id_returns_the_original(
    deal: Deal, db: Db
) -> None:
    first = await post(deal.guest, deal.room_id, "once", "cid-1")
    retry = await post(deal.guest, deal.room_id, "once", "cid-1")

    assert (retry["id"], retry["cursor"]) == (first["id"], first["cursor"])
    assert await message_count(db) == 1


async def test_a_retry_with_a_different_body_still_returns_the_original(deal: Deal, db: Db) -> None:
    first = await post(deal.guest, deal.room_id, "original", "cid-1")
    retry = await post(deal.guest, deal.room_id, "edited", "cid-1")

    assert (retry["id"], retry["body"]) == (first["id"], "original")
    assert await stored_bodies(db) == ["original"]


async def test_concurrent_identical_posts_store_one_message(deal: Deal, db: Db) -> None:
    # A few rounds, each racing 5 identical posts: one round may happen not to overlap.
    for round_no in range(4):
        results = await asyncio.gather(
            *(post(deal.guest, deal.room_id, "racing", f"cid-race-{round_no}") for _ in range(5))
        )

        assert len({(m["id"], m["cursor"]) for m in results}) == 1, results
        assert await message_count(db) == round_no + 1


async def test_the_same_client_message_id_in_another_pane_stores_a_new_message(
    deal: Deal, db: Db
) -> None:
    visitor_message = await post(deal.guest, deal.room_id, "from the visitor", "cid-1")
    host_message = await post(deal.host, deal.room_id, "from the host", "cid-1")

    assert host_message["id"] != visitor_message["id"]
    assert host_message["body"] == "from the host"
    assert await message_count(db) == 2


async def test_the_same_client_message_id_in_another_room_stores_a_new_message(
    deal: Deal, db: Db
) -> None:
    first = await post(deal.guest, deal.room_id, "first room", "cid-1")
    other_room = (await open_room(deal.guest, "devraman", new=True))["room"]["id"]
    assert other_room != deal.room_id

    second = await post(deal.guest, other_room, "second room", "cid-1")

    assert second["id"] != first["id"]
    assert second["body"] == "second room"
    assert await message_count(db) == 2


@pytest.mark.parametrize(
    "cid",
    ["", "has space", "x" * 65, "naïve", "semi;colon", "slash/es"],
    ids=["empty", "space", "65-chars", "non-ascii", "semicolon", "slash"],
)
async def test_a_malformed_client_message_id_is_rejected(deal: Deal, db: Db, cid: str) -> None:
    errors = await post_errors(deal.guest, deal.room_id, "hello", cid)

    assert codes(errors) == ["BAD_USER_INPUT"]
    assert await message_count(db) == 0


# --- rate limit --------------------------------------------------------------------------


async def _brand_room(server: Server) -> tuple[Client, str]:
    """A signed-in visitor: a guest would meet the guest message cap (30) first."""
    brand = server.client()
    await sign_up(brand, "acmebrand", "Acme Brand")
    return brand, (await open_room(brand, "devraman"))["room"]["id"]


async def test_posting_past_the_per_minute_limit_is_rate_limited(
    deal: Deal, server: Server, db: Db
) -> None:
    brand, room_id = await _brand_room(server)
    await post_many(brand, room_id, 60)

    errors = await post_errors(brand, room_id, "one too many")

    assert codes(errors) == ["RATE_LIMITED"]
    retry_after = errors[0]["extensions"]["retryAfterSeconds"]
    assert isinstance(retry_after, int)
    assert 1 <= retry_after <= 60
    assert await message_count(db) == 60


async def test_posting_works_again_after_the_rate_limit_window(deal: Deal, server: Server) -> None:
    brand, room_id = await _brand_room(server)
    await post_many(brand, room_id, 60)
    assert codes(await post_errors(brand, room_id, "blocked")) == ["RATE_LIMITED"]

    server.clock.advance(timedelta(minutes=2))

    message = await post(brand, room_id, "back again")
    assert message["body"] == "back again"


# --- cursors -----------------------------------------------------------------------------


async def test_cursors_increase_in_post_order_across_both_panes(deal: Deal) -> None:
    posted = []
    for i in range(6):
        author = deal.guest if i % 2 == 0 else deal.host
        posted.append(await post(author, deal.room_id, f"turn {i}"))

    positions = [parse_event_cursor(m["cursor"]) for m in posted]
    assert {m["seat"] for m in posted} == {"HOST", "VISITOR"}
    assert positions == sorted(set(positions)), "cursors must strictly increase"


async def test_concurrent_posts_from_both_panes_get_distinct_cursors_in_seq_order(
    deal: Deal, db: Db
) -> None:
    posted = await asyncio.gather(
        *(post(deal.guest, deal.room_id, f"visitor {i}") for i in range(20)),
        *(post(deal.host, deal.room_id, f"host {i}") for i in range(20)),
    )

    assert len({m["cursor"] for m in posted}) == 40
    seqs = await seqs_by_id(db)
    assert len(seqs) == 40
    by_cursor = [m["id"] for m in sorted(posted, key=lambda m: parse_event_cursor(m["cursor"]))]
    by_seq = sorted(seqs, key=seqs.__getitem__)
    assert by_cursor == by_seq


# --- sessions ----------------------------------------------------------------------------


async def test_a_post_after_a_31_minute_pause_opens_session_2(deal: Deal, server: Server) -> None:
    first = await post(deal.guest, deal.room_id, "before the pause")
    server.clock.advance(timedelta(minutes=31))

    second = await post(deal.guest, deal.room_id, "after the pause")

    assert (first["sessionNo"], second["sessionNo"]) == (1, 2)


async def test_a_post_after_a_29_minute_pause_stays_in_session_1(
    deal: Deal, server: Server
) -> None:
    await post(deal.guest, deal.room_id, "before the pause")
    server.clock.advance(timedelta(minutes=29))

    second = await post(deal.guest, deal.room_id, "after the pause")

    assert second["sessionNo"] == 1


# --- reading -----------------------------------------------------------------------------


async def test_first_and_after_page_forward_without_gaps_or_duplicates(deal: Deal) -> None:
    posted = await post_many(deal.guest, deal.room_id, 25)
    seen: list[str] = []
    sizes: list[int] = []
    more: list[bool] = []
    first_page_has_previous: bool | None = None
    after: str | None = None
    while True:
        pane = await read_pane(deal.guest, deal.room_id, "VISITOR", first=10, after=after)
        page = pane["messages"]
        seen += [edge["node"]["id"] for edge in page["edges"]]
        sizes.append(len(page["edges"]))
        more.append(page["pageInfo"]["hasNextPage"])
        if after is None:
            first_page_has_previous = page["pageInfo"]["hasPreviousPage"]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
        assert len(sizes) < 5, "paging does not end"

    assert seen == [m["id"] for m in posted]
    assert sizes == [10, 10, 5]
    assert more == [True, True, False]
    assert first_page_has_previous is False


async def test_a_page_ending_at_the_newest_message_has_no_next_page(deal: Deal) -> None:
    await post_many(deal.guest, deal.room_id, 10)

    pane = await read_pane(deal.guest, deal.room_id, "VISITOR", first=10)

    assert len(pane["messages"]["edges"]) == 10
    assert pane["messages"]["pageInfo"]["hasNextPage"] is False


async def test_last_returns_the_newest_messages_oldest_first(deal: Deal) -> None:
    posted = await post_many(deal.guest, deal.room_id, 25)

    pane = await read_pane(deal.guest, deal.room_id, "VISITOR", last=10)

    assert [e["node"]["id"] for e in pane["messages"]["edges"]] == [m["id"] for m in posted[15:]]
    assert pane["messages"]["pageInfo"]["hasPreviousPage"] is True


async def test_last_and_before_walk_backward(deal: Deal) -> None:
    posted = await post_many(deal.guest, deal.room_id, 25)
    pages: list[list[str]] = []
    before: str | None = None
    while True:
        pane = await read_pane(deal.guest, deal.room_id, "VISITOR", last=10, before=before)
        page = pane["messages"]
        pages.append([edge["node"]["id"] for edge in page["edges"]])
        if not page["pageInfo"]["hasPreviousPage"]:
            break
        before = page["pageInfo"]["startCursor"]
        assert len(pages) < 5, "paging does not end"

    ids = [m["id"] for m in posted]
    assert pages == [ids[15:], ids[5:15], ids[:5]]


async def test_first_and_last_together_are_rejected(deal: Deal) -> None:
    await post(deal.guest, deal.room_id, "hello")

    with pytest.raises(GraphQLErrors) as failure:
        await read_pane(deal.guest, deal.room_id, "VISITOR", first=5, last=5)

    assert failure.value.codes == ["BAD_USER_INPUT"]


@pytest.mark.parametrize("argument", ["after", "before"])
@pytest.mark.parametrize("cursor", ["garbage!", "e:1", "cjoxMjM", ""], ids=str)
async def test_a_bad_cursor_is_rejected(deal: Deal, argument: str, cursor: str) -> None:
    await post(deal.guest, deal.room_id, "hello")
    page: dict[str, Any] = {argument: cursor, "first" if argument == "after" else "last": 5}

    with pytest.raises(GraphQLErrors) as failure:
        await read_pane(deal.guest, deal.room_id, "VISITOR", **page)

    assert failure.value.codes == ["BAD_USER_INPUT"]


@pytest.mark.parametrize("argument", ["first", "last"])
@pytest.mark.parametrize("size", [0, 101, -1])
async def test_a_page_size_out_of_range_is_rejected(deal: Deal, argument: str, size: int) -> None:
    with pytest.raises(GraphQLErrors) as failure:
        await read_pane(deal.guest, deal.room_id, "VISITOR", **{argument: size})

    assert failure.value.codes == ["BAD_USER_INPUT"]


async def test_a_page_size_of_100_is_accepted(deal: Deal) -> None:
    await post(deal.guest, deal.room_id, "hello")

    pane = await read_pane(deal.guest, deal.room_id, "VISITOR", first=100)

    assert bodies(pane) == ["hello"]


# --- alignment (seed 002, layer 5) -------------------------------------------------------


def alignment_of(pane: dict[str, Any], message_id: str) -> str:
    [alignment] = [
        e["node"]["alignment"] for e in pane["messages"]["edges"] if e["node"]["id"] == message_id
    ]
    return str(alignment)


async def test_the_visitor_sees_its_own_message_on_the_right(deal: Deal) -> None:
    message = await post(deal.guest, deal.room_id, "my offer")

    pane = await read_pane(deal.guest, deal.room_id, "VISITOR")

    assert message["alignment"] == "RIGHT"
    assert alignment_of(pane, message["id"]) == "RIGHT"


async def test_the_host_sees_the_visitors_message_on_the_left(deal: Deal) -> None:
    message = await post(deal.guest, deal.room_id, "my offer")

    pane = await read_pane(deal.host, deal.room_id, "VISITOR")

    assert alignment_of(pane, message["id"]) == "LEFT"


async def test_the_hosts_own_message_in_its_pane_is_on_the_right(deal: Deal) -> None:
    message = await post(deal.host, deal.room_id, "hold the line at 5k")

    pane = await read_pane(deal.host, deal.room_id, "HOST")

    assert message["alignment"] == "RIGHT"
    assert alignment_of(pane, message["id"]) == "RIGHT"


# --- room ids ----------------------------------------------------------------------------


@pytest.mark.parametrize("room_id", ["not-a-uuid", "", "1234", "'; DROP TABLE rooms; --"])
async def test_posting_to_a_malformed_room_id_is_rejected_and_nothing_stored(
    deal: Deal, db: Db, room_id: str
) -> None:
    errors = await post_errors(deal.guest, room_id, "hello")

    assert codes(errors) == ["BAD_USER_INPUT"]
    assert await message_count(db) == 0


async def test_posting_to_an_unknown_room_is_not_found_and_nothing_stored(
    deal: Deal, db: Db
) -> None:
    errors = await post_errors(deal.guest, str(uuid.uuid4()), "hello")

    assert codes(errors) == ["NOT_FOUND"]
    assert await message_count(db) == 0


async def test_posting_to_another_guests_room_is_not_found_and_nothing_stored(
    deal: Deal, server: Server, db: Db
) -> None:
    intruder = server.client()
    await open_room(intruder, "devraman")

    errors = await post_errors(intruder, deal.room_id, "let me in")

    assert codes(errors) == ["NOT_FOUND"]
    assert await message_count(db) == 0


async def test_reading_another_guests_room_is_not_found(deal: Deal, server: Server) -> None:
    await post(deal.guest, deal.room_id, "private")
    intruder = server.client()
    await open_room(intruder, "devraman")

    with pytest.raises(GraphQLErrors) as failure:
        await read_pane(intruder, deal.room_id, "VISITOR")

    assert failure.value.codes == ["NOT_FOUND"]
    assert "private" not in str(failure.value)


async def test_an_anonymous_post_without_a_room_binding_is_not_found(
    deal: Deal, server: Server, db: Db
) -> None:
    stranger = server.client()

    body = await stranger.raw(
        POST, {"input": {"roomId": deal.room_id, "body": "hi", "clientMessageId": "c1"}}
    )

    assert codes(body["errors"]) == ["NOT_FOUND"]
    assert await message_count(db) == 0
