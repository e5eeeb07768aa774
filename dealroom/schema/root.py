"""The root types, Query, Mutation and Subscription, with the partner and operator fields
merged in. No business logic here: resolvers do the work. The Schema object built from them
is ``schema/build.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import strawberry

from dealroom.domain.offers import Action
from dealroom.domain.seats import Seat
from dealroom.resolvers import (
    accounts,
    memory,
    messages,
    nodes,
    offers,
    payments,
    room_activity,
    rooms,
)
from dealroom.schema.account_types import Account
from dealroom.schema.context import Info
from dealroom.schema.inputs import PostMessageInput, SignInInput, SignUpInput
from dealroom.schema.invitations import InvitationsMutation
from dealroom.schema.locale import LocaleMutation
from dealroom.schema.memory_types import MemoryChange
from dealroom.schema.node import Node
from dealroom.schema.notifications import NotifyMutation, NotifyQuery, NotifySubscription
from dealroom.schema.offer_types import StageChanged
from dealroom.schema.ops import OpsMutation, OpsQuery
from dealroom.schema.ops_queue import OpsQueueMutation, OpsQueueQuery
from dealroom.schema.ops_search import OpsSearchQuery
from dealroom.schema.ops_types import RoomOps
from dealroom.schema.pane_types import Message, PaneEvent
from dealroom.schema.partners import PartnerMutation, PartnerQuery
from dealroom.schema.payment_ops import PaymentOpsMutation, PaymentOpsQuery
from dealroom.schema.room_activity import RoomActivity
from dealroom.schema.room_types import Offer, Room, RoomConnection
from dealroom.schema.services import ServicesMutation
from dealroom.schema.types import (
    AuthPayload,
    Me,
    OfferChatPayload,
    OpenRoomPayload,
    PaymentLifePayload,
    PaymentSetup,
    PayOfferPayload,
)


@strawberry.type(description="Reads.")
class Query(PartnerQuery, OpsQuery, OpsQueueQuery, OpsSearchQuery, NotifyQuery, PaymentOpsQuery):
    @strawberry.field(
        description="The signed-in account (the managed account when acting as one); "
        "null when anonymous."
    )
    async def me(self, info: Info) -> Me | None:
        return await accounts.me(info)

    @strawberry.field(description="How this server takes payments (anyone may read it).")
    def payment_setup(self, info: Info) -> PaymentSetup:
        return offers.payment_setup(info)

    @strawberry.field(description="An account's public profile by handle. NOT_FOUND if unknown.")
    async def account(
        self, info: Info, handle: Annotated[str, strawberry.argument(description="The handle.")]
    ) -> Account:
        return await accounts.account(info, handle)

    @strawberry.field(
        description="Any Node by its id (Relay): a room, a written offer or an account's "
        "public profile, read with the same access rules as `room`, `offer` and `account`. "
        "Null when there is no such node or the reader may not see it."
    )
    async def node(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description="Node id.")]
    ) -> Node | None:
        return await nodes.node(info, id)

    @strawberry.field(
        description="Several Nodes by id, in the order asked (null where `node` would be "
        "null). At most DEALROOM_MAX_PAGE_SIZE ids: BAD_USER_INPUT beyond."
    )
    async def nodes(
        self,
        info: Info,
        ids: Annotated[list[strawberry.ID], strawberry.argument(description="Node ids.")],
    ) -> list[Node | None]:
        return await nodes.nodes(info, ids)

    @strawberry.field(
        description="A room the reader holds a seat in. NOT_FOUND for any other room."
    )
    async def room(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description="Room id.")]
    ) -> Room:
        return await rooms.room(info, id)

    @strawberry.field(
        description="The reader's rooms (hosted, visited, or bound to its guest key), "
        "most recently active first. first: 1-100."
    )
    async def rooms(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description="Page size, 1-100.")] = 20,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
    ) -> RoomConnection:
        return await rooms.list_rooms(info, first, after)

    @strawberry.field(
        description="A written offer. Participants of its room only: NOT_FOUND for anyone else."
    )
    async def offer(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description="Offer id.")]
    ) -> Offer:
        return await offers.offer(info, id)

    @strawberry.field(
        description="Operators only (NOT_FOUND otherwise): a room's frustration flags, "
        "model spend and the Guard's verdicts."
    )
    async def room_ops(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        flags: Annotated[int, strawberry.argument(description="Newest flags, 1-100.")] = 20,
    ) -> RoomOps:
        return await rooms.room_ops(info, room_id, flags)


@strawberry.type(description="Writes. Each mutation is one transaction: on error, nothing changes.")
class Mutation(
    PartnerMutation,
    OpsMutation,
    OpsQueueMutation,
    NotifyMutation,
    PaymentOpsMutation,
    ServicesMutation,
    LocaleMutation,
    InvitationsMutation,
):
    @strawberry.mutation(
        description="Create an account (and its home room) and sign in. CONFLICT if the "
        "handle or email is taken. Carrying a guest key (X-Guest-Key or the guest cookie), it "
        "also claims the guest's rooms (see claimRoom)."
    )
    async def sign_up(
        self,
        info: Info,
        input: Annotated[SignUpInput, strawberry.argument(description="The account.")],
    ) -> AuthPayload:
        return await accounts.sign_up(info, input)

    @strawberry.mutation(
        description="Sign in. UNAUTHENTICATED on a wrong email or password. Carrying a guest "
        "key, it also claims the guest's rooms (see claimRoom)."
    )
    async def sign_in(
        self,
        info: Info,
        input: Annotated[SignInInput, strawberry.argument(description="Credentials.")],
    ) -> AuthPayload:
        return await accounts.sign_in(info, input)

    @strawberry.mutation(
        description="For browser clients: act as a managed account on later requests by "
        "setting the HttpOnly dealroom_act_as cookie (null clears it). FORBIDDEN without a "
        "management edge. API clients may send X-Act-As instead."
    )
    async def act_as(
        self,
        info: Info,
        account_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="The managed account, or null.")
        ],
    ) -> Me:
        return await accounts.act_as(info, account_id)

    @strawberry.mutation(
        description="End the presented session and clear auth cookies. True if a session "
        "token was presented."
    )
    async def sign_out(self, info: Info) -> bool:
        return await accounts.sign_out(info)

    @strawberry.mutation(
        description="Visit a host's link. Anonymous visitors get a guest key; a bare visit "
        "reuses the visitor's newest room with the host while they have not spoken in it; "
        "newConversation always starts a new room; the host's own visit opens a demo room. "
        "With service (the last part of /z/<handle>/<service>) the room is about that service "
        "of the host's and a bare visit reuses only a room about it; NOT_FOUND when the host "
        "does not offer it."
    )
    async def open_visitor_room(
        self,
        info: Info,
        handle: Annotated[str, strawberry.argument(description="The host's handle.")],
        new_conversation: Annotated[
            bool, strawberry.argument(description="Always start a new room.")
        ] = False,
        service: Annotated[
            str | None,
            strawberry.argument(description="The service's key (or name); default: none."),
        ] = None,
    ) -> OpenRoomPayload:
        return await rooms.open_visitor_room(info, handle, new_conversation, service)

    @strawberry.mutation(
        description="Claim a guest's room for the signed-in account: the request must carry "
        "the guest key that holds it (X-Guest-Key or the guest cookie). Binds the account to "
        "the room's visitor (same participant, same pane), sets the written offer's buyer, "
        "retitles the room '<Brand> × <Host>', and replays what the login gate held, in order. "
        "The key's other rooms are claimed too. signUp and signIn do this by themselves when "
        "they carry a guest key. UNAUTHENTICATED when not signed in; NOT_FOUND when the key "
        "does not hold the room; CONFLICT when it is bound to another account. Idempotent."
    )
    async def claim_room(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
    ) -> Room:
        return await rooms.claim_room(info, room_id)

    @strawberry.mutation(
        description="Post into the reader's own pane. Idempotent on clientMessageId per pane. "
        "Never waits for an agent. A guest past the guest message cap is refused: FORBIDDEN "
        "with extensions.reason LOGIN_REQUIRED."
    )
    async def post_message(
        self,
        info: Info,
        input: Annotated[PostMessageInput, strawberry.argument(description="The message.")],
    ) -> Message:
        return await messages.post_message(info, input)

    @strawberry.mutation(
        description="Run the reader's failed agent turns in a pane again (after the agent "
        "could not answer). Returns how many were queued. Effects of a turn are stored only "
        "when it succeeds, so a re-run never doubles them."
    )
    async def retry_turn(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        seat: Annotated[
            Seat | None, strawberry.argument(description="The pane; default: the reader's own.")
        ] = None,
    ) -> int:
        return await messages.retry_turn(info, room_id, seat)

    @strawberry.mutation(
        description="Operators only (NOT_FOUND otherwise): put one durable-memory leaf back to "
        "its value before the given change. The revert is itself a recorded change. CONFLICT "
        "when the leaf changed again since (revert the later change first)."
    )
    async def revert_memory_change(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The change to revert.")],
    ) -> MemoryChange:
        return await memory.revert(info, id)

    @strawberry.mutation(
        description="Approve the written offer, by the reader's seat. The brand (visitor) "
        "approves first: that stamps this version (BRAND_ACKED_AWAITING_TALENT). The talent "
        "(host) approving after that is the booking (BOOKED_AWAITING_PAYMENT). Out of order or "
        "at a stage that cannot be approved: CONFLICT with extensions.stage and "
        "extensions.version. Approving again is a no-op. Pass `version` to approve only the "
        "version you read (CONFLICT if it was rewritten since). A guest visitor: FORBIDDEN "
        "with extensions.reason LOGIN_REQUIRED (sign in first; the room stays theirs)."
    )
    async def approve_offer(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
        version: Annotated[
            int | None, strawberry.argument(description="The version the reader approves.")
        ] = None,
    ) -> Offer:
        return await offers.approve_offer(info, offer_id, version)

    @strawberry.mutation(
        description="Counter the written offer: posts 'Counter to the written offer: <text>' "
        "into the reader's own pane, as the reader. The offer is unchanged until an agent "
        "redraws or closes it. CONFLICT once it is booked or closed. Idempotent on "
        "clientMessageId (by default: the same text on the same version posts once)."
    )
    async def counter_offer(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
        text: Annotated[str, strawberry.argument(description="What to change.")],
        client_message_id: Annotated[
            str | None, strawberry.argument(description="Idempotency key for the line.")
        ] = None,
    ) -> OfferChatPayload:
        return await offers.offer_shortcut(info, offer_id, Action.COUNTER, text, client_message_id)

    @strawberry.mutation(
        description="Reject the written offer: posts 'I reject the written offer. <text>' into "
        "the reader's own pane. The agent closes the offer (DECLINED) when it rules the "
        "negotiation abandoned; the row is unchanged until then."
    )
    async def reject_offer(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
        text: Annotated[str, strawberry.argument(description="An optional reason.")] = "",
        client_message_id: Annotated[
            str | None, strawberry.argument(description="Idempotency key for the line.")
        ] = None,
    ) -> OfferChatPayload:
        return await offers.offer_shortcut(info, offer_id, Action.REJECT, text, client_message_id)

    @strawberry.mutation(
        description="Ask to add to the written offer: posts 'Please add to the written offer: "
        "<text>' into the reader's own pane. A redrawn version needs the brand's approval again."
    )
    async def add_to_offer(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
        text: Annotated[str, strawberry.argument(description="What to add.")],
        client_message_id: Annotated[
            str | None, strawberry.argument(description="Idempotency key for the line.")
        ] = None,
    ) -> OfferChatPayload:
        return await offers.offer_shortcut(info, offer_id, Action.ADD, text, client_message_id)

    @strawberry.mutation(
        description="The brand pays a booked offer: the due slice plus the 20% platform fee "
        "(see Offer.payment). Test methods: test_card_ok (captured: BOOKED_PAYMENT_HELD), "
        "test_card_delayed_capture (PENDING_PAY_CAPTURE, captured later), test_card_declined "
        "(PAYMENT_DECLINED; the stage stays BOOKED_AWAITING_PAYMENT). FORBIDDEN for the host; "
        "CONFLICT at any other stage. Idempotent on idempotencyKey. A guest visitor: "
        "FORBIDDEN with extensions.reason LOGIN_REQUIRED."
    )
    async def pay_offer(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
        payment_method: Annotated[str, strawberry.argument(description="The payment method.")],
        idempotency_key: Annotated[
            str, strawberry.argument(description="1-64 characters; a retry reuses it.")
        ],
    ) -> PayOfferPayload:
        return await offers.pay_offer(info, offer_id, payment_method, idempotency_key)

    @strawberry.mutation(
        description="The brand confirms the booked work was delivered: the held payment is "
        "released (captured at the provider) and the offer is COMPLETED. FORBIDDEN for the "
        "host; CONFLICT unless the stage is BOOKED_PAYMENT_HELD; repeating it once COMPLETED "
        "changes nothing."
    )
    async def confirm_delivery(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
    ) -> PaymentLifePayload:
        return await payments.confirm_delivery(info, offer_id)

    @strawberry.mutation(
        description="The talent cancels a paid booking before delivery: the whole held "
        "payment goes back to the brand and the offer is WITHDRAWN. FORBIDDEN for the brand; "
        "CONFLICT unless the stage is BOOKED_PAYMENT_HELD."
    )
    async def cancel_paid_booking(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
    ) -> PaymentLifePayload:
        return await payments.cancel_paid_booking(info, offer_id)


@strawberry.type(description="Live streams.")
class Subscription(NotifySubscription):
    @strawberry.subscription(
        description="A pane's events. With `after`, first replays every stored event after "
        "that cursor, then goes live, with no gap and no duplicate. Without it, starts live. "
        "UNAVAILABLE (extensions.retryAfterSeconds) when too many subscriptions are starting "
        "at once: subscribe again after that long."
    )
    async def pane_events(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        seat: Annotated[
            Seat | None,
            strawberry.argument(
                description="Whose pane by side: the reader's own there, else that side's "
                "lead's (the reader's own pane when neither this nor participantId is given)."
            ),
        ] = None,
        after: Annotated[
            str | None,
            strawberry.argument(description="Replay stored events after this cursor first."),
        ] = None,
        participant_id: Annotated[
            strawberry.ID | None,
            strawberry.argument(description="Whose pane by participant (Room.participants)."),
        ] = None,
    ) -> AsyncIterator[PaneEvent]:
        return messages.pane_events(info, room_id, seat, after, participant_id)

    @strawberry.subscription(
        description="The signed-in reader's room list, live: which room changed (a new room "
        "it hosts, a message in a pane it reads, a stage change) in its newest "
        "DEALROOM_MAX_PAGE_SIZE rooms and the rooms opened after. Hints only: re-read the "
        "room. Starts with RESYNC (read the list), and sends it again when hints may have been "
        "lost; nothing is replayed. `after` is accepted for clients that resume every stream "
        "by cursor, and ignored. UNAUTHENTICATED for an anonymous reader or guest; sessions "
        "only (an API key is FORBIDDEN). Signing out closes the socket (4401)."
    )
    async def room_events(
        self,
        info: Info,
        after: Annotated[
            str | None, strawberry.argument(description="Ignored (nothing is replayed).")
        ] = None,
    ) -> AsyncIterator[RoomActivity]:
        del after
        return room_activity.room_events(info)

    @strawberry.subscription(
        description="A written offer's stage changes, for partner integrations. With `after`, "
        "first replays every stored change after that cursor, then goes live. Participants of "
        "the offer's room only. UNAVAILABLE (extensions.retryAfterSeconds) when too many "
        "subscriptions are starting at once: subscribe again after that long."
    )
    async def offer_stage(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
        after: Annotated[
            str | None,
            strawberry.argument(description="Replay stored changes after this cursor first."),
        ] = None,
    ) -> AsyncIterator[StageChanged]:
        return offers.offer_stage(info, offer_id, after)
