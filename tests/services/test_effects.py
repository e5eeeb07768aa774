"""The outbound choke point: every effect kind is held for an unclaimed guest and performed for
anyone else, and nothing but ``services/gate/effects.py`` performs an outbound effect."""

from __future__ import annotations

import ast
import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select

import dealroom
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Dispatch, Participant, PendingEffect
from dealroom.persistence.repositories import RoomRepository
from dealroom.services.gate import effects
from tests.conftest import Server
from tests.support.gate import sign_up_here
from tests.support.graphql import open_room, sign_up
from tests.support.turns import messages_in

PERFORMERS = {
    "Dispatch": "a pane-to-pane send",
    "queue_offer_gen": "the written offer's mint",
    "close_live_offer": "the written offer's close",
}
"""What performs an outbound effect; only the choke point may use them."""


def _effect(kind: effects.EffectKind, host: uuid.UUID, visitor: uuid.UUID) -> effects.Effect:
    match kind:
        case effects.EffectKind.PANE_SEND:
            return effects.PaneSend(visitor, host, "A visitor offers 7000 USD.", {}, 0, 1)
        case effects.EffectKind.OFFER_MINT:
            return effects.OfferMint(host)
        case effects.EffectKind.OFFER_CLOSE:
            return effects.OfferClose("persona")
        case effects.EffectKind.RELEASE:
            return effects.Release(uuid.uuid4(), "a-yes-message")


async def _seats(db: Db, room_id: str) -> dict[str, uuid.UUID]:
    rows = await db.scalars(select(Participant).where(Participant.room_id == uuid.UUID(room_id)))
    return {p.key: p.id for p in rows}


async def _emit(server: Server, room_id: str, kind: effects.EffectKind) -> effects.Outbound:
    db = Db(create_sessionmaker(server.engine))
    try:
        seats = await _seats(db, room_id)
        now = server.clock.now()
        await RoomRepository(db).next_event_seq(uuid.UUID(room_id), now)  # the turn's lock
        outbound = effects.Outbound(uuid.UUID(room_id), uuid.uuid4(), now, server.state.settings)
        await effects.emit(db, outbound, _effect(kind, seats["host"], seats["visitor"]))
        await db.add(*outbound.runs)
        await db.commit()
        return outbound
    finally:
        await db.close()


async def _count(db: Db, model: type[object], room_id: str) -> int:
    try:
        column = model.room_id  # type: ignore[attr-defined]
        return int(
            await db.scalar(
                select(func.count()).select_from(model).where(column == uuid.UUID(room_id))
            )
            or 0
        )
    finally:
        await db.close()


@pytest.mark.parametrize("kind", list(effects.EffectKind))
async def test_every_effect_kind_is_held_for_a_guest(
    server: Server, db: Db, kind: effects.EffectKind
) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]

    outbound = await _emit(server, room_id, kind)

    rows = await _held(db, room_id)
    assert [(r.kind, r.status, r.seq) for r in rows] == [(kind.value, "held", 1)]
    assert rows[0].source_run_id == outbound.source_run_id
    assert await _count(db, Dispatch, room_id) == 0
    # The only run queued is the gate's line in the guest's own pane (no delivery, no mint).
    assert [r.agent for r in outbound.runs] == ["gate"]
    assert [channel.rsplit(":", 1)[1] for channel, _ in outbound.published] == ["visitor"]
    assert (
        await guest.query("query($id: ID!) { room(id: $id) { loginRequired } }", {"id": room_id})
    )["room"]["loginRequired"] is True


GATE_SAYS = {
    effects.EffectKind.PANE_SEND: "a note for Dev Raman",
    effects.EffectKind.OFFER_MINT: "the written offer",
    effects.EffectKind.OFFER_CLOSE: "closing the written offer",
    effects.EffectKind.RELEASE: "news from Dev Raman",
}
"""What the gate line says waits, by the room's first held effect (kind only)."""


@pytest.mark.parametrize("kind", list(effects.EffectKind))
async def test_the_gate_line_is_spoken_whatever_kind_is_held_first(
    agent_server: Server, db: Db, kind: effects.EffectKind
) -> None:
    """The gate run itself, not just its queueing: the guest's agent asks for a sign-in and
    says what waits, for every kind that can be the room's first held effect."""
    host = agent_server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await agent_server.settle()
    before = len(await messages_in(db, room_id, "visitor"))

    outbound = await _emit(agent_server, room_id, kind)
    assert [r.agent for r in outbound.runs] == ["gate"]
    await agent_server.settle()

    said = (await messages_in(db, room_id, "visitor"))[before:]
    assert [(m.author_kind, m.client_message_id) for m in said] == [
        (AuthorKind.AGENT.value, f"run:{outbound.runs[0].id}")
    ]
    assert "sign in" in said[0].body.lower()
    assert GATE_SAYS[kind] in said[0].body
    assert await messages_in(db, room_id, "host") == []


@pytest.mark.parametrize("kind", list(effects.EffectKind))
async def test_every_effect_kind_is_performed_for_a_signed_in_visitor(
    server: Server, db: Db, kind: effects.EffectKind
) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    brand = server.client()
    await sign_up(brand, "mara", "Mara Ellison")
    room_id = (await open_room(brand, "devraman"))["room"]["id"]

    outbound = await _emit(server, room_id, kind)

    assert await _held(db, room_id) == []
    expected = {
        effects.EffectKind.PANE_SEND: ["persona"],
        effects.EffectKind.OFFER_MINT: ["offer_gen"],
        effects.EffectKind.OFFER_CLOSE: [],  # no live offer to close: performed, nothing to do
        effects.EffectKind.RELEASE: [],  # no held dispatch by that id: nothing to release
    }[kind]
    assert [r.agent for r in outbound.runs] == expected
    sends = 1 if kind is effects.EffectKind.PANE_SEND else 0
    assert await _count(db, Dispatch, room_id) == sends


async def test_a_claimed_room_is_never_gated_again(server: Server, db: Db) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await sign_up_here(guest, "mara", "Mara Ellison")

    await _emit(server, room_id, effects.EffectKind.PANE_SEND)

    assert await _held(db, room_id) == []
    assert await _count(db, Dispatch, room_id) == 1


async def _held(db: Db, room_id: str) -> list[PendingEffect]:
    try:
        return list(
            await db.scalars(
                select(PendingEffect)
                .where(PendingEffect.room_id == uuid.UUID(room_id))
                .order_by(PendingEffect.seq)
            )
        )
    finally:
        await db.close()


def test_only_the_choke_point_performs_an_outbound_effect() -> None:
    """A new path that built a dispatch, queued Offer-Gen or closed an offer itself would
    leak past the login gate: only ``services/gate/effects.py`` may (their definitions aside)."""
    root = Path(dealroom.__file__).parent
    allowed = {root / "services" / "gate" / "effects.py"}
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = (
                    node.func.id
                    if isinstance(node.func, ast.Name)
                    else node.func.attr
                    if isinstance(node.func, ast.Attribute)
                    else None
                )
                if name in PERFORMERS:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    assert found == []


def test_the_effect_kinds_are_the_ones_this_test_file_knows() -> None:
    """Adding a kind means adding it here (and to ``_effect``) so it is proven held."""
    assert {k.value for k in effects.EffectKind} == {
        "pane_send",
        "offer_mint",
        "offer_close",
        "release",
    }
