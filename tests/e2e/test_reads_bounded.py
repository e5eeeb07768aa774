"""A rooms page costs a bounded number of SQL statements, whatever its size.

The host has 50 deal rooms (half with guests, half with signed-in visitors), each with a
message; its pages of 10 and of 50 must run the same, small number of statements.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.conftest import Server
from tests.support.graphql import Client, open_room, post, sign_up

ROOMS = 50
STATEMENT_BUDGET = 12

PAGE = """
query($first: Int!) {
  rooms(first: $first) {
    edges {
      node {
        id title subtitle readerSeat loginRequired
        participants { seat displayName isGuest account { handle } }
        lastMessage { body seat alignment }
      }
    }
    pageInfo { hasNextPage }
  }
}
"""


async def _host_with_rooms(server: Server) -> Client:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    for n in range(ROOMS):
        visitor = server.client()
        if n % 2:
            await sign_up(visitor, f"visitor{n:02d}", f"Visitor {n:02d}")
        opened = await open_room(visitor, "devraman")
        await post(visitor, opened["room"]["id"], f"message {n:02d}")
    return host


async def _page(
    host: Client, first: int, count_statements: Callable[[], Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    with count_statements() as seen:
        data = await host.query(PAGE, {"first": first})
    edges: list[dict[str, Any]] = data["rooms"]["edges"]
    return [edge["node"] for edge in edges], list(seen)


async def test_a_rooms_page_runs_the_same_few_statements_for_10_and_50_rooms(
    server: Server, count_statements: Callable[[], Any]
) -> None:
    host = await _host_with_rooms(server)

    small, small_sql = await _page(host, 10, count_statements)
    large, large_sql = await _page(host, 50, count_statements)

    print(f"\nrooms(first: 10): {len(small_sql)} statements")
    print(f"rooms(first: 50): {len(large_sql)} statements")
    for statement in large_sql:
        print("  " + " ".join(statement.split())[:110])
    # The page really carried what was asked, so the counts are of real work.
    assert len(small) == 10
    assert len(large) == 50
    assert {room["lastMessage"]["body"] for room in large} == {
        f"message {n:02d}" for n in range(ROOMS)
    }
    assert {p["isGuest"] for room in large for p in room["participants"]} == {True, False}
    assert sum(p["account"] is not None for room in large for p in room["participants"]) == 75
    assert len(small_sql) == len(large_sql), "\n".join(large_sql)
    assert len(large_sql) <= STATEMENT_BUDGET, "\n".join(large_sql)
