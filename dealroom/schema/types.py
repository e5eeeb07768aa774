"""GraphQL object types of the signed-in account seen by itself (``Me``) and the payloads of
signing in, visiting, an offer shortcut and paying. A room's and an offer's types are
``room_types``, a pane's ``pane_types``, the operators' ``ops_types``."""

from __future__ import annotations

import uuid
from typing import Annotated

import strawberry

from dealroom.domain.locale import reader_locale
from dealroom.persistence import models
from dealroom.resolvers import account_fields
from dealroom.resolvers import memory as memory_resolvers
from dealroom.resolvers import services as service_resolvers
from dealroom.schema.account_types import Account, AccountConnection, AccountEdge
from dealroom.schema.context import Info
from dealroom.schema.memory_types import DurableMemory, MemoryChangeConnection
from dealroom.schema.offer_types import Payment
from dealroom.schema.paging import AFTER_DESCRIPTION, FIRST_DESCRIPTION, page_in_memory
from dealroom.schema.pane_types import Message
from dealroom.schema.room_types import Offer, Room
from dealroom.schema.service_types import OfferedService


@strawberry.type(description="The signed-in account (or the account acted as), seen by itself.")
class Me:
    id: strawberry.ID = strawberry.field(description="The effective account's id.")
    handle: str = strawberry.field(description="The effective account's handle.")
    display_name: str = strawberry.field(description="The effective account's display name.")
    avatar_url: str | None = strawberry.field(description="Avatar image URL, if any.")
    is_operator: bool = strawberry.field(description="Operators see the ops views.")
    acting: bool = strawberry.field(
        description="True when a manager is acting as this account (X-Act-As)."
    )
    locale: str = strawberry.field(
        description="The locale money is written in for this account ('en_US' unless it set "
        "another with setLocale): display fields, its emails and its agent's lines."
    )
    _account_id: strawberry.Private[uuid.UUID]
    _signed_in_id: strawberry.Private[uuid.UUID]

    @classmethod
    def from_rows(cls, account: models.Account, signed_in: models.Account) -> Me:
        return cls(
            id=strawberry.ID(str(account.id)),
            handle=account.handle,
            display_name=account.display_name,
            avatar_url=account.avatar_url,
            is_operator=account.is_operator,
            acting=account.id != signed_in.id,
            locale=reader_locale(account),
            _account_id=account.id,
            _signed_in_id=signed_in.id,
        )

    @strawberry.field(description="The email the account signs in with.")
    async def email(self, info: Info) -> str | None:
        return await account_fields.email(info, self._account_id)

    @strawberry.field(description="The account that holds the session (differs when acting).")
    async def signed_in_as(self, info: Info) -> Account:
        row = await info.context.loaders.accounts.load(self._signed_in_id)
        assert row is not None
        return Account.from_row(row)

    @strawberry.field(description="The account's one home room, where it talks with its agent.")
    async def home_room(self, info: Info) -> Room | None:
        row = await account_fields.home_room(info, self._account_id)
        return Room.for_reader(row) if row else None

    @strawberry.field(
        description="Accounts the signed-in account may act as (X-Act-As).",
        deprecation_reason="Use managedAccountConnection (a connection with pageInfo); "
        "removed in the next release.",
    )
    async def managed_accounts(self, info: Info) -> list[Account]:
        rows = await account_fields.managed_accounts(info, self._signed_in_id)
        return [Account.from_row(row) for row in rows]

    @strawberry.field(
        description="Accounts the signed-in account may act as (X-Act-As), a page at a time."
    )
    async def managed_account_connection(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description=FIRST_DESCRIPTION)] = 20,
        after: Annotated[str | None, strawberry.argument(description=AFTER_DESCRIPTION)] = None,
    ) -> AccountConnection:
        accounts = await self.managed_accounts(info)
        cap = info.context.app.settings.max_page_size
        page, page_info = page_in_memory(accounts, lambda a: str(a.id), first, after, cap)
        return AccountConnection(
            edges=[AccountEdge(cursor=c, node=a) for c, a in page], page_info=page_info
        )

    @strawberry.field(
        description="The services the account offers, in the order it listed them "
        "(setServices); each one's link is /z/<handle>/<key>."
    )
    async def services(self, info: Info) -> list[OfferedService]:
        return await service_resolvers.services_of(info, self._account_id)

    @strawberry.field(
        description="The account's long-term (durable) memory, its own only, with the date "
        "each leaf last changed: the shared part at the top level, each service's part under "
        "services.<key>."
    )
    async def memory(self, info: Info) -> DurableMemory:
        return await memory_resolvers.memory(info, self._account_id)

    @strawberry.field(
        description="Changes to the account's durable memory, newest first: each changed leaf "
        "with its old and new value, the room and run that changed it, and when."
    )
    async def memory_history(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description="Page size, 1-100.")] = 20,
        after: Annotated[str | None, strawberry.argument(description="Start after.")] = None,
    ) -> MemoryChangeConnection:
        return await memory_resolvers.history(info, self._account_id, first, after)


@strawberry.type(description="A signed-in session.")
class AuthPayload:
    token: str = strawberry.field(
        description="Opaque session token: send as 'Authorization: Bearer <token>'. "
        "Also set as an HttpOnly cookie."
    )
    account: Me = strawberry.field(description="The signed-in account.")


@strawberry.type(description="The room a visit opened.")
class OpenRoomPayload:
    room: Room = strawberry.field(description="The deal (or demo) room.")
    guest_key: str | None = strawberry.field(
        description="For anonymous visitors: the guest key binding them to their rooms. "
        "Send it back as X-Guest-Key (also set as an HttpOnly cookie)."
    )
    created: bool = strawberry.field(description="True when this visit started a new room.")


@strawberry.type(description="The reader's chat line posted by an offer shortcut.")
class OfferChatPayload:
    message: Message = strawberry.field(description="The line, in the reader's own pane.")
    offer: Offer = strawberry.field(
        description="The offer, unchanged until an agent updates or closes it."
    )


@strawberry.type(description="The result of paying an offer.")
class PayOfferPayload:
    payment: Payment = strawberry.field(description="The payment.")
    offer: Offer = strawberry.field(description="The offer, at its new stage.")
    client_secret: str | None = strawberry.field(
        default=None,
        description="With the Stripe provider: the PaymentIntent's client secret, which the "
        "payer's browser confirms with Stripe.js (Elements). The stage moves when Stripe says "
        "the funds are held, never on the browser's word. Null with the test provider.",
    )
    publishable_key: str | None = strawberry.field(
        default=None,
        description="With the Stripe provider: the publishable key Stripe.js is loaded with.",
    )


@strawberry.type(
    description="How this server takes payments, for a client that pays offers: which "
    "provider runs and, with Stripe, what a browser loads Stripe.js and Elements with."
)
class PaymentSetup:
    provider: str = strawberry.field(
        description="test (pay with the test cards test_card_ok, test_card_delayed_capture, "
        "test_card_declined) or stripe (pay with paymentMethod stripe, then confirm the "
        "returned clientSecret with Stripe.js)."
    )
    publishable_key: str | None = strawberry.field(
        default=None, description="With the Stripe provider: Stripe's publishable key."
    )
    stripe_js_url: str | None = strawberry.field(
        default=None,
        description="With the Stripe provider: where to load Stripe.js from "
        "(DEALROOM_STRIPE_JS_URL).",
    )


@strawberry.type(description="The result of confirming delivery or cancelling a paid booking.")
class PaymentLifePayload:
    offer: Offer = strawberry.field(description="The offer, at its new stage.")
