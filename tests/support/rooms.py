"""Helpers for the e2e auth and room tests: raw HTTP (to see Set-Cookie), direct row
arrangement through the ``db`` fixture, and the reads those tests share.

Every helper that touches ``db`` ends its transaction before returning: on SQLite the
server and the fixture share one connection, so an open fixture transaction would stall it.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from http.cookies import Morsel, SimpleCookie
from typing import Any

import httpx
from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName
from dealroom.domain.passwords import OWASP_MINIMUM
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AccountMemory, Participant, PendingEffect, Room
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.identity import Identity, new_guest_key
from dealroom.services.accounts.passwords import passwords_for
from dealroom.services.accounts.service import grant_manager
from dealroom.services.clock import Clock
from dealroom.services.rooms import service as rooms
from dealroom.services.turns.queue import new_run
from tests.support.clock import ManualClock
from tests.support.graphql import Client, sign_up

PASSWORD = "correct horse battery"

ME = "{ me { id handle displayName acting signedInAs { id handle } } }"

ROOM_FIELDS = """
  id kind mode title readerSeat subtitle loginRequired
  participants { seat displayName isGuest account { handle } }
"""
ROOM = "query($id: ID!) { room(id: $id) {" + ROOM_FIELDS + "} }"
ROOMS = """
query($first: Int!, $after: String) {
  rooms(first: $first, after: $after) {
    totalCount
    edges { cursor node { id title kind } }
    pageInfo { hasNextPage endCursor }
  }
}
"""
OPEN_ROOM_FULL = (
    "mutation($handle: String!, $new: Boolean! = false) {"
    " openVisitorRoom(handle: $handle, newConversation: $new) {"
    " guestKey created room {" + ROOM_FIELDS + "} } }"
)


async def post_raw(
    client: Client, query: str, variables: dict[str, Any] | None = None
) -> httpx.Response:
    """A GraphQL POST whose whole HTTP response (headers included) the test inspects."""
    response = await client.http.post(
        "/graphql", json={"query": query, "variables": variables or {}}, headers=client.headers
    )
    assert response.status_code == 200, response.text
    return response


def set_cookies(response: httpx.Response) -> dict[str, Morsel[str]]:
    """The cookies a response sets, by name, with their attributes."""
    found: dict[str, Morsel[str]] = {}
    for header in response.headers.get_list("set-cookie"):
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        found.update(jar)
    return found


def errors_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    errors: list[dict[str, Any]] = body.get("errors") or []
    assert errors, f"expected errors, got {body}"
    return errors


async def only_error(client: Client, query: str, variables: dict[str, Any] | None = None) -> Any:
    """The single error a request answers with (its message and extensions)."""
    errors = errors_of(await client.raw(query, variables))
    assert len(errors) == 1, errors
    return errors[0]


async def sign_up_as(
    client: Client, handle: str, name: str, *, email: str | None = None
) -> dict[str, Any]:
    """signUp with explicit fields; returns the payload (the client keeps only the cookie)."""
    data = await client.query(
        "mutation($input: SignUpInput!) { signUp(input: $input) { token account { id handle } } }",
        {
            "input": {
                "email": email or f"{handle}@example.com",
                "password": PASSWORD,
                "handle": handle,
                "displayName": name,
            }
        },
    )
    payload: dict[str, Any] = data["signUp"]
    return payload


async def account_client(client: Client, handle: str, name: str) -> str:
    """Sign ``client`` up (Bearer from then on); returns the account id."""
    payload = await sign_up(client, handle, name)
    account_id: str = payload["account"]["id"]
    return account_id


async def grant(db: Db, manager: str, managed: str) -> None:
    await grant_manager(db, manager_handle=manager, managed_handle=managed)
    await db.commit()


async def set_account_memory(db: Db, account_id: str, document: dict[str, Any]) -> None:
    await db.execute(
        update(AccountMemory)
        .where(AccountMemory.account_id == uuid.UUID(account_id))
        .values(document=document, version=AccountMemory.version + 1)
    )
    await db.commit()


async def room_memory(db: Db, room_id: str) -> dict[str, Any]:
    try:
        memory = await db.scalar(select(Room.memory).where(Room.id == uuid.UUID(room_id)))
    finally:
        await db.rollback()
    assert memory is not None, f"no room {room_id}"
    return dict(memory)


async def count_rows(db: Db, model: type[Any], *where: ColumnElement[bool]) -> int:
    try:
        statement = select(func.count()).select_from(model)
        if where:
            statement = statement.where(*where)
        return int(await db.scalar(statement) or 0)
    finally:
        await db.rollback()


async def hold_effect(db: Db, room_id: str, *, status: str = "held") -> None:
    """A pending effect waiting on the guest's sign-in (seed 000 "The login gate")."""
    await db.add(
        PendingEffect(
            room_id=uuid.UUID(room_id),
            seq=1,
            kind="push",
            payload={"substance": "The host can do the 12th."},
            status=status,
        )
    )
    await db.commit()


async def room_ids(client: Client, first: int = 100) -> list[str]:
    data = await client.query(ROOMS, {"first": first})
    return [edge["node"]["id"] for edge in data["rooms"]["edges"]]


async def guest_room_in_process(
    engine: AsyncEngine, clock: Clock, handle: str
) -> tuple[Identity, rooms.OpenedRoom]:
    """A host ``handle`` and a guest's deal room with it (no welcome), through the services
    and no server: for tests that call a service directly."""
    db = Db(create_sessionmaker(engine))
    try:
        await accounts.sign_up(
            db,
            clock,
            passwords_for(OWASP_MINIMUM),
            email=f"{handle}@example.com",
            password=PASSWORD,
            handle=handle,
            display_name=handle.title(),
            ttl_days=1,
        )
        guest = Identity(signed_in=None, account=None, guest_key=new_guest_key())
        opened = await rooms.open_visitor_room(
            db, clock, guest, handle=handle, new_conversation=False, greet=False
        )
        await db.commit()
    finally:
        await db.close()
    return guest, opened


async def guest_pane(engine: AsyncEngine, clock: Clock, handle: str) -> Participant:
    """The guest's pane of a new room with host ``handle`` (``guest_room_in_process``)."""
    _, opened = await guest_room_in_process(engine, clock, handle)
    db = Db(create_sessionmaker(engine))
    try:
        pane = await db.scalar(
            select(Participant).where(
                Participant.room_id == opened.room.id, Participant.key != "host"
            )
        )
        assert pane is not None
        return pane
    finally:
        await db.close()


async def queued_runs(
    engine: AsyncEngine, clock: ManualClock, handle: str, *runs: AgentName
) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """A guest's pane with ``runs`` queued in it, oldest first; returns the pane and them."""
    pane = await guest_pane(engine, clock, handle)
    db = Db(create_sessionmaker(engine))
    try:
        rows = []
        for agent in runs:
            rows.append(
                new_run(room_id=pane.room_id, participant_id=pane.id, agent=agent, now=clock.now())
            )
            clock.advance(timedelta(seconds=1))
        await db.add(*rows)
        await db.commit()
        return pane.id, [row.id for row in rows]
    finally:
        await db.close()
