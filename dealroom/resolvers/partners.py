"""Partner resolvers: API keys and webhooks."""

from __future__ import annotations

import strawberry

from dealroom.domain.errors import bad_input
from dealroom.persistence.models import WebhookEvent
from dealroom.schema.context import Info
from dealroom.schema.paging import page_in_memory
from dealroom.schema.partner_types import (
    ApiKey,
    ApiKeyConnection,
    ApiKeyEdge,
    CreatedApiKey,
    CreatedWebhook,
    Webhook,
    WebhookConnection,
    WebhookDelivery,
    WebhookDeliveryConnection,
    WebhookEdge,
)
from dealroom.services.live.endings import end_streams_after_commit
from dealroom.services.partners import api_keys, webhooks
from dealroom.services.rooms.service import parse_id


async def create_api_key(info: Info, name: str, scopes: list[str]) -> CreatedApiKey:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        created = await api_keys.create_api_key(
            db, ctx.app.clock, identity, name=name, scopes=scopes
        )
    return CreatedApiKey(api_key=ApiKey.from_row(created.row), key=created.key)


async def revoke_api_key(info: Info, key_id: strawberry.ID) -> ApiKey:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await api_keys.revoke_api_key(
            db, ctx.app.clock, identity, parse_id(key_id, "API key")
        )
        end_streams_after_commit(db, ctx.app.broker, row.key_hash)
    return ApiKey.from_row(row)


async def list_api_keys(info: Info) -> list[ApiKey]:
    identity = await info.context.identity()
    return [ApiKey.from_row(r) for r in await api_keys.api_keys_of(info.context.db, identity)]


async def create_webhook(info: Info, url: str, events: list[str]) -> CreatedWebhook:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        created = await webhooks.create_webhook(
            db,
            ctx.app.clock,
            identity,
            url=url,
            events=events,
            allow_loopback=ctx.app.settings.webhook_allow_loopback,
        )
    return CreatedWebhook(webhook=Webhook.from_row(created.row), secret=created.secret)


async def api_key_connection(info: Info, first: int, after: str | None) -> ApiKeyConnection:
    keys = await list_api_keys(info)
    cap = info.context.app.settings.max_page_size
    page, page_info = page_in_memory(keys, lambda k: str(k.id), first, after, cap)
    return ApiKeyConnection(
        edges=[ApiKeyEdge(cursor=c, node=k) for c, k in page], page_info=page_info
    )


async def webhook_connection(info: Info, first: int, after: str | None) -> WebhookConnection:
    hooks = await list_webhooks(info)
    cap = info.context.app.settings.max_page_size
    page, page_info = page_in_memory(hooks, lambda h: str(h.id), first, after, cap)
    return WebhookConnection(
        edges=[WebhookEdge(cursor=c, node=h) for c, h in page], page_info=page_info
    )


async def list_webhooks(info: Info) -> list[Webhook]:
    identity = await info.context.identity()
    return [Webhook.from_row(r) for r in await webhooks.webhooks_of(info.context.db, identity)]


async def delete_webhook(info: Info, webhook_id: strawberry.ID) -> bool:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        await webhooks.delete_webhook(db, identity, parse_id(webhook_id, "webhook"))
    return True


async def enable_webhook(info: Info, webhook_id: strawberry.ID) -> Webhook:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await webhooks.enable_webhook(db, identity, parse_id(webhook_id, "webhook"))
        _wake_after_commit(info)
    return Webhook.from_row(row)


async def redeliver_webhook(info: Info, delivery_id: strawberry.ID) -> WebhookDelivery:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        delivery = await webhooks.redeliver(
            db, ctx.app.clock, identity, parse_id(delivery_id, "delivery")
        )
        event = await db.get(WebhookEvent, delivery.event_id)
        assert event is not None  # the foreign key cascades
        _wake_after_commit(info)
    return WebhookDelivery.from_rows(delivery, event)


async def webhook_deliveries(
    info: Info, webhook_id: strawberry.ID, first: int, after: str | None
) -> WebhookDeliveryConnection:
    cap = info.context.app.settings.max_page_size
    if not 0 < first <= cap:
        raise bad_input(f"first must be between 1 and {cap}.", "first")
    identity = await info.context.identity()
    page = await webhooks.deliveries(
        info.context.db, identity, parse_id(webhook_id, "webhook"), first=first, after=after
    )
    nodes = [WebhookDelivery.from_rows(d, e) for d, e in page.rows]
    end = webhooks.delivery_cursor(page.rows[-1][0]) if page.rows else None
    return WebhookDeliveryConnection(nodes=nodes, has_next_page=page.has_next, end_cursor=end)


def _wake_after_commit(info: Info) -> None:
    # A bare wake-up, not an event: it need not go through ``services.publish`` (no retry, no
    # RESYNC), because the webhook workers also poll every ``webhook_poll_seconds`` and a
    # failure here is logged by ``Db.commit`` without skipping anything else.
    broker = info.context.app.broker

    async def wake() -> None:
        await broker.publish(*webhooks.WAKE)

    info.context.db.after_commit(wake)
