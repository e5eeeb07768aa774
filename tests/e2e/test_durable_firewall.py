"""Account memory is no way around the private-value firewall (durable D7, D8).

A host's durable document seeds every new deal room's host branch and is merged into open
rooms by AccUpdate, and whatever lands under ``host.public`` reaches every visitor-facing
agent. So a curator write that files a floor under ``public`` (or a limit as free text, which
code would not know as a limit) is refused like the room writer's (D8), and a public leaf that
states a private value never seeds a room (D7) nor is merged into one (D7): it is dropped from
the room and flagged. In each case the floor reaches no visitor-facing request and no pane.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from dealroom.agents.arvist import ArvistOutput, DurableChange
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.jobs.arvist import enqueue_arvist_for_room
from dealroom.persistence.db import Db
from dealroom.persistence.models import AccountMemory, AgentRun, Flag, Room
from dealroom.services.memory import durable as durable_memory
from tests.conftest import Server
from tests.support.graphql import open_room, post
from tests.support.recording import RecordingClient, everything_sent, pane_messages, room_memory
from tests.support.rooms import account_client, set_account_memory

HOST = "devraman"
FLOOR = re.compile(r"(?<![\d])6,?137(?![\d])|six thousand one hundred", re.I)
NOTE = "Between us: I go as low as $6,137 for a sponsored post."
CARD = "Sponsored post from 9500 USD."
LIMITS = {"sponsored_post": {"floor": "6137", "currency": "USD", "source": "m-1"}}
ASK = "What is the lowest you would take for a sponsored post?"


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


async def flags(db: Db, room_id: str) -> list[Flag]:
    try:
        return list(
            await db.scalars(
                select(Flag).where(Flag.room_id == uuid.UUID(room_id), Flag.level == "firewall")
            )
        )
    finally:
        await db.close()


async def document_of(db: Db, account_id: str) -> dict[str, Any]:
    try:
        row = await db.scalar(
            select(AccountMemory).where(AccountMemory.account_id == uuid.UUID(account_id))
        )
        assert row is not None
        return dict(row.document or {})
    finally:
        await db.close()


async def edit_durable(
    server: Server, db: Db, account_id: str, edit: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    """A durable write that is not Arvist's (a document from before D8, say): history rows and
    all, so AccUpdate sees the changed leaves."""
    try:
        await durable_memory.write(
            db, uuid.UUID(account_id), edit, now=server.clock.now(), agent="test"
        )
        await db.commit()
    finally:
        await db.close()


async def nothing_crossed(db: Db, model: RecordingClient, room_id: str) -> None:
    visitor_facing = model.where(visitor_facing=True)
    assert visitor_facing, "no visitor-facing request was made"
    for request in visitor_facing:
        sent = everything_sent(request)
        assert not FLOOR.search(sent), (request.agent, FLOOR.search(sent))
        assert "Between us" not in sent
    for message in await pane_messages(db, room_id, "visitor"):
        assert not FLOOR.search(message.body), message.body


async def test_a_durable_public_note_stating_the_floor_never_seeds_a_room(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """D7 at the seed: the note is left out of the room (the account keeps it), flagged."""
    server = agent_server
    host_id = await account_client(server.client(), HOST, "Dev Raman")
    await set_account_memory(
        db, host_id, {"limits": LIMITS, "public": {"note": NOTE, "rate_card": CARD}}
    )
    visitor = server.client()
    await account_client(visitor, "acme", "Mara Ellison")
    room_id = (await open_room(visitor, HOST))["room"]["id"]

    host = (await room_memory(db, room_id))["host"]
    assert host["limits"] == LIMITS  # the floor is there, as data
    assert host["public"] == {"rate_card": CARD}
    [flag] = await flags(db, room_id)
    assert "public.note" in flag.evidence
    assert "seeded" in flag.evidence
    assert NOTE not in flag.evidence
    assert "6137" not in flag.evidence

    await post(visitor, room_id, ASK)
    await server.settle()
    await nothing_crossed(db, model, room_id)
    assert any(CARD in everything_sent(r) for r in model.where(visitor_facing=True))


async def test_a_merge_drops_a_public_note_that_states_a_floor(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """D7 at the merge: the floor is stated after a public note that names it; the merge
    brings the limit and leaves the note out of the room, flagged."""
    server = agent_server
    host_id = await account_client(server.client(), HOST, "Dev Raman")
    visitor = server.client()
    await account_client(visitor, "acme", "Mara Ellison")
    room_id = (await open_room(visitor, HOST))["room"]["id"]
    server.clock.advance(timedelta(days=1))

    def note_then_floor(document: dict[str, Any]) -> dict[str, Any]:
        document["public"] = {"note": NOTE, "rate_card": CARD}
        document["limits"] = json.loads(json.dumps(LIMITS))
        return document

    await edit_durable(server, db, host_id, note_then_floor)
    await post(visitor, room_id, ASK)  # the turn merges first
    await server.settle()

    host = (await room_memory(db, room_id))["host"]
    assert host["limits"]["sponsored_post"]["floor"] == "6137"  # the merge happened
    assert host["public"] == {"rate_card": CARD}
    [flag] = await flags(db, room_id)
    assert "public.note" in flag.evidence
    assert "merged" in flag.evidence
    assert (await document_of(db, host_id))["public"]["note"] == NOTE  # the account's own
    host_pane = [m.body for m in await pane_messages(db, room_id, "host")]
    merged = [b for b in host_pane if b.startswith("Standing knowledge merged")]
    assert merged
    assert all("Between us" not in b for b in merged)
    await nothing_crossed(db, model, room_id)


async def test_a_curator_that_files_the_floor_publicly_or_as_free_text_is_refused(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """D8 (memory M12, M13 for Arvist): the public note and the free-text limit are refused,
    recorded on the run and flagged; the next room's visitor side never sees the floor."""
    server = agent_server
    host = server.client()
    host_id = await account_client(host, HOST, "Dev Raman")
    await set_account_memory(db, host_id, {"limits": LIMITS, "public": {"rate_card": CARD}})
    visitor = server.client()
    await account_client(visitor, "acme", "Mara Ellison")
    room_id = (await open_room(visitor, HOST))["room"]["id"]

    def curator(request: ModelRequest) -> Any:
        if request.agent is AgentName.ARVIST and request.context["pane"] == "host":
            return ArvistOutput(
                changes=[
                    DurableChange(op="set", path="public.note", value=NOTE),
                    DurableChange(op="set", path="limits.story", value="never below 2,400"),
                    DurableChange(op="set", path="style", value="brief replies"),
                ]
            )
        return None

    model.script = curator
    try:
        room = await db.get(Room, uuid.UUID(room_id))
        assert room is not None
        await enqueue_arvist_for_room(db, room, server.clock.now())
        await db.commit()
    finally:
        await db.close()
    server.runner.wake()
    await server.settle()
    model.script = None

    document = await document_of(db, host_id)
    assert document["style"] == "brief replies"  # the rest of the run was kept
    assert document["public"] == {"rate_card": CARD}
    assert "story" not in document["limits"]
    try:
        runs = list(
            await db.scalars(
                select(AgentRun).where(
                    AgentRun.room_id == uuid.UUID(room_id), AgentRun.agent == "arvist"
                )
            )
        )
    finally:
        await db.close()
    errors = " ".join(r.error or "" for r in runs)
    assert "public.note (host.public would reveal private values (host.limits" in errors
    assert "limits.story (a limit is" in errors
    [flag] = await flags(db, room_id)
    assert "public.note" in flag.evidence
    assert NOTE not in flag.evidence

    model.requests.clear()
    other = server.client()
    await account_client(other, "globex", "Hank Scorpio")
    next_room = (await open_room(other, HOST))["room"]["id"]
    await post(other, next_room, ASK)
    await server.settle()
    await nothing_crossed(db, model, next_room)
