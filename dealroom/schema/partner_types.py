"""GraphQL types for partners: API keys and webhooks."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import cast

import strawberry
from strawberry.scalars import JSON

from dealroom.persistence import models
from dealroom.resolvers import partner_fields
from dealroom.schema.context import Info
from dealroom.schema.paging import DEPRECATED_FLAT, PageInfo


@strawberry.type(description="An API key of the signed-in account. The key itself is shown once.")
class ApiKey:
    id: strawberry.ID = strawberry.field(description="The key's id (for revokeApiKey).")
    name: str = strawberry.field(description="What the owner called it.")
    prefix: str = strawberry.field(description="The key's first characters, to tell keys apart.")
    scopes: list[str] = strawberry.field(description="What it may do (offers:read, …).")
    created_at: datetime = strawberry.field(description="When it was made (UTC).")
    last_used_at: datetime | None = strawberry.field(
        description="When it last authenticated a request (to the minute), if ever."
    )
    revoked_at: datetime | None = strawberry.field(description="When it was revoked, if it was.")

    @classmethod
    def from_row(cls, row: models.ApiKey) -> ApiKey:
        return cls(
            id=strawberry.ID(str(row.id)),
            name=row.name,
            prefix=row.prefix,
            scopes=list(row.scopes or []),
            created_at=row.created_at,
            last_used_at=row.last_used_at,
            revoked_at=row.revoked_at,
        )


@strawberry.type(description="A new API key: `key` is shown only here, never again.")
class CreatedApiKey:
    api_key: ApiKey = strawberry.field(description="The stored key's record.")
    key: str = strawberry.field(
        description="The key: send it as 'Authorization: Bearer dr_…'. Stored only hashed."
    )


@strawberry.type(description="A partner endpoint receiving the account's offer events.")
class Webhook:
    id: strawberry.ID = strawberry.field(description="The webhook's id.")
    url: str = strawberry.field(description="Where deliveries are POSTed.")
    events: list[str] = strawberry.field(
        description="Event types it receives: offer.created, offer.stage_changed, "
        "payment.captured, payment.declined."
    )
    status: str = strawberry.field(
        description="active, or disabled after a whole retry window of failures."
    )
    disabled_reason: str | None = strawberry.field(description="Why it was disabled, if it is.")
    last_success_at: datetime | None = strawberry.field(
        description="When a delivery last succeeded."
    )
    created_at: datetime = strawberry.field(description="When it was made (UTC).")

    @classmethod
    def from_row(cls, row: models.Webhook) -> Webhook:
        return cls(
            id=strawberry.ID(str(row.id)),
            url=row.url,
            events=list(row.events or []),
            status=row.status,
            disabled_reason=row.disabled_reason,
            last_success_at=row.last_success_at,
            created_at=row.created_at,
        )


@strawberry.type(description="A new webhook and its signing secret (shown only here).")
class CreatedWebhook:
    webhook: Webhook = strawberry.field(description="The webhook.")
    secret: str = strawberry.field(
        description="The Standard Webhooks signing secret (whsec_…): verify each delivery's "
        "webhook-signature with it."
    )


@strawberry.type(description="One HTTP attempt of a delivery.")
class WebhookAttempt:
    attempt: int = strawberry.field(description="1 for the first attempt.")
    status_code: int | None = strawberry.field(description="The HTTP status, if one came back.")
    error: str | None = strawberry.field(description="What went wrong, if it did.")
    duration_ms: int = strawberry.field(description="How long it took.")
    at: datetime = strawberry.field(description="When it ended (UTC).")

    @classmethod
    def from_row(cls, row: models.WebhookAttempt) -> WebhookAttempt:
        return cls(
            attempt=row.attempt,
            status_code=row.status_code,
            error=row.error,
            duration_ms=row.duration_ms,
            at=row.created_at,
        )


@strawberry.type(description="One event's delivery to one endpoint, with its attempts.")
class WebhookDelivery:
    id: strawberry.ID = strawberry.field(description="The delivery's id (for redeliverWebhook).")
    event_id: strawberry.ID = strawberry.field(
        description="The event's id: the webhook-id header, the same on every attempt."
    )
    event_type: str = strawberry.field(description="The event type.")
    status: str = strawberry.field(description="pending, delivered or failed.")
    attempts: int = strawberry.field(description="Attempts made so far.")
    next_attempt_at: datetime | None = strawberry.field(
        description="When the next attempt is due (pending deliveries only)."
    )
    last_status: int | None = strawberry.field(description="The last attempt's HTTP status.")
    last_error: str | None = strawberry.field(description="The last attempt's error.")
    created_at: datetime = strawberry.field(description="When the event was written (UTC).")
    delivered_at: datetime | None = strawberry.field(description="When it was accepted.")
    payload: JSON = strawberry.field(description="The body that is sent.")
    _id: strawberry.Private[uuid.UUID]

    @strawberry.field(description="Its HTTP attempts, oldest first.")
    async def attempt_log(self, info: Info) -> list[WebhookAttempt]:
        rows = await partner_fields.webhook_attempts(info, self._id)
        return [WebhookAttempt.from_row(r) for r in rows]

    @classmethod
    def from_rows(
        cls, delivery: models.WebhookDelivery, event: models.WebhookEvent
    ) -> WebhookDelivery:
        return cls(
            id=strawberry.ID(str(delivery.id)),
            event_id=strawberry.ID(str(event.id)),
            event_type=event.type,
            status=delivery.status,
            attempts=delivery.attempts,
            next_attempt_at=delivery.next_attempt_at if delivery.status == "pending" else None,
            last_status=delivery.last_status,
            last_error=delivery.last_error,
            created_at=delivery.created_at,
            delivered_at=delivery.delivered_at,
            payload=cast(JSON, event.payload),  # JSON is an opaque NewType
            _id=delivery.id,
        )


@strawberry.type(description="A page of deliveries, newest first.")
class WebhookDeliveryConnection:
    nodes: list[WebhookDelivery] = strawberry.field(description="The deliveries.")
    has_next_page: bool = strawberry.field(
        description="More follow the last one.", deprecation_reason=DEPRECATED_FLAT
    )
    end_cursor: str | None = strawberry.field(
        description="Pass as `after` for the next page.", deprecation_reason=DEPRECATED_FLAT
    )

    @strawberry.field(description="Relay page info.")
    def page_info(self) -> PageInfo:
        return PageInfo(
            has_next_page=self.has_next_page,
            has_previous_page=False,  # Relay allows false when paging forward
            start_cursor=None,
            end_cursor=self.end_cursor,
        )


@strawberry.type(description="An edge to an API key.")
class ApiKeyEdge:
    cursor: str = strawberry.field(description="Pass as `after` for the page after this key.")
    node: ApiKey = strawberry.field(description="The key.")


@strawberry.type(description="A page of the account's API keys, newest first.")
class ApiKeyConnection:
    edges: list[ApiKeyEdge] = strawberry.field(description="The keys.")
    page_info: PageInfo = strawberry.field(description="Relay page info.")


@strawberry.type(description="An edge to a webhook.")
class WebhookEdge:
    cursor: str = strawberry.field(description="Pass as `after` for the page after it.")
    node: Webhook = strawberry.field(description="The webhook.")


@strawberry.type(description="A page of the account's webhooks, newest first.")
class WebhookConnection:
    edges: list[WebhookEdge] = strawberry.field(description="The webhooks.")
    page_info: PageInfo = strawberry.field(description="Relay page info.")
