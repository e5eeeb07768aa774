"""The seeded demo host: created and taught through its home room (the real turn, offline
engine), idempotent, and usable as printed — the host signs in with the printed credentials,
and a brand at the printed link negotiates against the taught rate."""

from __future__ import annotations

from sqlalchemy import func, select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Message
from dealroom.services.rooms import demo
from tests.conftest import Server
from tests.support.gate import sign_up_here
from tests.support.graphql import open_room
from tests.support.offers import OFFER, negotiate_to_offer
from tests.support.turns import Deal

SIGN_IN = """
mutation($input: SignInInput!) { signIn(input: $input) { account { handle homeRoom { id } } } }
"""
HOME_LINES = """
query($id: ID!) { room(id: $id) { pane(seat: HOST) { messages(last: 10) {
  edges { node { body authorKind } } } } } }
"""


async def _seed(server: Server, db: Db) -> demo.DemoHost:
    return await server.seed_demo(db)


async def test_the_demo_host_is_taught_its_rate_and_floor_in_its_home_room(
    server: Server, db: Db
) -> None:
    seeded = await _seed(server, db)

    assert seeded.created
    assert seeded.link == "/z/maya"
    limit = seeded.limits["sponsored_post"]
    assert (str(limit.floor), limit.currency) == ("6000", "USD")
    assert seeded.asks == {"sponsored_post": "8000 USD"}
    host = server.client()
    me = (
        await host.query(SIGN_IN, {"input": {"email": seeded.email, "password": seeded.password}})
    )["signIn"]["account"]
    lines = (await host.query(HOME_LINES, {"id": me["homeRoom"]["id"]}))["room"]["pane"]
    said = [(e["node"]["authorKind"], e["node"]["body"]) for e in lines["messages"]["edges"]]
    assert said[0] == ("PARTICIPANT", demo.RULES)
    assert said[1][0] == "AGENT"  # the agent answered the teaching line: a real turn ran


async def test_seeding_again_reuses_the_demo_host(server: Server, db: Db) -> None:
    await _seed(server, db)

    again = await _seed(server, db)

    assert not again.created
    assert again.limits["sponsored_post"].floor == 6000
    try:
        accounts = await db.scalar(select(func.count()).select_from(Account))
        rules = await db.scalar(
            select(func.count()).select_from(Message).where(Message.body == demo.RULES)
        )
    finally:
        await db.close()
    assert (accounts, rules) == (1, 1)


async def test_a_brand_at_the_demo_link_negotiates_against_the_taught_rate(
    server: Server, db: Db
) -> None:
    seeded = await _seed(server, db)
    visitor = server.client()
    room_id = (await open_room(visitor, seeded.handle))["room"]["id"]
    # A guest's sends are held behind the login gate: the brand signs up with its guest key,
    # which claims this room (the gate itself: tests/e2e/test_login_gate.py, tests/browser).
    await sign_up_here(visitor, "glowco", "Glow Co")

    offer_id = await negotiate_to_offer(server, Deal(server.client(), visitor, "", room_id))

    offer = (await visitor.query(OFFER, {"id": offer_id}))["offer"]
    # A $7,000 bid against an $8,000 ask and a $6,000 floor: the agent counters at the ask.
    assert offer["terms"]["fee"] == {"amount": "8000.00", "currency": "USD"}
    assert offer["stage"] == "WRITTEN_AWAITING_BRAND"
