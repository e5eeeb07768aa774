"""Partner fields (API keys, webhooks), merged into the root types by ``schema/root.py``."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.resolvers import partners
from dealroom.schema.context import Info
from dealroom.schema.paging import AFTER_DESCRIPTION, FIRST_DESCRIPTION
from dealroom.schema.partner_types import (
    ApiKey,
    ApiKeyConnection,
    CreatedApiKey,
    CreatedWebhook,
    Webhook,
    WebhookConnection,
    WebhookDelivery,
    WebhookDeliveryConnection,
)


@strawberry.type
class PartnerQuery:
    @strawberry.field(
        description="The signed-in account's API keys, newest first (sessions only).",
        deprecation_reason="Use apiKeyConnection (a connection with pageInfo); removed in "
        "the next release.",
    )
    async def api_keys(self, info: Info) -> list[ApiKey]:
        return await partners.list_api_keys(info)

    @strawberry.field(
        description="The signed-in account's API keys, newest first, a page at a time "
        "(sessions only)."
    )
    async def api_key_connection(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description=FIRST_DESCRIPTION)] = 20,
        after: Annotated[str | None, strawberry.argument(description=AFTER_DESCRIPTION)] = None,
    ) -> ApiKeyConnection:
        return await partners.api_key_connection(info, first, after)

    @strawberry.field(
        description="The account's webhooks, newest first. Scope webhooks:manage for API keys.",
        deprecation_reason="Use webhookConnection (a connection with pageInfo); removed in "
        "the next release.",
    )
    async def webhooks(self, info: Info) -> list[Webhook]:
        return await partners.list_webhooks(info)

    @strawberry.field(
        description="The account's webhooks, newest first, a page at a time. Scope "
        "webhooks:manage for API keys."
    )
    async def webhook_connection(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description=FIRST_DESCRIPTION)] = 20,
        after: Annotated[str | None, strawberry.argument(description=AFTER_DESCRIPTION)] = None,
    ) -> WebhookConnection:
        return await partners.webhook_connection(info, first, after)

    @strawberry.field(
        description="A webhook's delivery log, newest first, each with its attempts. "
        "Scope webhooks:manage for API keys."
    )
    async def webhook_deliveries(
        self,
        info: Info,
        webhook_id: Annotated[strawberry.ID, strawberry.argument(description="The webhook.")],
        first: Annotated[int, strawberry.argument(description="Page size, 1-100.")] = 20,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
    ) -> WebhookDeliveryConnection:
        return await partners.webhook_deliveries(info, webhook_id, first, after)


@strawberry.type
class PartnerMutation:
    @strawberry.mutation(
        description="Make an API key for the signed-in account with the given scopes "
        "(offers:read, webhooks:manage; operators also ops:read, ops:write). The key is in "
        "the answer once and stored only hashed. Sessions only: a key cannot make keys."
    )
    async def create_api_key(
        self,
        info: Info,
        name: Annotated[str, strawberry.argument(description="A name, 1-80 characters.")],
        scopes: Annotated[list[str], strawberry.argument(description="The scopes it carries.")],
    ) -> CreatedApiKey:
        return await partners.create_api_key(info, name, scopes)

    @strawberry.mutation(description="Revoke one of the signed-in account's API keys at once.")
    async def revoke_api_key(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The key's id.")],
    ) -> ApiKey:
        return await partners.revoke_api_key(info, id)

    @strawberry.mutation(
        description="Register an endpoint for the account's offer events (offer.created, "
        "offer.stage_changed, payment.captured, payment.declined), signed per Standard "
        "Webhooks and retried for 24 h. The signing secret is in the answer once. URLs on "
        "private or loopback networks are BAD_USER_INPUT. Scope webhooks:manage for API keys."
    )
    async def create_webhook(
        self,
        info: Info,
        url: Annotated[str, strawberry.argument(description="An http(s) URL.")],
        events: Annotated[list[str], strawberry.argument(description="Event types to receive.")],
    ) -> CreatedWebhook:
        return await partners.create_webhook(info, url, events)

    @strawberry.mutation(description="Delete a webhook and its delivery log. True when done.")
    async def delete_webhook(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The webhook.")],
    ) -> bool:
        return await partners.delete_webhook(info, id)

    @strawberry.mutation(
        description="Turn a disabled webhook back on; its pending deliveries resume."
    )
    async def enable_webhook(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The webhook.")],
    ) -> Webhook:
        return await partners.enable_webhook(info, id)

    @strawberry.mutation(
        description="Send a delivery again now, with the same event id (webhook-id), in a "
        "new retry window. CONFLICT while an attempt of it is in flight."
    )
    async def redeliver_webhook(
        self,
        info: Info,
        delivery_id: Annotated[strawberry.ID, strawberry.argument(description="The delivery.")],
    ) -> WebhookDelivery:
        return await partners.redeliver_webhook(info, delivery_id)
