"""The agreement specialist (seed 000 "Records are made by a specialist"): it draws a
lawyer-reviewable draft from the current offer's commercial fields only, stored under their
fingerprint; a draft that names a term the offer does not hold, or states one of the host's
private values, is refused and the run retried.

A job in ``agent_runs`` in the host's pane, fenced and finished like Offer-Gen
(``offer_turn.SpecialistRun``)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from dealroom.agents import agreement as agreement_agent
from dealroom.agents.models.base import AgentName
from dealroom.domain import offers as rules
from dealroom.domain.seats import GUEST_NAME, Seat
from dealroom.jobs.offer_gen import SpecialistRun
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Agreement, Offer, Room
from dealroom.persistence.offers import OfferRepository
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import model_for
from dealroom.services.unit_of_work import reading


class InventedTerms(Exception):
    """The agreement draft named a term the offer does not hold."""


class PrivateValueInAgreement(Exception):
    """The agreement draft states one of the host's private values (firewall F1-F5)."""


class AgreementTurn(SpecialistRun):
    async def __call__(self, run: RunSnapshot) -> None:
        async with reading(self.deps.sessionmaker) as db:
            offer = await OfferRepository(db).current(run.room_id)
            if offer is None or offer.status in rules.CLOSED:
                offer = None
            elif await OfferRepository(db).agreement(offer.id, offer.fingerprint) is not None:
                offer = None  # this version's fields are drawn already
            if offer is not None:
                names = await _names_by_account(db, offer)
                room = await db.get(Room, run.room_id)
                names = (names[0], _brand(room) or names[1])
                inputs = agreement_agent.AgreementInput(
                    offer_id=str(offer.id),
                    version=offer.version,
                    seller=names[0],
                    buyer=names[1],
                    terms=copy.deepcopy(dict(offer.terms)),
                )
                snapshot = (offer.id, offer.fingerprint, offer.version, dict(offer.terms))
                room = await db.get(Room, run.room_id)
                picks = dict(room.model_picks or {}) if room is not None else {}
                memory = dict(room.memory or {}) if room is not None else {}
        if offer is None:
            await self._finish(run, no_op=True)
            return
        site = CallSite(run.room_id, run.id, rows=[])
        try:
            model = model_for(self.deps, AgentName.AGREEMENT, picks)
            generation = await self.deps.ledger.generate(
                agreement_agent.build(inputs, model=model), site
            )
            output = generation.output
            assert isinstance(output, agreement_agent.AgreementOutput)
            text = agreement_agent.render(output)
            invented = agreement_agent.invented_terms(text, snapshot[3])
            if invented:
                raise InventedTerms("; ".join(invented)[:500])
            if agreement_agent.private_values(
                memory, text, snapshot[3], self.deps.settings.firewall_band_percent
            ):
                # Shown to the visitor: never stored with a private value in it.
                raise PrivateValueInAgreement(str(snapshot[0]))
            await self._store(run, snapshot, text, site)
        except Exception:
            await self.deps.ledger.keep(site)
            raise

    async def _store(
        self,
        run: RunSnapshot,
        snapshot: tuple[uuid.UUID, str, int, dict[str, Any]],
        text: str,
        site: CallSite,
    ) -> None:
        offer_id, fingerprint, version, _terms = snapshot
        async with self.deps.unit() as uow:
            db = uow.db
            row = await self._own(db, run)
            now = self.deps.clock.now()
            if await OfferRepository(db).agreement(offer_id, fingerprint) is None:
                await db.add(
                    Agreement(
                        id=uuid.uuid4(),
                        offer_id=offer_id,
                        fingerprint=fingerprint,
                        version=version,
                        text=text,
                        created_at=now,
                    )
                )
            row.status, row.finished_at = RunStatus.DONE.value, now
            await db.add(*site.rows)
        site.rows.clear()


def _brand(room: Room | None) -> str | None:
    """The brand's company as the visitor's side recorded it (``visitor.company``), if any:
    the agreement names the company rather than a guest's placeholder name."""
    branch = (room.memory or {}).get(Seat.VISITOR.value) if room is not None else None
    company = branch.get("company") if isinstance(branch, dict) else None
    return company.strip() if isinstance(company, str) and company.strip() else None


async def _names_by_account(db: Db, offer: Offer) -> tuple[str, str]:
    seller = await db.get(Account, offer.seller_account_id)
    buyer = await db.get(Account, offer.buyer_account_id) if offer.buyer_account_id else None
    return (
        seller.display_name if seller is not None else "the talent",
        buyer.display_name if buyer is not None else GUEST_NAME,
    )
