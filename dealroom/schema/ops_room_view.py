"""GraphQL types of what an operator reads of a room to act on it (transcripts, memory and its
history, the dispatch record, offers with payments, the record of operators' reads), and of a
memory edit's result. Every field that reads the database checks the operator flag again
(``services/ops``)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, cast

import strawberry
from strawberry.scalars import JSON

from dealroom.domain.cursors import room_cursor
from dealroom.domain.offer_stage import OfferRow, OfferStatus, Stage, derive_stage
from dealroom.domain.seats import Seat, side_of
from dealroom.persistence import models
from dealroom.schema.pane_types import Message
from dealroom.services.live.events import MessageView

if TYPE_CHECKING:
    from dealroom.services.ops.reads import Page
    from dealroom.services.ops.room_view import TranscriptPage


def _json(value: object) -> JSON:
    return cast(JSON, value)  # an opaque NewType


@strawberry.type(description="A page of one pane's lines, newest first.")
class OpsTranscript:
    seat: str = strawberry.field(description="The pane's seat.")
    nodes: list[Message] = strawberry.field(description="The lines, newest first.")
    has_next_page: bool = strawberry.field(description="Older lines follow.")
    before: int | None = strawberry.field(
        description="Pass as `before` for the next (older) page: the last line's pane sequence."
    )


def ops_transcript(pane: str, page: TranscriptPage) -> OpsTranscript:
    """A page of one pane's lines (by participant key) as an operator reads them (operators'
    lines marked)."""
    side = side_of(pane) or Seat.VISITOR
    return OpsTranscript(
        seat=pane,
        nodes=[
            Message.from_view(MessageView.from_row(m, pane), side, operator_shown=True)
            for m in page.rows
        ],
        has_next_page=page.has_next,
        before=page.rows[-1].seq if page.rows else None,
    )


@strawberry.type(description="One entry of the dispatch record: what one pane sent another.")
class OpsDispatch:
    id: strawberry.ID = strawberry.field(description="The dispatch id.")
    from_pane: str = strawberry.field(description="The sending pane's seat.")
    to_pane: str = strawberry.field(description="The receiving pane's seat.")
    substance: str = strawberry.field(description="What was to be said.")
    status: str = strawberry.field(description="pending, held, delivered, …")
    payload: JSON = strawberry.field(description="The typed substance (ruling, origin, …).")
    source_run_id: strawberry.ID = strawberry.field(description="The run that sent it.")
    created_at: datetime = strawberry.field(description="When (UTC).")

    @classmethod
    def from_row(cls, row: models.Dispatch, seats: Mapping[uuid.UUID, str]) -> OpsDispatch:
        return cls(
            id=strawberry.ID(str(row.id)),
            from_pane=seats.get(row.from_participant_id, "?"),
            to_pane=seats.get(row.to_participant_id, "?"),
            substance=row.substance,
            status=row.status,
            payload=_json(dict(row.payload or {})),
            source_run_id=strawberry.ID(str(row.source_run_id)),
            created_at=row.created_at,
        )


@strawberry.type(description="A page of the dispatch record, newest first.")
class OpsDispatchConnection:
    nodes: list[OpsDispatch] = strawberry.field(description="The dispatches.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.type(description="A payment attempt on an offer.")
class OpsOfferPayment:
    id: strawberry.ID = strawberry.field(description="The payment id.")
    provider: str = strawberry.field(description="test or stripe.")
    status: str = strawberry.field(description="The provider's status, as recorded.")
    currency: str = strawberry.field(description="ISO currency.")
    due: str = strawberry.field(description="The slice due, as a decimal string.")
    platform_fee: str = strawberry.field(description="The fee, as a decimal string.")
    total: str = strawberry.field(description="What the brand pays, as a decimal string.")
    error: str | None = strawberry.field(description="Why it failed, if it did.")
    created_at: datetime = strawberry.field(description="When (UTC).")

    @classmethod
    def from_row(cls, row: models.Payment) -> OpsOfferPayment:
        return cls(
            id=strawberry.ID(str(row.id)),
            provider=row.provider,
            status=row.status,
            currency=row.currency,
            due=str(row.due),
            platform_fee=str(row.platform_fee),
            total=str(row.total),
            error=row.error,
            created_at=row.created_at,
        )


@strawberry.type(description="An offer of the room as operators see it, with its payments.")
class OpsOffer:
    id: strawberry.ID = strawberry.field(description="The offer id.")
    status: str = strawberry.field(description="The offers row's status.")
    stage: Stage = strawberry.field(description="The stage derived from it.")
    version: int = strawberry.field(description="The offer's version.")
    terms: JSON = strawberry.field(description="The written terms.")
    created_at: datetime = strawberry.field(description="When it was drawn (UTC).")
    payments: list[OpsOfferPayment] = strawberry.field(description="Its payments, oldest first.")

    @classmethod
    def from_row(cls, row: models.Offer, payments: list[models.Payment]) -> OpsOffer:
        return cls(
            id=strawberry.ID(str(row.id)),
            status=row.status,
            stage=derive_stage(OfferRow(OfferStatus(row.status), row.brand_approved_at)),
            version=row.version,
            terms=_json(dict(row.terms or {})),
            created_at=row.created_at,
            payments=[OpsOfferPayment.from_row(p) for p in payments],
        )


@strawberry.type(description="An operator's read of a room: who, when, what.")
class OpsRoomRead:
    id: strawberry.ID = strawberry.field(description="The record id.")
    operator_id: strawberry.ID | None = strawberry.field(description="Who read.")
    what: list[str] = strawberry.field(
        description="The parts read (room, transcript:<seat>, memory, dispatches, offers, …)."
    )
    created_at: datetime = strawberry.field(description="When (UTC).")

    @classmethod
    def from_row(cls, row: models.OperatorRead) -> OpsRoomRead:
        return cls(
            id=strawberry.ID(str(row.id)),
            operator_id=(
                strawberry.ID(str(row.operator_account_id)) if row.operator_account_id else None
            ),
            what=list(row.what or []),
            created_at=row.created_at,
        )


@strawberry.type(description="A page of operators' reads, newest first.")
class OpsRoomReadConnection:
    nodes: list[OpsRoomRead] = strawberry.field(description="The reads.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.type(description="One changed leaf of a room's memory.")
class RoomMemoryChange:
    id: strawberry.ID = strawberry.field(description="The change id (revertRoomMemoryChange).")
    path: str = strawberry.field(description="The leaf's dotted path.")
    old_value: JSON | None = strawberry.field(description="Before; null when it was absent.")
    new_value: JSON | None = strawberry.field(description="After; null when it was removed.")
    version: int = strawberry.field(description="The memory version this change produced.")
    agent: str = strawberry.field(description="distil, guard, or operator.")
    run_id: strawberry.ID | None = strawberry.field(description="The writing run, if a run.")
    operator_id: strawberry.ID | None = strawberry.field(description="The operator, if one.")
    reason: str | None = strawberry.field(description="The operator's reason.")
    reverts_id: strawberry.ID | None = strawberry.field(description="The change this undid.")
    created_at: datetime = strawberry.field(description="When (UTC).")

    @classmethod
    def from_row(cls, row: models.RoomMemoryChange) -> RoomMemoryChange:
        return cls(
            id=strawberry.ID(str(row.id)),
            path=row.path,
            old_value=_json(row.old_value),
            new_value=_json(row.new_value),
            version=row.version,
            agent=row.agent,
            run_id=strawberry.ID(str(row.run_id)) if row.run_id else None,
            operator_id=(
                strawberry.ID(str(row.actor_account_id)) if row.actor_account_id else None
            ),
            reason=row.reason,
            reverts_id=strawberry.ID(str(row.reverts_id)) if row.reverts_id else None,
            created_at=row.created_at,
        )


@strawberry.type(description="A page of room memory changes, newest first.")
class RoomMemoryChangeConnection:
    nodes: list[RoomMemoryChange] = strawberry.field(description="The changes.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


def memory_history_connection(page: Page[models.RoomMemoryChange]) -> RoomMemoryChangeConnection:
    end = page.rows[-1] if page.rows else None
    return RoomMemoryChangeConnection(
        nodes=[RoomMemoryChange.from_row(c) for c in page.rows],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.created_at, end.id) if end else None,
    )


@strawberry.type(description="What a memory edit or revert wrote.")
class RoomMemoryWrite:
    memory: JSON = strawberry.field(description="The room's memory after it.")
    version: int = strawberry.field(description="Its version.")
    changes: list[RoomMemoryChange] = strawberry.field(description="The leaves it changed.")


@strawberry.enum(description="A targeted memory change's operation (memory M6-M8).")
class MemoryOp(Enum):
    SET = "set"
    APPEND = "append"
    REMOVE = "remove"
