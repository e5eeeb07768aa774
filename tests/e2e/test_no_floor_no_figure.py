"""A room seeded from durable memory that holds the host's rate but no floor (a curator dropped
it, or the host never gave one) does not negotiate amounts on a model's guess: the visitor gets
no figure under the host's ask from the host's side, and the host's pane is asked for its floor.

Two layers, each shown: the offline engine stays at the rate (policy: with no floor the hold
point is the ask) and asks the host for its floor in the same turn, and whatever a host-side
model rules, the crossing holds an amount under the ask that no limit bounds (C7) and asks the
host in its pane."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Ruling, Send
from dealroom.domain.limits import limit_entry
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import Dispatch
from dealroom.services.gate import held_sends
from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up
from tests.support.recording import RecordingClient
from tests.support.rooms import set_account_memory
from tests.support.turns import messages_in, rows, visitor_client

ASK = "8000"
DURABLE: dict[str, Any] = {
    "rates": {"sponsored_post": {"ask": f"{ASK} USD"}},
    "public": {"rate_card": f"sponsored post from {ASK} USD"},
}
"""The host's account memory with the floor gone: the ask survived curation, the limit did not."""
OFFER = "Could you do a sponsored post for $1?"
FIGURE = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]{2,}\b")


async def _room_without_a_floor(server: Server, db: Db) -> tuple[Any, str]:
    host = server.client()
    account = (await sign_up(host, "devraman", "Dev Raman"))["account"]["id"]
    await set_account_memory(db, account, DURABLE)
    brand = await visitor_client(server)
    room_id = (await open_room(brand, "devraman"))["room"]["id"]
    await post(brand, room_id, OFFER)
    await server.settle()
    return brand, room_id


async def _no_figure_under_the_ask_crossed(db: Db, room_id: str) -> None:
    """No host-side ruling reached the visitor with a figure under the ask, and the visitor's
    pane states none but the brand's own $1 and the host's rate."""
    crossed = [
        d.payload["ruling"]
        for d in await rows(db, Dispatch, room_id)
        if d.status != held_sends.HELD and (d.payload or {}).get("ruling")
    ]
    assert [r for r in crossed if r.get("amount") and Decimal(r["amount"]) < Decimal(ASK)] == []
    for message in await messages_in(db, room_id, "visitor"):
        if message.author_kind == AuthorKind.AGENT:
            figures = [f for f in FIGURE.findall(message.body) if f not in ("$1", "$8,000")]
            assert figures == [], message.body


async def test_the_offline_negotiator_stays_at_the_rate_and_asks_for_the_floor(
    agent_server: Server, db: Db
) -> None:
    _brand, room_id = await _room_without_a_floor(agent_server, db)
    crossed = [d.payload.get("ruling") for d in await rows(db, Dispatch, room_id)]
    assert {"decision": "counter", "amount": ASK} in [
        {"decision": r["decision"], "amount": r["amount"]} for r in crossed if r
    ]
    await _no_figure_under_the_ask_crossed(db, room_id)
    host_lines = [m.body for m in await messages_in(db, room_id, "host")]
    assert any("What is the least you would take?" in line for line in host_lines), host_lines


def counters_at_a_dollar(request: ModelRequest) -> BaseModel | None:
    """A host-side persona that, with no floor in view, counters the brand's $1 at $1.50."""
    trigger = request.context.get("trigger") or {}
    host_pane = request.agent is AgentName.PERSONA and request.context.get("pane") == "host"
    if host_pane and trigger.get("kind") == "delivery":
        ruling = Ruling(decision="counter", amount="1.50", currency="USD", deliverable=None)
        return PersonaOutput(
            reply="Countering at $1.50.", sends=[Send(to="visitor", substance="", ruling=ruling)]
        )
    return None


@pytest.mark.parametrize("model", [RecordingClient(OfflineClient(), script=counters_at_a_dollar)])
async def test_c7_a_models_figure_with_no_floor_to_check_is_held_and_the_host_asked(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    _brand, room_id = await _room_without_a_floor(agent_server, db)
    await _no_figure_under_the_ask_crossed(db, room_id)
    held = [d for d in await rows(db, Dispatch, room_id) if d.status == held_sends.HELD]
    assert [d.payload["ruling"]["amount"] for d in held] == ["1.50"]
    host_lines = [m.body for m in await messages_in(db, room_id, "host")]
    assert any("tell me the least you would take" in line for line in host_lines), host_lines


def _ruling(amount: str, decision: str = "counter") -> dict[str, Any]:
    return {
        "ruling": {
            "decision": decision,
            "amount": amount,
            "currency": "USD",
            "deliverable": "sponsored_post",
        }
    }


def test_c7_what_the_screen_holds_with_and_without_a_floor() -> None:
    bare = {"host": DURABLE}
    floored = {
        "host": {**DURABLE, "limits": {"sponsored_post": limit_entry(Decimal(6000), "USD", None)}}
    }

    def unbounded(memory: dict[str, Any], payload: dict[str, Any]) -> bool:
        return any("no floor of yours" in r for r in held_sends.screen(memory, "", payload))

    assert unbounded(bare, _ruling("1"))
    assert unbounded(bare, _ruling("7999", "settle"))
    assert not unbounded(bare, _ruling(ASK))  # the host's own price
    assert not unbounded(bare, _ruling("9000", "settle"))
    assert not unbounded(bare, {"ruling": {"decision": "decline"}})
    assert not unbounded(floored, _ruling("7000"))  # a floor bounds it (C5 checks it)
    assert unbounded({"host": {}}, _ruling("8000"))  # no ask and no floor: held
    proposed = {**bare, "deal": {"fee": "7000 USD"}}  # the brand's own figure, on its side
    assert not unbounded(proposed, _ruling("7000", "settle"))
    assert unbounded(proposed, _ruling("7000"))  # countering at it is the host side's figure
