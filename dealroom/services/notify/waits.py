"""Waits on the principal: the reminder and the escalation (run by ``jobs/notify_timers.py``).

- NW1  A wait is a notification row (a decision or an approval) with ``waiting_since``; its
       steps are due ``DEALROOM_REMIND_AFTER_HOURS`` and ``DEALROOM_ESCALATE_AFTER_HOURS``
       after it. Each step is decided under the row's lock and checked against the rows it is
       about first: a decision is answered once the host has written in its pane since; an
       approval once the offer's stage or version moved. An answered wait is settled and fires
       nothing, so a stale or duplicated timer — in any process — fires nothing.
- NW2  The reminder goes to the principal once.
- NW3  The escalation: the waiting side's agent tells them, in its own voice and through the
       outbound choke point (the firewall's screen, the guest gate), that the host has not
       answered yet and that they will hear here and by email as soon as they do — never a
       promise of a person; the waiting account is emailed the same; every operator gets an
       alert (emailed to those who opted in).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from dealroom.config import Settings
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.models import AgentRun, Dispatch, Notification
from dealroom.persistence.notifications import NotificationRepository, RoomFacts
from dealroom.persistence.offers import OfferRepository
from dealroom.services.gate import effects, held_sends
from dealroom.services.gate.sends import code_send
from dealroom.services.notify.kinds import Audience, Kind
from dealroom.services.notify.outbox import Note, Publish, host_link, visitor_link, write
from dealroom.services.offers.reads import stage_of

ESCALATION_ORIGIN = "escalation"
"""``dispatches.payload.origin`` of the escalation's send to the waiting side."""


@dataclass
class Stepped:
    fired: bool = False
    runs: list[AgentRun] = field(default_factory=list)
    published: list[Publish] = field(default_factory=list)


async def still_waiting(db: Db, wait: Notification) -> bool:
    """NW1: whether the rows still show the principal owing an answer."""
    about = wait.wait or {}
    since = wait.waiting_since or wait.created_at
    if "offer" in about:
        offer = await OfferRepository(db).by_id(uuid.UUID(str(about["offer"])))
        if offer is None:
            return False
        return stage_of(offer).value == about.get("stage") and offer.version == about.get("version")
    host = about.get("host")
    if not host or host == "None":
        return False
    return not await NotificationRepository(db).spoke_since(uuid.UUID(str(host)), since)


async def step(db: Db, settings: Settings, wait: Notification, now: datetime) -> Stepped:
    """The wait's next due step (the caller holds its row lock and found it due)."""
    done = Stepped()
    if wait.wait_state not in ("waiting", "reminded"):
        return done  # stepped by another timer already
    if not await still_waiting(db, wait):
        wait.wait_state = "settled"
        return done
    if wait.room_id is None:
        wait.wait_state = "settled"
        return done
    facts = await NotificationRepository(db).room_facts(wait.room_id)
    if facts is None:
        wait.wait_state = "settled"
        return done
    done.fired = True
    if wait.wait_state == "waiting":
        wait.wait_state = "reminded"
        written = await write(
            db,
            now,
            [_reminder(facts, wait, settings)],
            facts,
            band_percent=settings.firewall_band_percent,
        )
        done.published += written.published
        return done
    wait.wait_state = "escalated"
    waiting_key = str((wait.wait or {}).get("waitingKey") or Seat.VISITOR.value)
    notes = [*await _operator_alerts(db, facts, wait, settings)]
    waiting_account = facts.seats.get(waiting_key)
    if waiting_account is not None and waiting_account != facts.host_account_id:
        notes.append(_told_waiting(facts, wait, waiting_account))
    held = await DispatchRepository(db).held(facts.room_id)
    written = await write(db, now, notes, facts, held, band_percent=settings.firewall_band_percent)
    done.published += written.published
    outbound = await _tell_waiting_side(db, settings, facts, wait, waiting_key, held, now)
    if outbound is not None:
        done.runs += outbound.runs
        done.published += outbound.published
    return done


def _reminder(facts: RoomFacts, wait: Notification, settings: Settings) -> Note:
    hours = f"{settings.remind_after_hours:g}"
    return Note(
        account_id=facts.host_account_id,
        kind=Kind.REMINDER,
        audience=Audience.HOST,
        source=f"remind:{wait.id}",
        title=f"Still waiting for you: {wait.title}",
        body=f"This has waited {hours} hours for your answer. {wait.body}",
        link=host_link(facts.room_id),
        reason="You have not answered your agent's question yet.",
        room_id=facts.room_id,
    )


def _honest_line(facts: RoomFacts) -> str:
    # NW3: the truth and nothing more: no person is promised who may not come.
    return (
        f"{facts.host_name} has not answered yet. As soon as they do, you will hear it here "
        "and by email."
    )


def _told_waiting(facts: RoomFacts, wait: Notification, account: uuid.UUID) -> Note:
    return Note(
        account_id=account,
        kind=Kind.ESCALATION,
        audience=Audience.VISITOR,
        source=f"escalate:{wait.id}:waiting",
        title=f"Still waiting on {facts.host_name}",
        body=_honest_line(facts),
        link=visitor_link(facts.host_handle, facts.room_id),
        reason=f"You are waiting for an answer from {facts.host_name} in this room.",
        room_id=facts.room_id,
    )


async def _operator_alerts(
    db: Db, facts: RoomFacts, wait: Notification, settings: Settings
) -> list[Note]:
    hours = f"{settings.escalate_after_hours:g}"
    return [
        Note(
            account_id=operator,
            kind=Kind.OPERATOR_ALERT,
            audience=Audience.OPERATOR,
            source=f"escalate:{wait.id}:operator:{operator}",
            title=f"@{facts.host_handle} has not answered for {hours} h",
            body=f"A {wait.kind} in room {facts.room_id} has waited {hours} hours.",
            link=f"/ops/rooms/{facts.room_id}",
            reason="You are an operator.",
            room_id=facts.room_id,
        )
        for operator in await NotificationRepository(db).operators()
    ]


async def _tell_waiting_side(
    db: Db,
    settings: Settings,
    facts: RoomFacts,
    wait: Notification,
    waiting_key: str,
    held: Sequence[Dispatch],
    now: datetime,
) -> effects.Outbound | None:
    host = facts.participant_ids.get(Seat.HOST.value)
    target = facts.participant_ids.get(waiting_key)
    if host is None or target is None:
        return None
    keys = {pid: key for key, pid in facts.participant_ids.items()}
    # Keyed by the wait (as the send's run id): the escalation's send exists once per wait.
    outbound = effects.Outbound(
        facts.room_id,
        wait.id,
        now,
        settings,
        screen=held_sends.screener(
            facts.memory, keys, held, band_percent=settings.firewall_band_percent
        ),
    )
    await code_send(
        db,
        outbound,
        source_id=host,
        target_id=target,
        position=0,
        substance=_honest_line(facts),
        origin=ESCALATION_ORIGIN,
        settings=settings,
    )
    return outbound
