"""The firewall on the written offer: Offer-Gen's terms and the agreement draft are shown to the
visitor, so code screens them against the host's private values.

Offer-Gen and the agreement drafter read only the visitor's side, so no model here *could*
know the host's floor; these tests stand in for one that guessed or was told it elsewhere:
the model edge answers Offer-Gen with the host's floor as the fee, and the drafter with the
host's private term in the text. Neither may reach an offer or a stored agreement.
"""

from __future__ import annotations

import uuid

import pytest
from pydantic import BaseModel
from sqlalchemy import select

from dealroom.agents.agreement import AgreementOutput, AgreementSection
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.offer_gen import OfferGenOutput
from dealroom.persistence.db import Db
from dealroom.persistence.models import Agreement, Flag, Offer
from tests.conftest import Server
from tests.support.graphql import Client, post
from tests.support.offers import AGREE, BID, OPENING, ROOM_STAGE, settle
from tests.support.recording import RecordingClient, agent_runs, pane_messages
from tests.support.turns import deal

LEAKY_TERMS = OfferGenOutput(
    deliverables=["sponsored post"],
    fee_amount="6000",  # the host's floor (RULES: "never below $6,000")
    currency="USD",
    dates=["2027-03-15"],
    usage_rights=None,
    exclusivity=None,
    due_slice_percent="50",
    open_questions=[],
)


def leaky_offer_gen(request: ModelRequest) -> BaseModel | None:
    return LEAKY_TERMS if request.agent is AgentName.OFFER_GEN else None


def leaky_agreement(request: ModelRequest) -> BaseModel | None:
    if request.agent is not AgentName.AGREEMENT:
        return None
    return AgreementOutput(
        title="Services agreement",
        sections=[
            AgreementSection(heading="Services", body="One sponsored post."),
            AgreementSection(
                heading="Exclusivity", body="The seller will never work with alcohol brands."
            ),
        ],
    )


async def rows(db: Db, model: type[Offer] | type[Flag], room_id: str) -> list[object]:
    try:
        return list(await db.scalars(select(model).where(model.room_id == uuid.UUID(room_id))))
    finally:
        await db.close()


async def negotiate(server: Server, room_id: str, visitor: Client) -> None:
    for line in (OPENING.format(upfront="50% upfront"), BID, AGREE):
        await post(visitor, room_id, line)
        await settle(server)


class TestOfferGenTerms:
    @pytest.fixture
    def model(self) -> RecordingClient:
        return RecordingClient(OfflineClient(), script=leaky_offer_gen)

    async def test_terms_stating_the_floor_are_not_drawn(
        self, agent_server: Server, db: Db, model: RecordingClient
    ) -> None:
        d = await deal(agent_server)
        await negotiate(agent_server, d.room_id, d.visitor)
        assert model.where(AgentName.OFFER_GEN), "Offer-Gen never ran"
        room = await d.visitor.query(ROOM_STAGE, {"id": d.room_id})
        assert room["room"]["offer"] is None
        assert await rows(db, Offer, d.room_id) == []
        flags = [
            f for f in await rows(db, Flag, d.room_id) if getattr(f, "level", "") == "firewall"
        ]
        assert flags
        host = [m.body for m in await pane_messages(db, d.room_id, "host")]
        assert any("not drawn" in b and "6000 USD" in b for b in host), host
        for message in await pane_messages(db, d.room_id, "visitor"):
            assert "6,000" not in message.body
            assert "6000" not in message.body


class TestAgreementText:
    @pytest.fixture
    def model(self) -> RecordingClient:
        return RecordingClient(OfflineClient(), script=leaky_agreement)

    async def test_a_draft_stating_a_private_term_is_never_stored(
        self, agent_server: Server, db: Db, model: RecordingClient
    ) -> None:
        d = await deal(agent_server)
        await negotiate(agent_server, d.room_id, d.visitor)
        assert await rows(db, Offer, d.room_id), "no offer was drawn"
        drafts = model.where(AgentName.AGREEMENT)
        assert drafts, "the drafter never ran"
        try:
            stored = list(await db.scalars(select(Agreement)))
        finally:
            await db.close()
        assert stored == []
        runs = [r for r in await agent_runs(db, d.room_id) if r.agent == "agreement"]
        assert any("PrivateValueInAgreement" in (r.error or "") for r in runs), runs
