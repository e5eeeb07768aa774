"""What a run reads before it calls a model: loaded in one short unit of work, closed before
the call, so no connection is held while a model thinks."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dealroom.agents.render import Line, Party
from dealroom.domain import offer_stage
from dealroom.domain.locale import reader_locale
from dealroom.domain.money import DEFAULT_LOCALE
from dealroom.domain.seats import GUEST_NAME, RoomKind, Seat, on_host_side
from dealroom.persistence import pane_read
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchLine, DispatchRepository
from dealroom.persistence.models import (
    Account,
    Dispatch,
    OfferEvent,
    Participant,
    Room,
)
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.pane_read import Named, Occupant, Seated
from dealroom.persistence.runs import SessionMessage, TranscriptRepository
from dealroom.persistence.seats import SeatRepository

RECENT_DISPATCHES = 8
"""How much of the dispatch record a run reads: the recent sends, which is what a turn can act
on; older ones were distilled long ago. Keeps a turn's input flat as a room grows."""


@dataclass(frozen=True, slots=True)
class ClaimLoad:
    """What the claim statement read with the run (``RunRepository.claim``): a turn's first
    reads, so the handler does not make them again."""

    room_kind: str | None
    """None when the room is gone."""
    model_picks: dict[str, Any]
    memory: dict[str, Any]
    memory_version: int
    taken_over: bool
    """An operator holds the pane."""
    merge_maybe_due: bool
    """Some bound participant's account memory is newer than its last merge."""
    offer_status: str | None
    offer_brand_approved_at: datetime | None
    prepared: Prepared | None = None
    """What the run's handler read in the claim's own transaction (``TurnRunner.register``'s
    ``prepare``); None when it read nothing there."""

    @property
    def stage(self) -> offer_stage.Stage:
        if self.offer_status is None:
            return offer_stage.derive_stage(None)
        row = offer_stage.OfferRow(
            offer_stage.OfferStatus(self.offer_status), self.offer_brand_approved_at
        )
        return offer_stage.derive_stage(row)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A turn's context read in the claim's transaction, so a persona run needs one unit of work
    less."""

    context: TurnContext | None
    """None when the room or the pane is gone."""


@dataclass(frozen=True, slots=True)
class RunSnapshot:
    """A claimed run, detached from any session."""

    id: uuid.UUID
    room_id: uuid.UUID
    participant_id: uuid.UUID
    agent: str
    trigger_message_id: uuid.UUID | None
    trigger_dispatch_id: uuid.UUID | None
    chain_depth: int
    attempts: int
    trigger_event_id: uuid.UUID | None = None
    """A stage notice: the offer event the persona is told."""
    watch_generation: int | None = None
    """A Guard run: the room watch generation it fired for."""
    loaded: ClaimLoad | None = None
    """Read with the claim; None once something may have changed it (a merge ran)."""


@dataclass(frozen=True, slots=True)
class TurnContext:
    room_id: uuid.UUID
    kind: RoomKind
    model_picks: dict[str, Any]
    memory: dict[str, Any]
    pane: Seated
    participants: list[Seated]
    names: dict[str, str]
    host_facts: dict[str, Any] | None
    session: list[Line]
    last_seq: int
    trigger_message: SessionMessage | None
    trigger_dispatch: Dispatch | None
    dispatches: list[DispatchLine]
    stage: offer_stage.Stage
    session_ids: list[str] = field(default_factory=list)
    """The message id of each ``session`` line (Distil cites a limit's source by it)."""
    trigger_event: OfferEvent | None = None
    """A stage notice's offer event."""
    pane_locale: str = DEFAULT_LOCALE
    """L3: the locale the pane's account reads money in (en_US for a guest)."""

    @property
    def pane_key(self) -> str:
        return self.pane.key

    @property
    def represents(self) -> Party:
        return Party(Seat.HOST.value, self.names.get(Seat.HOST.value, "the host"))

    @property
    def speaking_with(self) -> Party:
        return Party(self.pane.key, self.names.get(self.pane.key, GUEST_NAME))

    def key_of(self, participant_id: uuid.UUID) -> str:
        return next((p.key for p in self.participants if p.id == participant_id), "?")

    def participant(self, key: str) -> Seated | None:
        return next((p for p in self.participants if p.key == key), None)

    def deliveries_for(self, pane_key: str) -> list[dict[str, Any]]:
        """The dispatch record this pane may see (ground truth of what was delivered). The
        host side sees every send in its room; a visitor side only sends to or from its own
        pane (seed 002: nothing of another pane's business crosses)."""
        rows: list[dict[str, Any]] = []
        for d in self.dispatches:
            source, target = self.key_of(d.from_participant_id), self.key_of(d.to_participant_id)
            if not on_host_side(pane_key) and pane_key not in (source, target):
                continue
            if d.status != "delivered" and source != pane_key:
                continue
            rows.append(
                {"from": source, "to": target, "substance": d.substance, "status": d.status}
            )
        return rows


async def people(db: Db, room_id: uuid.UUID) -> tuple[list[Participant], dict[uuid.UUID, Account]]:
    """A room's participants (by key) and the accounts bound to them."""
    participants: list[Participant] = []
    accounts: dict[uuid.UUID, Account] = {}
    for participant, account in await SeatRepository(db).people(room_id):
        participants.append(participant)
        if account is not None:
            accounts[account.id] = account
    return participants, accounts


def names_of(
    participants: Sequence[Occupant], accounts: Mapping[uuid.UUID, Account | Named]
) -> dict[str, str]:
    """Each participant's display name by key; an unbound seat is the guest."""
    return {
        p.key: accounts[p.account_id].display_name
        if p.account_id is not None and p.account_id in accounts
        else GUEST_NAME
        for p in participants
    }


async def load(
    db: Db,
    run: RunSnapshot,
    *,
    host_facts: bool = True,
    claimed: bool = False,
) -> TurnContext | None:
    """``host_facts=False`` skips the host's services (only personas read account facts);
    ``claimed`` takes the room and the stage from what the claim read (the persona: nothing
    writes them between its claim and here but a merge, which drops ``run.loaded``)."""
    head = run.loaded if claimed else None
    if head is not None:
        if head.room_kind is None:
            return None
        kind, picks, memory, stage = head.room_kind, head.model_picks, head.memory, head.stage
    else:
        room = await db.get(Room, run.room_id)
        if room is None:
            return None
        kind, picks, memory = room.kind, room.model_picks or {}, room.memory or {}
        stage = await _stage(db, room.id)
    found = await pane_read.read(
        db,
        run.room_id,
        run.participant_id,
        dispatch_cap=RECENT_DISPATCHES,
        services=host_facts,
    )
    participants, accounts = found.participants, found.accounts
    pane = next((p for p in participants if p.id == run.participant_id), None)
    if pane is None:
        return None
    names = names_of(participants, accounts)
    facts: dict[str, Any] | None = None
    host_seat = next((p for p in participants if p.key == Seat.HOST.value), None)
    if found.services is not None and host_seat is not None and host_seat.account_id is not None:
        # seed 002 layer 2: account facts are loaded for the host only, never a visitor.
        account = accounts[host_seat.account_id]
        facts = {
            "display_name": account.display_name,
            "handle": account.handle,
            "services": found.services,
        }
        if found.room_service is not None:
            # Public like the list: the service this room is about (its link or the room's pick).
            facts["room_service"] = found.room_service
    messages = [SessionMessage._make(values) for values in found.session]
    transcript = TranscriptRepository(db)
    trigger_message = next((m for m in messages if m.id == run.trigger_message_id), None)
    if trigger_message is None and run.trigger_message_id is not None:
        trigger_message = await transcript.by_id(run.trigger_message_id)
    dispatches = DispatchRepository(db)
    trigger_dispatch = (
        await dispatches.by_id(run.trigger_dispatch_id) if run.trigger_dispatch_id else None
    )
    return TurnContext(
        room_id=run.room_id,
        kind=RoomKind(kind),
        model_picks=dict(picks),
        memory=dict(memory),
        pane=pane,
        participants=participants,
        names=names,
        host_facts=facts,
        session=await lines_of(db, messages, participants, names),
        last_seq=messages[-1].seq if messages else 0,
        trigger_message=trigger_message,
        trigger_dispatch=trigger_dispatch,
        dispatches=[DispatchLine._make(values) for values in found.dispatches],
        # The live offers row, projected at call time (ST1); memory never holds a stage.
        stage=stage,
        session_ids=[str(m.id) for m in messages],
        trigger_event=(
            await db.get(OfferEvent, run.trigger_event_id) if run.trigger_event_id else None
        ),
        pane_locale=reader_locale(
            accounts.get(pane.account_id) if pane.account_id is not None else None
        ),
    )


async def lines_of(
    db: Db,
    messages: Sequence[SessionMessage],
    participants: Sequence[Occupant],
    names: Mapping[str, str],
) -> list[Line]:
    """Transcript lines as agents read them: a delivery of another participant's words is marked
    ``[relayed from <sender>]``, so no agent takes a true relay for its own unsupported claim."""
    relayed = {m.relayed_dispatch_id for m in messages if m.relayed_dispatch_id is not None}
    senders: dict[uuid.UUID, tuple[uuid.UUID, str]] = {}
    if relayed:
        keys = {p.id: p.key for p in participants}
        for dispatch in await DispatchRepository(db).by_ids(relayed):
            dispatch_id, sender = dispatch.id, dispatch.from_participant_id
            key = keys.get(sender)
            if key is not None:
                senders[dispatch_id] = (sender, names.get(key, key))
    lines: list[Line] = []
    for m in messages:
        found = senders.get(m.relayed_dispatch_id) if m.relayed_dispatch_id else None
        # A correction the Guard made in the pane itself relays nobody's words.
        relay = found[1] if found is not None and found[0] != m.participant_id else None
        lines.append(Line(m.author_kind, m.body, relayed_from=relay))
    return lines


async def _stage(db: Db, room_id: uuid.UUID) -> offer_stage.Stage:
    offer = await OfferRepository(db).current(room_id)
    if offer is None:
        return offer_stage.derive_stage(None)
    row = offer_stage.OfferRow(offer_stage.OfferStatus(offer.status), offer.brand_approved_at)
    return offer_stage.derive_stage(row)
