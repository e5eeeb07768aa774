"""Relay conventions: ``node``/``nodes`` refetch a room, an offer or an account by id with the
same access rules as the type's own query: a visitor never reads a host's private room through
them, and cannot tell it from one that does not exist."""

from __future__ import annotations

import uuid

from tests.conftest import Server
from tests.support.graphql import open_room, sign_up
from tests.support.partners import create_key

HOME = "{ me { homeRoom { id } } }"
NODE = """
query($id: ID!) {
  node(id: $id) { __typename id ... on Room { title } ... on Account { handle } }
}
"""
NODES = "query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }"


async def test_a_host_refetches_its_rooms_and_anyone_a_public_profile(server: Server) -> None:
    host = server.client()
    account_id = (await sign_up(host, "mara", "Mara Ellison"))["account"]["id"]
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]

    room = (await host.query(NODE, {"id": home_id}))["node"]
    profile = (await server.client().query(NODE, {"id": account_id}))["node"]

    assert room["__typename"] == "Room"
    assert room["id"] == home_id
    assert profile == {"__typename": "Account", "id": account_id, "handle": "mara"}


async def test_a_visitor_cannot_fetch_a_hosts_private_room_as_a_node(server: Server) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    visitor = server.client()
    own_room = (await open_room(visitor, "mara"))["room"]["id"]
    other_visitor = server.client()
    others_room = (await open_room(other_visitor, "mara"))["room"]["id"]
    signed_in = server.client()
    await sign_up(signed_in, "brand", "Brand")

    for reader in (visitor, signed_in, server.client()):
        assert (await reader.query(NODE, {"id": home_id}))["node"] is None
    assert (await visitor.query(NODE, {"id": others_room}))["node"] is None
    assert (await visitor.query(NODE, {"id": own_room}))["node"]["id"] == own_room
    # The room query itself answers NOT_FOUND: the same rule, the same outcome.
    assert await visitor.error_codes(
        "query($id: ID!) { room(id: $id) { id } }", {"id": home_id}
    ) == ["NOT_FOUND"]


async def test_nodes_keeps_the_order_asked_with_null_for_what_is_not_readable(
    server: Server,
) -> None:
    host = server.client()
    account_id = (await sign_up(host, "mara", "Mara Ellison"))["account"]["id"]
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    visitor = server.client()
    own_room = (await open_room(visitor, "mara"))["room"]["id"]

    found = (
        await visitor.query(
            NODES, {"ids": [own_room, home_id, str(uuid.uuid4()), "not-an-id", account_id]}
        )
    )["nodes"]

    assert found == [
        {"__typename": "Room", "id": own_room},
        None,
        None,
        None,
        {"__typename": "Account", "id": account_id},
    ]


async def test_nodes_is_bounded(server: Server) -> None:
    ids = [str(uuid.uuid4()) for _ in range(server.state.settings.max_page_size + 1)]

    assert await server.client().error_codes(NODES, {"ids": ids}) == ["BAD_USER_INPUT"]


KEY_PAGE = """
query($first: Int!, $after: String) {
  apiKeyConnection(first: $first, after: $after) {
    edges { cursor node { id name } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}
"""


async def test_api_keys_page_as_a_connection_and_the_old_list_still_answers(
    server: Server,
) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    for name in ("one", "two", "three"):
        await create_key(host, ["offers:read"], name=name)

    first = (await host.query(KEY_PAGE, {"first": 2}))["apiKeyConnection"]
    after = first["pageInfo"]["endCursor"]
    second = (await host.query(KEY_PAGE, {"first": 2, "after": after}))["apiKeyConnection"]
    old = (await host.query("{ apiKeys { name } }"))["apiKeys"]

    names = [e["node"]["name"] for e in first["edges"] + second["edges"]]
    assert names == [k["name"] for k in old]  # same items, same order (newest first)
    assert sorted(names) == ["one", "three", "two"]
    assert first["pageInfo"]["hasNextPage"] is True
    assert first["pageInfo"]["hasPreviousPage"] is False
    assert second["pageInfo"]["hasNextPage"] is False
    assert second["pageInfo"]["hasPreviousPage"] is True
    assert second["pageInfo"]["startCursor"] == second["edges"][0]["cursor"]


async def test_a_cursor_naming_no_key_is_bad_input(server: Server) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")

    codes = await host.error_codes(KEY_PAGE, {"first": 2, "after": "bm9wZQ=="})

    assert codes == ["BAD_USER_INPUT"]


async def test_the_flat_page_fields_are_deprecated_with_a_reason(server: Server) -> None:
    found = await server.client().query(
        """{ __type(name: "OfferConnection") {
             fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }"""
    )

    fields = {f["name"]: f for f in found["__type"]["fields"]}
    assert fields["hasNextPage"]["isDeprecated"] is True
    assert "pageInfo" in fields["hasNextPage"]["deprecationReason"]
    assert fields["pageInfo"]["isDeprecated"] is False
