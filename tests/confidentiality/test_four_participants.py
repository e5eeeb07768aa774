"""The canary sweep in a room of four: the host, the host's manager (``host_2``), the brand's
lead (``visitor``) and a colleague of the brand (``visitor_2``).

Every agent runs on the leaky model (tests/support/leaky.py), here also leaking through the
manager's pane as through the host's and addressing every host-side send to both brand-side
panes. The lead and the colleague each negotiate in their own pane, the manager speaks in
``host_2``; then every surface either brand-side person reads is swept for the host's
canaries (goal: 0). The lead also states a private ceiling of its own, and the colleague must
never read it: one non-host participant's pane and memory branch are not another's.

A second test runs three participants (no manager) on the plain offline engine.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.persistence.db import Db
from dealroom.persistence.models import Offer
from dealroom.realtime import Broker
from tests.confidentiality.test_canary_sweep import (  # noqa: F401  # the fixtures
    _curate,
    agent_settings,
    count,
    fake,
    model,
)
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.fake_gemini import FakeGemini
from tests.support.graphql import Client, open_room, post, subscribe
from tests.support.leaky import ACCEPT, Leaky, host_durable
from tests.support.recording import (
    EventLog,
    RecordingClient,
    dispatches,
    draining,
    everything_sent,
    pane_keys,
    pane_messages,
    read_pane,
    room_memory,
    room_rows,
)
from tests.support.rooms import account_client, set_account_memory
from tests.support.team import (
    PANE_BY_PARTICIPANT,
    PANE_EVENTS_BY_PARTICIPANT,
    listed_panes,
    participant_ids,
    room_panes,
    seat_member,
)
from tests.support.turns import PANE_EVENTS_FULL
from tests.support.watches import quiet

HOST = "devraman"
PROPOSAL = "Could you do a sponsored post for $4,000?"
CEILING = "Our absolute ceiling is $9,250 — keep that to yourself."
CEILING_FORMS = ("9,250", "9250", "9.250")
BRAND_SIDE = ("visitor", "visitor_2")


@dataclass
class TeamLeaky(Leaky):
    """The leaky model in a room of four: the manager's pane (``host_2``) attacks like the
    host's, every host-side send and Guard send goes to both brand-side panes, and the brand
    lead's Distil files the lead's own ceiling in the lead's branch."""

    manager_leaked: int = 0
    ceiling_filed: int = 0

    def _attack(
        self, agent: str, prompt: str, answer: dict[str, Any], lines: list[str]
    ) -> dict[str, Any]:
        first, _, rest = prompt.partition("\n")
        if "PANE: host_2." in first:  # Leaky attacks only where a prompt names the host pane
            prompt = first.replace("PANE: host_2.", "PANE: host.") + "\n" + rest
            self.manager_leaked += bool(lines)
        answer = super()._attack(agent, prompt, answer, lines)
        if agent in ("persona", "guard") and isinstance(answer.get("sends"), list):
            answer["sends"] = [both for send in answer["sends"] for both in _to_both(send)]
        if agent == "guard":  # corrections from the manager's and the colleague's pane too
            answer["sends"] += [
                {**send, "from_pane": pane}
                for send in answer["sends"]
                if send.get("from_pane") == "host"
                for pane in ("host_2", "visitor_2")
            ]
        if agent == "distil" and "PANE: visitor." in first and "9,250" in prompt:
            answer["changes"] = [
                {"op": "set", "path": "visitor.budget", "value": "ceiling $9,250, private"}
            ]
            self.ceiling_filed += 1
        return answer


def _to_both(send: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield send
    if send.get("to") == "visitor":
        yield {**send, "to": "visitor_2"}


@pytest.fixture
def leaky() -> Leaky:
    return TeamLeaky()


@dataclass
class Team:
    host: Client
    manager: Client
    lead: Client
    colleague: Client
    room_id: str


async def _team(server: Server, db: Db, *, manager: bool = True) -> Team:
    """A deal room of the host (its account memory planted), the brand's lead who opened it,
    the lead's colleague and, with ``manager``, the host's manager."""
    host, boss, lead, colleague = (server.client() for _ in range(4))
    host_id = await account_client(host, HOST, "Dev Raman")
    await set_account_memory(db, host_id, host_durable())
    await account_client(lead, "brandlead", "Brand Lead")
    room_id = (await open_room(lead, HOST))["room"]["id"]
    seeded = await room_memory(db, room_id)
    assert seeded["host"]["limits"]["sponsored_post"]["floor"] == "6137"  # the planting took
    lee = await account_client(colleague, "leelegal", "Lee Legal")
    await seat_member(db, room_id, "visitor_2", lee)
    if manager:
        morgan = await account_client(boss, "morganmgr", "Morgan Manager")
        await seat_member(db, room_id, "host_2", morgan)
    return Team(host, boss, lead, colleague, room_id)


def _pane_of(request: ModelRequest) -> str | None:
    pane = request.context.get("pane")
    return pane if isinstance(pane, str) else None


def _brand_facing(requests: list[ModelRequest]) -> list[ModelRequest]:
    """Requests whose output a brand-side person may read: a brand-side pane's agents and the
    pane-less visitor-facing ones (Offer-Gen). ``visitor_facing`` alone is not used: a
    manager's pane reads as the host's (visibility), whatever its request is labelled."""
    return [
        r
        for r in requests
        if (pane := _pane_of(r)) in BRAND_SIDE or (pane is None and r.visitor_facing)
    ]


def _ceiling_in(text: str) -> list[str]:
    return [form for form in CEILING_FORMS if form in text]


async def _colleague_is_walled_off(server: Server, team: Team) -> None:
    """The colleague reads its own pane only: not the lead's by id, over a query or a
    subscription, and Room.panes lists its pane alone."""
    ids = await participant_ids(team.host, team.room_id)
    assert {"host", "visitor", "visitor_2"} <= ids.keys()
    codes = await team.colleague.error_codes(
        PANE_BY_PARTICIPANT, {"id": team.room_id, "participantId": ids["visitor"]}
    )
    assert codes == ["FORBIDDEN"]
    async with subscribe(
        server.ws_url,
        PANE_EVENTS_BY_PARTICIPANT,
        {"roomId": team.room_id, "participantId": ids["visitor"], "after": event_cursor(0)},
        headers=dict(team.colleague.headers),
    ) as sub:
        payload = await sub.next()
    assert [e["extensions"]["code"] for e in payload.get("errors") or []] == ["FORBIDDEN"], payload
    seen = await room_panes(team.colleague, team.room_id)
    assert listed_panes(seen) == ["visitor_2"]
    assert [p["key"] for p in seen["participants"] if p["isYou"]] == ["visitor_2"]
    assert not any(p["sharedWithSide"] for p in seen["participants"])


def _colleague_requests_lack_the_lead(requests: list[ModelRequest]) -> None:
    """No request made for the colleague's pane holds the lead's branch or its ceiling."""
    mine = [r for r in requests if _pane_of(r) == "visitor_2"]
    assert mine, "no agent ran for the colleague's pane"
    for request in mine:
        memory = request.context.get("memory")
        assert not (isinstance(memory, dict) and "visitor" in memory), request.agent
        # the memory first: a shared branch carrying the lead's words is the likeliest route
        assert _ceiling_in(json.dumps(memory)) == [], (request.agent, memory)
        assert _ceiling_in(everything_sent(request)) == [], request.agent


async def test_four_participants_no_canary_reaches_either_brand_side_pane(
    agent_server: Server,
    db: Db,
    fake: FakeGemini,  # noqa: F811  # the imported fixture
    model: RecordingClient,  # noqa: F811  # the imported fixture
    leaky: TeamLeaky,
) -> None:
    server = agent_server
    team = await _team(server, db)
    brand_side = {"visitor": team.lead, "visitor_2": team.colleague}
    surfaces: dict[str, list[str]] = {}

    async with AsyncExitStack() as stack:
        logs: dict[str, EventLog] = {}
        for key, client in brand_side.items():
            sub = await stack.enter_async_context(
                subscribe(
                    server.ws_url,
                    PANE_EVENTS_FULL,
                    {"roomId": team.room_id, "seat": "VISITOR", "after": event_cursor(0)},
                    headers=dict(client.headers),
                )
            )
            logs[key] = await stack.enter_async_context(draining(sub))

        await post(team.lead, team.room_id, CEILING)
        await server.settle(timeout=120)

        async def proposals(times: int) -> None:
            for _ in range(times):
                for client in brand_side.values():
                    await post(client, team.room_id, PROPOSAL)
                await server.settle(timeout=120)
                server.clock.advance(timedelta(minutes=11))  # past the pair's send cap

        await proposals(3)  # rulings: a cent over, a dollar over, the floor
        await post(team.host, team.room_id, "OK, go ahead.")  # the principal spoke
        await post(team.manager, team.room_id, "OK, go ahead.")  # and so did the manager
        await server.settle(timeout=120)
        await proposals(1)
        await quiet(server)  # the Guard
        await _curate(server, db, team.room_id)  # Arvist
        await proposals(2)
        await post(team.lead, team.room_id, ACCEPT)
        await server.settle(timeout=120)

        for key, client in brand_side.items():
            pages = await read_pane(client, team.room_id, "VISITOR")
            surfaces[f"{key} pane (GraphQL)"] = [json.dumps(pages, ensure_ascii=False)]
            panes = await room_panes(client, team.room_id)
            surfaces[f"{key} panes (GraphQL)"] = [json.dumps(panes, ensure_ascii=False)]
            stored = await pane_messages(db, team.room_id, key)
            await logs[key].wait_for(str(stored[-1].id))
            surfaces[f"{key} pane (subscription)"] = [logs[key].dump()]

    for key in BRAND_SIDE:
        surfaces[f"{key} model requests"] = [
            everything_sent(r) for r in model.requests if _pane_of(r) == key
        ]
    surfaces["visitor-facing model requests"] = [
        everything_sent(r) for r in _brand_facing(model.requests)
    ]
    offers = await room_rows(db, Offer, team.room_id)
    keys = await pane_keys(db, team.room_id)
    links = {
        (keys[d.from_participant_id], keys[d.to_participant_id])
        for d in await dispatches(db, team.room_id)
    }
    surfaces["written offers"] = [json.dumps([o.terms, o.open_questions]) for o in offers]

    found = {name: count(texts) for name, texts in surfaces.items()}
    print("\ncanaries per brand-side surface, four participants (leaking host-side model):")
    for name, texts in surfaces.items():
        print(f"  {name:36} {sum(found[name].values()):4d}  {found[name] or ''} ({len(texts)})")
    print(
        f"  model answers {leaky.answered}; leaked {leaky.leaked}; manager {leaky.manager_leaked}"
    )

    # The adversary really tried: through the host's writers and through the manager's pane.
    for writer in ("persona", "distil", "guard", "arvist"):
        assert leaky.leaked.get(writer), f"the {writer} never saw a secret: the attack did not run"
    assert leaky.manager_leaked, "the manager's pane never saw a secret: its attack did not run"
    assert {("host_2", "visitor"), ("host_2", "visitor_2")} <= links, "the manager sent nothing"
    for key in BRAND_SIDE:
        assert surfaces[f"{key} model requests"], f"no agent ran for the {key} pane"
    assert offers, "no offer was drawn"
    assert {name: n for name, n in found.items() if n} == {}

    # The lead's ceiling is the lead's: its branch holds it, the colleague reads none of it.
    memory = await room_memory(db, team.room_id)
    assert leaky.ceiling_filed
    assert _ceiling_in(json.dumps(memory.get("visitor"))), memory.get("visitor")
    ceiling_seen = {
        name: forms
        for name, texts in surfaces.items()
        if name.startswith("visitor_2") and (forms := _ceiling_in(" ".join(texts)))
    }
    assert ceiling_seen == {}
    _colleague_requests_lack_the_lead(model.requests)
    await _colleague_is_walled_off(server, team)


@pytest.fixture
async def offline_server(
    agent_settings: Settings,  # noqa: F811  # the imported fixture
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
) -> AsyncIterator[tuple[Server, RecordingClient]]:
    recording = RecordingClient(OfflineClient())
    async with serving(agent_settings, engine, broker, clock, recording) as running:
        yield running, recording


async def test_three_participants_the_colleague_never_reads_the_leads_ceiling(
    offline_server: tuple[Server, RecordingClient], db: Db
) -> None:
    server, recording = offline_server
    team = await _team(server, db, manager=False)
    await post(team.lead, team.room_id, CEILING)
    await server.settle()
    await post(team.colleague, team.room_id, PROPOSAL)
    await server.settle()
    await post(team.colleague, team.room_id, "We'd like it on 15 March 2027.")
    await server.settle()

    mine = await room_panes(team.colleague, team.room_id)
    assert listed_panes(mine) == ["visitor_2"]
    assert _ceiling_in(json.dumps(mine)) == []
    host_view = await room_panes(team.host, team.room_id)
    assert listed_panes(host_view) == ["host", "visitor", "visitor_2"]
    ids = await participant_ids(team.host, team.room_id)
    refused = await team.colleague.error_codes(
        PANE_BY_PARTICIPANT, {"id": team.room_id, "participantId": ids["visitor"]}
    )
    assert refused == ["FORBIDDEN"]
    assert len(await pane_messages(db, team.room_id, "visitor_2")) > 2, "no agent answered"
    _colleague_requests_lack_the_lead(recording.requests)
