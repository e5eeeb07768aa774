"""GraphQL types of the operators' surface. Every field that reads the database
checks the operator flag again (``services/ops/reads.py``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import TYPE_CHECKING, Annotated, cast

import strawberry
from strawberry.scalars import JSON

from dealroom.domain import money
from dealroom.persistence import models
from dealroom.resolvers import ops_transcripts
from dealroom.schema.context import Info
from dealroom.schema.ops_room_view import OpsTranscript

if TYPE_CHECKING:
    from dealroom.services.ops.reads import RunRow
    from dealroom.services.ops.spend import Spend as SpendRow

# --- a room's operator view (roomOps) -----------------------------------------------------


@strawberry.type(description="A participant losing patience, flagged by the memory writer.")
class Flag:
    id: strawberry.ID = strawberry.field(description="The flag id.")
    level: str = strawberry.field(description="low, medium or high.")
    evidence: str = strawberry.field(description="The words that show it.")
    created_at: datetime = strawberry.field(description="When it was raised (UTC).")


@strawberry.type(description="Model calls of a room, summed from the ledger.")
class ModelUsage:
    calls: int = strawberry.field(description="Model calls made.")
    input_tokens: int = strawberry.field(description="Input tokens, cached included.")
    output_tokens: int = strawberry.field(description="Output tokens.")
    cached_tokens: int = strawberry.field(description="Input tokens served from cache.")
    price_usd: str = strawberry.field(description="Total price in USD, as a decimal string.")


@strawberry.type(description="One repair the Guard made.")
class GuardEdit:
    kind: str = strawberry.field(description="send, goal, memory or plan.")
    target: str = strawberry.field(description="What it touched (panes, goal key or path).")
    detail: str = strawberry.field(description="The dispatch id, the status change, or the op.")


@strawberry.type(description="The verdict of one Guard audit of a quiet room.")
class GuardVerdict:
    id: strawberry.ID = strawberry.field(description="The verdict id.")
    verdict: str = strawberry.field(description="healthy, repaired or unrepaired.")
    findings: list[str] = strawberry.field(description="What was wrong, and what was refused.")
    edits: list[GuardEdit] = strawberry.field(description="The repairs made, in order.")
    created_at: datetime = strawberry.field(description="When the audit ended (UTC).")


@strawberry.type(description="An operator's view of a room. Never shown to an agent.")
class RoomOps:
    room_id: strawberry.ID = strawberry.field(description="The room.")
    flags: list[Flag] = strawberry.field(description="Frustration flags, newest first.")
    usage: ModelUsage = strawberry.field(description="What the room's model calls cost.")
    failed_runs: int = strawberry.field(description="Agent runs that failed for good.")
    guard_verdicts: list[GuardVerdict] = strawberry.field(
        description="The Guard's verdicts on the room, newest first (as many as flags)."
    )


# --- the ops console ----------------------------------------------------------------------


@strawberry.enum(description="How spend is grouped.")
class SpendBy(Enum):
    AGENT = "agent"
    MODEL = "model"
    DAY = "day"


@strawberry.type(description="Model calls summed from the ledger (model_calls).")
class Spend:
    key: str = strawberry.field(
        description="The agent, the model, or the UTC day (YYYY-MM-DD); 'total' for a sum."
    )
    calls: int = strawberry.field(description="Model calls.")
    input_tokens: int = strawberry.field(description="Input tokens, cached included.")
    output_tokens: int = strawberry.field(description="Output tokens (thinking included).")
    cached_tokens: int = strawberry.field(description="Input tokens served from cache.")
    price_usd: str = strawberry.field(
        description="USD over the priced calls only, as a decimal string."
    )
    unpriced_calls: int = strawberry.field(
        description="Calls whose model is missing from the price table: their cost is unknown "
        "and not in priceUsd."
    )

    @strawberry.field(
        description="priceUsd as people read it ('$1.24', '$0.000123' below a cent): the one "
        "money format the rest of the product writes."
    )
    async def price_display(self, info: Info) -> str:
        price = Decimal(self.price_usd)
        step = Decimal("0.000001") if 0 < price < Decimal("0.01") else Decimal("0.01")
        return money.display(price.quantize(step), "USD", await info.context.locale())

    @classmethod
    def from_spend(cls, spend: SpendRow | None, key: str = "total") -> Spend:
        if spend is None:
            return cls(
                key=key,
                calls=0,
                input_tokens=0,
                output_tokens=0,
                cached_tokens=0,
                price_usd="0",
                unpriced_calls=0,
            )
        return cls(
            key=spend.key if key != "total" else key,
            calls=spend.calls,
            input_tokens=spend.input_tokens,
            output_tokens=spend.output_tokens,
            cached_tokens=spend.cached_tokens,
            price_usd=str(spend.price_usd),
            unpriced_calls=spend.unpriced_calls,
        )


@strawberry.type(description="One agent run, as operators see it.")
class OpsRun:
    id: strawberry.ID = strawberry.field(description="The run id.")
    agent: str = strawberry.field(
        description="persona, distil, context_filter, offer_gen, agreement, guard, arvist, "
        "acc_update, gate, replay, or operator (an operator's line in a taken-over pane)."
    )
    pane: str = strawberry.field(description="The seat of the pane it ran in.")
    status: str = strawberry.field(description="queued, running, done or failed.")
    attempts: int = strawberry.field(description="Attempts made.")
    no_op: bool = strawberry.field(description="It ran and changed nothing.")
    error: str | None = strawberry.field(
        description="Why it failed, what the writer was refused ('rejected: …'), or why it "
        "was silenced."
    )
    verdict: str = strawberry.field(
        description="applied, no-op, refused, failed or pending; a Guard run's audit: "
        "healthy, repaired or unrepaired (see OpsVerdict)."
    )
    created_at: datetime = strawberry.field(description="When it was queued (UTC).")
    finished_at: datetime | None = strawberry.field(description="When it ended (UTC).")
    model_latency_ms: int = strawberry.field(description="Time spent in its model calls.")
    usage: Spend = strawberry.field(description="Its model calls: tokens and price.")

    @classmethod
    def from_row(cls, row: RunRow, verdict: str) -> OpsRun:
        run = row.run
        return cls(
            id=strawberry.ID(str(run.id)),
            agent=run.agent,
            pane=row.pane,
            status=run.status,
            attempts=run.attempts,
            no_op=run.no_op,
            error=run.error,
            verdict=verdict,
            created_at=run.created_at,
            finished_at=run.finished_at,
            model_latency_ms=row.latency_ms,
            usage=Spend.from_spend(row.usage),
        )


@strawberry.type(description="A page of runs, newest first.")
class OpsRunConnection:
    nodes: list[OpsRun] = strawberry.field(description="The runs.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.type(description="A goal's status flip: by a persona or by an operator.")
class OpsGoalEvent:
    id: strawberry.ID = strawberry.field(description="The event id.")
    goal_key: str = strawberry.field(description="The goal (new-offer, …).")
    from_status: str | None = strawberry.field(description="The status before, if any.")
    to_status: str = strawberry.field(description="The status after.")
    by_pane: str = strawberry.field(description="The pane whose agent ruled, or 'operator'.")
    agent: str = strawberry.field(description="persona, or operator for an override.")
    run_id: strawberry.ID | None = strawberry.field(description="The run that ruled, if any.")
    reason: str = strawberry.field(description="Why.")
    created_at: datetime = strawberry.field(description="When (UTC).")

    @classmethod
    def from_row(cls, row: models.GoalEvent) -> OpsGoalEvent:
        return cls(
            id=strawberry.ID(str(row.id)),
            goal_key=row.goal_key,
            from_status=row.from_status,
            to_status=row.to_status,
            by_pane=row.by_pane,
            agent=row.agent,
            run_id=strawberry.ID(str(row.run_id)) if row.run_id else None,
            reason=row.reason,
            created_at=row.created_at,
        )


@strawberry.type(description="A page of goal events, newest first.")
class OpsGoalEventConnection:
    nodes: list[OpsGoalEvent] = strawberry.field(description="The events.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.type(
    description="What a finished run concluded: a Guard run's audit verdict (healthy, "
    "repaired or unrepaired, with its findings); otherwise read from the run record: applied, "
    "no-op, refused (with what), failed (with why)."
)
class OpsVerdict:
    run_id: strawberry.ID = strawberry.field(description="The run.")
    agent: str = strawberry.field(description="The agent.")
    pane: str = strawberry.field(description="The pane's seat.")
    verdict: str = strawberry.field(
        description="healthy, repaired or unrepaired (the Guard); applied, no-op, refused, "
        "failed or pending."
    )
    detail: str | None = strawberry.field(
        description="The Guard's findings, what was refused, or the error."
    )
    at: datetime = strawberry.field(description="When it ended (or was queued).")


@strawberry.type(description="A page of verdicts, newest first.")
class OpsVerdictConnection:
    nodes: list[OpsVerdict] = strawberry.field(description="The verdicts.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.type(description="A page of flags, newest first.")
class OpsFlagConnection:
    nodes: list[Flag] = strawberry.field(description="The flags.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.type(description="A pane an operator has taken over: its agent is silent there.")
class PaneTakeover:
    seat: str = strawberry.field(description="The pane's seat.")
    operator_id: strawberry.ID | None = strawberry.field(description="Who took it over.")
    taken_at: datetime = strawberry.field(description="When (UTC).")
    _room_id: strawberry.Private[uuid.UUID]

    @strawberry.field(
        description="The pane's transcript, newest first, paged by `before`: what the operator "
        "is answering (their own lines authored OPERATOR)."
    )
    async def transcript(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description="Page size, 1-100.")] = 50,
        before: Annotated[
            int | None, strawberry.argument(description="`before` of the previous page.")
        ] = None,
    ) -> OpsTranscript:
        return await ops_transcripts.pane_transcript(info, self._room_id, self.seat, first, before)

    @strawberry.field(
        description="The plan the pane's agent wrote on its last turn (what it meant to do "
        "next), or null."
    )
    async def last_plan(self, info: Info) -> str | None:
        return await ops_transcripts.last_plan(info, self._room_id, self.seat)

    @classmethod
    def from_row(cls, seat: str, row: models.PaneTakeover) -> PaneTakeover:
        return cls(
            seat=seat,
            operator_id=(
                strawberry.ID(str(row.operator_account_id)) if row.operator_account_id else None
            ),
            taken_at=row.taken_at,
            _room_id=row.room_id,
        )


@strawberry.type(description="An operator's action, from the audit trail.")
class OpsActionRecord:
    id: strawberry.ID = strawberry.field(description="The record id.")
    action: str = strawberry.field(
        description="What was done: set_room_models, override_goal, take_over_pane, "
        "release_pane, operator_post, edit_room_memory, …; a read is read:<field> (its "
        "arguments in detail)."
    )
    operator_id: strawberry.ID | None = strawberry.field(description="Who did it.")
    room_id: strawberry.ID | None = strawberry.field(description="Where.")
    detail: JSON = strawberry.field(description="What exactly.")
    created_at: datetime = strawberry.field(description="When (UTC).")

    @classmethod
    def from_row(cls, row: models.OpsAction) -> OpsActionRecord:
        return cls(
            id=strawberry.ID(str(row.id)),
            action=row.action,
            operator_id=(
                strawberry.ID(str(row.operator_account_id)) if row.operator_account_id else None
            ),
            room_id=strawberry.ID(str(row.room_id)) if row.room_id else None,
            detail=cast(JSON, dict(row.detail or {})),  # an opaque NewType
            created_at=row.created_at,
        )


@strawberry.type(description="A page of audit records, newest first.")
class OpsActionConnection:
    nodes: list[OpsActionRecord] = strawberry.field(description="The records.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.input(description="One agent's model for a room.")
class ModelPickInput:
    agent: str = strawberry.field(
        description="persona, distil, context_filter, offer_gen, agreement, guard, arvist or "
        "acc_update (the login gate speaks with the persona's pick)."
    )
    model: str = strawberry.field(
        description="A model from the price table; empty to go back to the configured one."
    )


@strawberry.type(description="What an override did.")
class GoalOverride:
    goal_event: OpsGoalEvent | None = strawberry.field(
        description="The flip recorded; null when the goal already had that status (nothing fired)."
    )
    queued_runs: list[str] = strawberry.field(
        description="Agent runs its effect queued (offer_gen when new-offer is met)."
    )
    closed_offer: bool = strawberry.field(
        description="Whether its effect closed the live offer (new-offer abandoned)."
    )


@strawberry.type(description="An agent's prompt: the code that runs, read-only.")
class AgentPrompt:
    name: str = strawberry.field(description="The agent.")
    text: str = strawberry.field(description="The prompt as it runs.")
    sha256: str = strawberry.field(description="Its SHA-256: the version it is.")
