"""Resolvers behind the fields of partner types: return service values, which the types map
(this module imports no schema type, so those types can import it without a cycle)."""

from __future__ import annotations

import uuid

from dealroom.persistence import models
from dealroom.schema.context import Info
from dealroom.services.partners import webhooks


async def webhook_attempts(info: Info, delivery_id: uuid.UUID) -> list[models.WebhookAttempt]:
    """A delivery's HTTP attempts, oldest first."""
    return await webhooks.attempts_of(info.context.db, delivery_id)
