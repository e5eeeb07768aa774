"""The facts that notify, each called in that fact's own transaction.

- A turn (``after_turn``, from the persona job's apply): the host's pane was just told what the
  other side asked (a send from a visitor-side pane, delivered there) and its agent sent nothing
  back — it put the question to its principal — or the firewall held a send for the principal's
  yes: a principal decision waits, and its reminder timers are armed. A
  visitor-side pane was just told the host side's answer: the room's waits are settled (pending
  reminders cancelled) and the waiting side hears it by email too.
- A stage change (``stage_recorded``, from ``offers.events.record_stage``): a written offer
  awaiting this reader's approval, or approved / booked / paid / closed.

A turn or stage change that concerns nobody costs no statement (the checks before any query
are on what the caller already holds)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from dealroom.domain.locale import reader_locale_of
from dealroom.domain.money import display
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import Seat, side_of
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchLine
from dealroom.persistence.models import Dispatch, Offer, OfferEvent
from dealroom.persistence.notifications import NotificationRepository, RoomFacts
from dealroom.services.notify.kinds import Audience, Kind
from dealroom.services.notify.outbox import Note, Publish, host_link, visitor_link, write
from dealroom.services.offers.quotes import quote_for

QUOTE_CHARS = 600


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "\u2026"


def _visitor_name(facts: RoomFacts, key: str) -> str:
    return facts.names.get(key) or ("the brand" if key == Seat.VISITOR.value else "the other side")


async def after_turn(
    db: Db,
    *,
    room_id: uuid.UUID,
    pane_key: str,
    keys: dict[uuid.UUID, str],
    delivered: Dispatch | None,
    held: Sequence[Dispatch],
    replied_to: set[uuid.UUID],
    room_held: Sequence[Dispatch | DispatchLine],
    now: datetime,
    band_percent: Decimal | None = None,
) -> list[Publish]:
    """What a persona turn that just applied means for people outside the room."""
    from_key = keys.get(delivered.from_participant_id) if delivered is not None else None
    origin = (delivered.payload or {}).get("origin") if delivered is not None else None
    asks_host = (
        pane_key == Seat.HOST.value
        and delivered is not None
        and from_key not in (None, Seat.HOST.value)
        and origin is None  # the Guard's and a goal's notices are not questions
        # the host side answered nothing back: its agent put it to the principal
        and delivered.from_participant_id not in replied_to
    )
    answers_visitor = (
        pane_key != Seat.HOST.value
        and delivered is not None
        and from_key == Seat.HOST.value
        and origin is None  # an escalation's or the Guard's notice is not the host's answer
    )
    if not (asks_host or held or answers_visitor):
        return []
    repo = NotificationRepository(db)
    facts = await repo.room_facts(room_id)
    if facts is None:
        return []
    notes: list[Note] = []
    if asks_host and delivered is not None and from_key is not None:
        notes.append(_decision(facts, delivered, waiting_key=from_key, source="ask"))
    for dispatch in held:
        notes.append(
            _decision(
                facts,
                dispatch,
                waiting_key=keys.get(dispatch.to_participant_id, Seat.VISITOR.value),
                source="held",
            )
        )
    if answers_visitor:
        notes += await _settle(repo, facts, pane_key, now)
    written = await write(db, now, notes, facts, room_held, band_percent=band_percent)
    return written.published


def _decision(facts: RoomFacts, dispatch: Dispatch, *, waiting_key: str, source: str) -> Note:
    host = facts.host_account_id
    who = _visitor_name(facts, waiting_key)
    if source == "held":
        title = f"Your agent needs your yes before it answers {who}"
        body = (
            "Your agent held a reply because it would reveal something you keep private. "
            f"It would send: \u201c{_quoted(dispatch.substance)}\u201d Open the room to confirm "
            "or change it."
        )
    else:
        title = f"{who[0].upper()}{who[1:]} asked something only you can decide"
        body = (
            f"In \u201c{facts.title}\u201d your agent is waiting for you: "
            f"\u201c{_quoted(dispatch.substance)}\u201d"
        )
    return Note(
        account_id=host,
        kind=Kind.DECISION,
        audience=Audience.HOST,
        source=f"decision:{source}:{dispatch.id}",
        title=title,
        body=body,
        link=host_link(facts.room_id),
        reason="Your agent asked you something it may not decide for you.",
        room_id=facts.room_id,
        wait={
            "dispatch": str(dispatch.id),
            "host": str(facts.participant_ids.get(Seat.HOST.value)),
            "waitingKey": waiting_key,
        },
    )


async def _settle(
    repo: NotificationRepository, facts: RoomFacts, pane_key: str, now: datetime
) -> list[Note]:
    """The host side's answer reached ``pane_key``: its waits are settled (no reminder or
    escalation fires for them), and if it waited, its account is told by email."""
    waits = [
        w
        for w in await repo.waits_in_room(facts.room_id)
        # an approval's wait ends with its stage (the timers check the offer row), not a line
        if (w.wait or {}).get("waitingKey") == pane_key and "dispatch" in (w.wait or {})
    ]
    for wait in waits:
        wait.wait_state = "settled"
    account = facts.seats.get(pane_key)
    if not waits or account is None:
        return []
    return [
        Note(
            account_id=account,
            kind=Kind.ANSWERED,
            audience=Audience.VISITOR,
            source=f"answered:{waits[0].id}",
            title=f"{facts.host_name} answered",
            body=f"{facts.host_name} answered in your conversation. Open the room to read it.",
            link=visitor_link(facts.host_handle, facts.room_id),
            reason="You were waiting for an answer in this room.",
            room_id=facts.room_id,
        )
    ]


# --- offer stages ---------------------------------------------------------------------------

_FOR_HOST: dict[Stage, tuple[Kind, str]] = {
    Stage.BRAND_ACKED_AWAITING_TALENT: (
        Kind.APPROVAL,
        "The brand approved the written offer; it waits for your approval.",
    ),
    Stage.BOOKED_AWAITING_PAYMENT: (Kind.STAGE, "The written offer is booked."),
    Stage.BOOKED_PAYMENT_HELD: (Kind.STAGE, "The brand paid; the payment is held."),
    Stage.COMPLETED: (Kind.STAGE, "The booking is complete."),
    Stage.DISPUTED: (Kind.STAGE, "The booking is disputed."),
    Stage.DECLINED: (Kind.STAGE, "The written offer was closed."),
    Stage.WITHDRAWN: (Kind.STAGE, "The written offer was closed."),
}
_FOR_VISITOR: dict[Stage, tuple[Kind, str]] = {
    Stage.WRITTEN_AWAITING_BRAND: (Kind.APPROVAL, "A written offer waits for your approval."),
    Stage.BOOKED_AWAITING_PAYMENT: (Kind.STAGE, "Your offer was approved: it is booked."),
    Stage.BOOKED_PAYMENT_HELD: (Kind.STAGE, "Your payment went through; it is held."),
    Stage.COMPLETED: (Kind.STAGE, "The booking is complete."),
    Stage.DISPUTED: (Kind.STAGE, "The booking is disputed."),
    Stage.DECLINED: (Kind.STAGE, "The written offer was closed."),
    Stage.WITHDRAWN: (Kind.STAGE, "The written offer was closed."),
}
"""Fixed words by code, never a stage label: what each side is told of a stage it reached."""


async def stage_recorded(
    db: Db, offer: Offer, change: OfferEvent, *, band_percent: Decimal | None = None
) -> list[Publish]:
    """The notifications of one stored stage change, in its transaction."""
    stage = Stage(change.stage)
    host_says, visitor_says = _FOR_HOST.get(stage), _FOR_VISITOR.get(stage)
    if host_says is None and visitor_says is None:
        return []
    facts = await NotificationRepository(db).room_facts(offer.room_id)
    if facts is None:
        return []
    notes: list[Note] = []
    approval_wait = {
        "offer": str(offer.id),
        "stage": stage.value,
        "version": change.version,
        "host": str(facts.participant_ids.get(Seat.HOST.value)),
        "waitingKey": Seat.VISITOR.value,
    }
    title = facts.title or "your deal room"
    if host_says is not None:
        kind, text = host_says
        notes.append(
            Note(
                account_id=facts.host_account_id,
                kind=kind,
                audience=Audience.HOST,
                source=f"stage:{change.id}:host",
                title=f"{title}: {text}",
                body=text,
                link=host_link(facts.room_id),
                reason="You host this deal room.",
                room_id=facts.room_id,
                wait=approval_wait if kind == Kind.APPROVAL else None,
            )
        )
    if visitor_says is not None:
        notes += _buyer_side_notes(facts, offer, change, stage, visitor_says)
    written = await write(db, change.created_at, notes, facts, band_percent=band_percent)
    return written.published


def _buyer_side_notes(
    facts: RoomFacts, offer: Offer, change: OfferEvent, stage: Stage, says: tuple[Kind, str]
) -> list[Note]:
    """Everyone on the buyer's side hears the stage change: the buying account and its
    teammates (a demo room's visitor seat is its host's, who heard it as the host)."""
    kind, text = says
    notes: list[Note] = []
    for key, account in facts.seats.items():
        if side_of(key) is not Seat.VISITOR or account is None or account == facts.host_account_id:
            continue
        price = ""
        if stage is Stage.WRITTEN_AWAITING_BRAND:
            price = _price_line(offer, reader_locale_of(facts.locales.get(key)))
        notes.append(
            Note(
                account_id=account,
                kind=kind,
                audience=Audience.VISITOR,
                source=f"stage:{change.id}:{key}",
                title=f"{facts.host_name}: {text}",
                body=f"In your conversation with {facts.host_name}: {text}{price}",
                link=visitor_link(facts.host_handle, facts.room_id),
                reason=f"You are talking with {facts.host_name} in this room.",
                room_id=facts.room_id,
            )
        )
    return notes


def _price_line(offer: Offer, locale: str) -> str:
    """P11: the brand reads the price whole where it is asked to approve it, in its own locale
    (L3), with the figures the card shows; nothing when the offer holds no payable fee."""
    quoted = quote_for(offer)
    if quoted is None:
        return ""
    total = display(quoted.total, quoted.currency, locale)
    return f" You'd pay {total} now, platform fee included."
