"""Operators search rooms (host, visitor, stage, flag level, spend, last activity), offers
(stage, fee) and accounts (handle prefix, email), paged newest first; bad filters are coded
and bounded; nobody else searches. State is inserted directly (``tests/support/ops_rows``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from dealroom.persistence.db import Db
from dealroom.services.accounts.service import set_operator
from tests.conftest import Server
from tests.support.graphql import Client, sign_up
from tests.support.ops_rows import RoomSpec, add_accounts, add_rooms
from tests.support.partners import create_key, key_client, make_operator
from tests.support.statements import heard

ROOMS = """
query($search: OpsRoomSearch, $first: Int! = 50, $after: String) {
  opsSearchRooms(search: $search, first: $first, after: $after) {
    nodes { id hostHandle stage flagCount totalSpend { priceUsd } } hasNextPage endCursor
  }
}
"""
OFFERS = """
query($search: OpsOfferSearch, $first: Int! = 50, $after: String) {
  opsSearchOffers(search: $search, first: $first, after: $after) {
    nodes { id roomId status stage fee currency } hasNextPage endCursor
  }
}
"""
ACCOUNTS = """
query($query: String!, $first: Int! = 50, $after: String) {
  opsSearchAccounts(query: $query, first: $first, after: $after) {
    nodes { handle displayName email isOperator } hasNextPage endCursor
  }
}
"""


@dataclass
class World:
    r1: str
    r2: str
    r3: str
    r4: str
    fillers: list[str]


async def world(server: Server) -> World:
    now = server.clock.now()
    ids = await add_accounts(
        server.engine,
        [
            ("alpha", "Alpha Host", "alpha@host.example"),
            ("beta", "Beta Host", None),
            ("vera", "Vera Brand", "vera@brand.example"),
            ("victor", "Victor Stone", "victor@x.example"),
            ("v_x", "Underscore", None),
        ],
        now - timedelta(days=30),
    )
    alpha, beta, vera, victor = ids["alpha"], ids["beta"], ids["vera"], ids["victor"]
    specs = [
        RoomSpec(
            alpha,
            vera,
            now - timedelta(hours=1),
            ("high",),
            (Decimal("1.5"),),
            "ACCEPTED",
            fee="5000.00",
        ),
        RoomSpec(
            alpha,
            victor,
            now - timedelta(hours=2),
            ("low",),
            (Decimal("0.1"),),
            "APPROVED",
            fee="800.00",
        ),
        RoomSpec(
            beta,
            vera,
            now - timedelta(hours=3),
            (),
            (),
            "APPROVED",
            brand_approved=True,
            fee="12000.00",
            currency="EUR",
        ),
        RoomSpec(beta, None, now - timedelta(days=10), (), (Decimal("20"),)),
    ]
    fillers = [RoomSpec(alpha, None, now - timedelta(days=1, minutes=i)) for i in range(5)]
    await add_rooms(server.engine, specs + fillers)
    r1, r2, r3, r4 = (str(s.id) for s in specs)
    return World(r1, r2, r3, r4, [str(f.id) for f in fillers])


async def found(client: Client, search: dict[str, Any], first: int = 50) -> list[str]:
    """Every room the search finds, paging through with ``first``."""
    ids: list[str] = []
    after: str | None = None
    while True:
        page = (await client.query(ROOMS, {"search": search, "first": first, "after": after}))[
            "opsSearchRooms"
        ]
        ids.extend(n["id"] for n in page["nodes"])
        if not page["hasNextPage"]:
            return ids
        after = page["endCursor"]


async def test_rooms_are_found_by_each_filter_newest_activity_first(server: Server, db: Db) -> None:
    w = await world(server)
    operator = await make_operator(db, server.client(), "opsjane")
    now = server.clock.now()
    alpha = [w.r1, w.r2, *w.fillers]
    assert await found(operator, {"hostHandle": "Alpha"}) == alpha
    assert await found(operator, {"hostHandle": "alpha"}, first=2) == alpha  # paged
    for visitor in ("VERA BRAND", "vera@brand.example", "vera", " Vera Brand "):
        assert await found(operator, {"visitor": visitor}) == [w.r1, w.r3], visitor
    assert await found(operator, {"visitor": "Vera"}) == [w.r1, w.r3]  # the handle, whole
    assert await found(operator, {"visitor": "Vera B"}) == []  # no part of a name
    assert await found(operator, {"visitor": "alpha"}) == []  # a host is no visitor
    assert await found(operator, {"stage": "BOOKED_AWAITING_PAYMENT"}) == [w.r1]
    assert await found(operator, {"stage": "BRAND_ACKED_AWAITING_TALENT"}) == [w.r3]
    assert await found(operator, {"flagLevel": "HIGH"}) == [w.r1]
    assert await found(operator, {"flagLevel": "low"}) == [w.r2]
    assert await found(operator, {"minSpendUsd": "1"}) == [w.r1, w.r4]
    assert await found(operator, {"minSpendUsd": "1", "maxSpendUsd": "2"}) == [w.r1]
    assert await found(operator, {"hostHandle": "alpha", "maxSpendUsd": "0.5"}) == [
        w.r2,
        *w.fillers,
    ]
    window = {
        "activeFrom": (now - timedelta(hours=4)).isoformat(),
        "activeBefore": (now - timedelta(minutes=90)).isoformat(),
    }
    assert await found(operator, window) == [w.r2, w.r3]
    naive = {"activeFrom": (now - timedelta(hours=4)).replace(tzinfo=None).isoformat()}
    assert (await found(operator, naive | {"hostHandle": "beta"})) == [w.r3]
    assert await found(operator, {"hostHandle": "alpha", "visitor": "victor@x.example"}) == [w.r2]
    rooms = (await operator.query(ROOMS, {"search": {"hostHandle": "alpha"}, "first": 1}))[
        "opsSearchRooms"
    ]["nodes"]
    assert rooms == [
        {
            "id": w.r1,
            "hostHandle": "alpha",
            "stage": "BOOKED_AWAITING_PAYMENT",
            "flagCount": 1,
            "totalSpend": {"priceUsd": "1.500000"},
        }
    ]


async def test_offers_are_found_by_stage_and_fee(server: Server, db: Db) -> None:
    w = await world(server)
    operator = await make_operator(db, server.client(), "opsjane")

    async def offers(search: dict[str, Any]) -> list[tuple[str, str | None]]:
        nodes = (await operator.query(OFFERS, {"search": search}))["opsSearchOffers"]["nodes"]
        return [(n["roomId"], n["fee"]) for n in nodes]

    assert await offers({}) == [(w.r1, "5000.00"), (w.r2, "800.00"), (w.r3, "12000.00")]
    booked_or_written = {"stages": ["BOOKED_AWAITING_PAYMENT", "WRITTEN_AWAITING_BRAND"]}
    assert await offers(booked_or_written) == [(w.r1, "5000.00"), (w.r2, "800.00")]
    assert await offers({"stages": ["BRAND_ACKED_AWAITING_TALENT"]}) == [(w.r3, "12000.00")]
    assert await offers({"minFee": "1000"}) == [(w.r1, "5000.00"), (w.r3, "12000.00")]
    assert await offers({"minFee": "1000", "maxFee": "6000"}) == [(w.r1, "5000.00")]
    assert await offers({"currency": "eur"}) == [(w.r3, "12000.00")]
    page = (await operator.query(OFFERS, {"first": 2}))["opsSearchOffers"]
    rest = await operator.query(OFFERS, {"first": 2, "after": page["endCursor"]})
    assert page["hasNextPage"]
    assert [n["roomId"] for n in rest["opsSearchOffers"]["nodes"]] == [w.r3]


async def test_accounts_are_found_by_handle_prefix_or_email(server: Server, db: Db) -> None:
    await world(server)
    operator = await make_operator(db, server.client(), "opsjane")

    async def accounts(query: str, first: int = 50) -> list[str]:
        data = await operator.query(ACCOUNTS, {"query": query, "first": first})
        return [n["handle"] for n in data["opsSearchAccounts"]["nodes"]]

    assert await accounts("v") == ["v_x", "victor", "vera"]  # newest first
    assert await accounts("VE") == ["vera"]
    assert await accounts("v_") == ["v_x"]  # an underscore is itself, not a wildcard
    assert await accounts("v%") == []
    assert await accounts("Vera@Brand.example") == ["vera"]
    assert await accounts("vera@") == []  # an email matches whole
    hit = (await operator.query(ACCOUNTS, {"query": "alpha"}))["opsSearchAccounts"]["nodes"]
    assert hit == [
        {
            "handle": "alpha",
            "displayName": "Alpha Host",
            "email": "alpha@host.example",
            "isOperator": False,
        }
    ]
    page = (await operator.query(ACCOUNTS, {"query": "v", "first": 2}))["opsSearchAccounts"]
    assert page["hasNextPage"]
    rest = await operator.query(ACCOUNTS, {"query": "v", "first": 2, "after": page["endCursor"]})
    assert [n["handle"] for n in rest["opsSearchAccounts"]["nodes"]] == ["vera"]


BAD_ROOMS: list[tuple[dict[str, Any], str]] = [
    ({"minSpendUsd": "lots"}, "minSpendUsd"),
    ({"maxSpendUsd": "1e999999"}, "maxSpendUsd"),
    ({"minSpendUsd": "-1"}, "minSpendUsd"),
    ({"minSpendUsd": "NaN"}, "minSpendUsd"),
    ({"minSpendUsd": "9" * 400}, "minSpendUsd"),
    ({"minSpendUsd": "5", "maxSpendUsd": "1"}, "spend"),
    ({"flagLevel": "urgent"}, "flagLevel"),
    ({"visitor": "x" * 5000}, "visitor"),
    ({"hostHandle": "h" * 33}, "hostHandle"),
    ({"activeFrom": "2026-01-02T00:00:00Z", "activeBefore": "2026-01-01T00:00:00Z"}, "activeFrom"),
]


async def test_bad_filters_are_coded_and_nothing_is_searched(server: Server, db: Db) -> None:
    operator = await make_operator(db, server.client(), "opsjane")
    for search, field in BAD_ROOMS:
        body = await operator.raw(ROOMS, {"search": search})
        error = body["errors"][0]
        assert error["extensions"]["code"] == "BAD_USER_INPUT", search
        assert error["extensions"].get("field") == field, (search, error)
    for variables in ({"search": {}, "first": 0}, {"search": {}, "first": 101}):
        assert await operator.error_codes(ROOMS, variables) == ["BAD_USER_INPUT"]
    assert await operator.error_codes(ROOMS, {"after": "not-a-cursor"}) == ["BAD_USER_INPUT"]
    assert await operator.error_codes(ROOMS, {"search": {"activeFrom": "yesterday"}}) == [
        "BAD_USER_INPUT"
    ]
    bad_offers: list[dict[str, Any]] = [
        {"stages": ["NO_WRITTEN_OFFER"]},
        {"stages": ["COMPLETED"] * 11},
        {"minFee": "ten"},
        {"minFee": "10", "maxFee": "1"},
        {"currency": "dollars"},
    ]
    for search in bad_offers:
        assert await operator.error_codes(OFFERS, {"search": search}) == ["BAD_USER_INPUT"], search
    for query in ("", "   ", "h" * 33, "a@" + "b" * 400):
        assert await operator.error_codes(ACCOUNTS, {"query": query}) == ["BAD_USER_INPUT"], query


async def test_nobody_else_searches(server: Server, db: Db) -> None:
    await world(server)
    someone = server.client()
    await sign_up(someone, "someone")
    operator = await make_operator(db, server.client(), "opsjane")
    offers_only = key_client(server, (await create_key(operator, ["offers:read"]))["key"])
    reader = key_client(server, (await create_key(operator, ["ops:read"]))["key"])
    documents: list[tuple[str, dict[str, Any]]] = [
        (ROOMS, {}),
        (OFFERS, {}),
        (ACCOUNTS, {"query": "v"}),
    ]
    for document, variables in documents:
        # What is refused does not show that it exists, to a key either (scopes K5).
        assert await server.client().error_codes(document, variables) == ["NOT_FOUND"]
        assert await someone.error_codes(document, variables) == ["NOT_FOUND"]
        assert await offers_only.error_codes(document, variables) == ["NOT_FOUND"]
        assert (await reader.query(document, variables)) is not None
    # Each search is an ops read in the trail.
    trail = (await operator.query("{ opsActions(first: 20) { nodes { action } } }"))["opsActions"]
    actions = {n["action"] for n in trail["nodes"]}
    assert {"read:opsSearchRooms", "read:opsSearchOffers", "read:opsSearchAccounts"} <= actions
    # The flag, not the scope, makes an operator (K4).
    await set_operator(db, handle="opsjane", operator=False)
    await db.commit()
    await db.close()
    for document, variables in documents:
        assert await reader.error_codes(document, variables) == ["NOT_FOUND"]
        assert await operator.error_codes(document, variables) == ["NOT_FOUND"]


async def test_a_page_costs_the_same_statements_whatever_its_size(server: Server, db: Db) -> None:
    now = server.clock.now()
    ids = await add_accounts(server.engine, [("host1", "Host One", None)], now)
    await add_rooms(
        server.engine,
        [
            RoomSpec(ids["host1"], None, now - timedelta(minutes=n), ("high",), (Decimal("1"),))
            for n in range(60)
        ],
    )
    operator = await make_operator(db, server.client(), "opsjane")
    search = {"flagLevel": "high", "minSpendUsd": "0.5", "hostHandle": "host1"}
    counts = []
    for first in (5, 50):
        with heard(server.engine, lambda statement, _: statement) as seen:
            data = await operator.query(ROOMS, {"search": search, "first": first})
        assert len(data["opsSearchRooms"]["nodes"]) == first
        counts.append(len([s for s in seen if s.lstrip().upper().startswith(("SELECT", "INSERT"))]))
    # The session, the audit record, the page and its rooms' spend.
    assert counts == [4, 4]


async def test_a_visitor_teammate_is_a_visitor_and_a_hosts_manager_is_not(
    server: Server, db: Db
) -> None:
    from tests.support.team import seat_member

    w = await world(server)
    operator = await make_operator(db, server.client(), "opsjane")
    ids = await add_accounts(
        server.engine,
        [("leelegal", "Lee Legal", None), ("manny", "Manny Ager", None)],
        server.clock.now(),
    )
    await seat_member(db, w.r2, "visitor_2", str(ids["leelegal"]))
    await seat_member(db, w.r2, "host_2", str(ids["manny"]))
    assert await found(operator, {"visitor": "leelegal"}) == [w.r2]
    assert await found(operator, {"visitor": "manny"}) == []  # the host's team is no visitor
