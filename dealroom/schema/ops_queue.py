"""The operators' queue fields, merged into the root types by ``schema/root.py``. NOT_FOUND to
anyone but an operator (``services/ops/queue.py``)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.domain.ops_queue import ItemKind, Level
from dealroom.resolvers import ops_queue
from dealroom.schema.context import Info
from dealroom.schema.ops_queue_types import OpsQueueConnection, OpsQueueItem
from dealroom.schema.paging import AFTER_DESCRIPTION, FIRST_DESCRIPTION

ItemId = Annotated[strawberry.ID, strawberry.argument(description="The queue item's id.")]


@strawberry.type
class OpsQueueQuery:
    @strawberry.field(
        description="Operators only (NOT_FOUND otherwise): what needs a person — frustration "
        "flags, escalations, Guard audits that were not healthy, runs failed past their "
        "retries, disputed or stuck payments, webhooks failing for a day — most urgent, then "
        "oldest, first. Resolved items leave it (see OpsRoom.queueHistory)."
    )
    async def ops_queue(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description=FIRST_DESCRIPTION)] = 20,
        after: Annotated[str | None, strawberry.argument(description=AFTER_DESCRIPTION)] = None,
        level: Annotated[
            Level | None, strawberry.argument(description="Only items of this level.")
        ] = None,
        kind: Annotated[
            ItemKind | None, strawberry.argument(description="Only items of this kind.")
        ] = None,
    ) -> OpsQueueConnection:
        return await ops_queue.queue_page(info, first, after, level, kind)


@strawberry.type
class OpsQueueMutation:
    @strawberry.mutation(
        description="Operators only: acknowledge a queue item (someone is looking). "
        "Idempotent: the first acknowledgement is kept. CONFLICT once resolved. Audited."
    )
    async def acknowledge_queue_item(self, info: Info, item_id: ItemId) -> OpsQueueItem:
        return await ops_queue.acknowledge(info, item_id)

    @strawberry.mutation(
        description="Operators only: assign a queue item to an operator (by handle). "
        "BAD_USER_INPUT for an account that is not an operator; NOT_FOUND for no account; "
        "CONFLICT once resolved. Audited."
    )
    async def assign_queue_item(
        self,
        info: Info,
        item_id: ItemId,
        operator: Annotated[str, strawberry.argument(description="The operator's handle.")],
    ) -> OpsQueueItem:
        return await ops_queue.assign(info, item_id, operator)

    @strawberry.mutation(
        description="Operators only: resolve a queue item with a note saying what was done. It "
        "leaves the queue and stays in its room's history. CONFLICT when resolved already; "
        "BAD_USER_INPUT for an empty note. Audited."
    )
    async def resolve_queue_item(
        self,
        info: Info,
        item_id: ItemId,
        note: Annotated[str, strawberry.argument(description="What was done (1-2000).")],
    ) -> OpsQueueItem:
        return await ops_queue.resolve(info, item_id, note)
