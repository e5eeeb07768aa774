"""GraphQL object types of rooms and their written offers, which name each other: a room from
the reader's seat and pages of rooms, a written offer (the thing the parties approve and pay
against; its stage derived, never stored) and pages of offers. Never ORM rows: each is built
from a row or view (``from_*``, ``for_reader``)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

from dealroom.domain import access, pane_words
from dealroom.domain import offers as rules
from dealroom.domain.cursors import room_cursor
from dealroom.domain.errors import bad_input, forbidden
from dealroom.domain.offer_stage import GLOSSES, Stage
from dealroom.domain.seats import (
    GUEST_NAME,
    RoomKind,
    RoomMode,
    RoomNames,
    Seat,
    conversation_subtitle,
    on_host_side,
    pane_label,
    shown_room_title,
    side_of,
)
from dealroom.domain.terms import deliverable_label
from dealroom.persistence import models
from dealroom.resolvers import room_fields
from dealroom.schema.account_types import Account
from dealroom.schema.context import Info
from dealroom.schema.node import Node
from dealroom.schema.offer_types import (
    Agreement,
    OfferButton,
    OfferTerms,
    Payment,
    PaymentQuote,
)
from dealroom.schema.paging import DEPRECATED_FLAT, PageInfo, forward_page_info
from dealroom.schema.pane_types import Message, Pane
from dealroom.schema.service_types import OfferedService
from dealroom.services.live.events import MessageView

if TYPE_CHECKING:
    from dealroom.schema.ops_rooms import OpsRoom
    from dealroom.services.rooms.service import RoomAccess


@strawberry.type(description="A seat in a room, as the reader may see it.")
class Participant:
    id: strawberry.ID = strawberry.field(
        description="The participant's id (its pane's: Room.pane(participantId:), paneEvents)."
    )
    key: str = strawberry.field(
        description="The participant's key in the room: host, visitor, or a teammate's "
        "(host_2, visitor_2 …)."
    )
    seat: Seat = strawberry.field(description="The participant's side: HOST or VISITOR.")
    is_you: bool = strawberry.field(description="The reader is this participant.")
    shared_with_side: bool = strawberry.field(
        description="Its side's lead let the rest of the side read this pane."
    )
    may_approve: bool = strawberry.field(
        description="May approve written offers for the buyer (the buying account allows it)."
    )
    display_name: str = strawberry.field(description="Account display name, or 'A visitor'.")
    is_guest: bool = strawberry.field(description="An anonymous visitor not yet signed in.")
    account: Account | None = strawberry.field(description="Public profile, unless a guest.")


def _title(row: models.Room) -> str:
    """What a guest's room is about, read from the shared parts of its memory (the brand the
    visitor named, the first deliverable proposed); never the host's branch."""
    memory = row.memory if isinstance(row.memory, dict) else {}
    visitor = memory.get(Seat.VISITOR.value)
    visitor = visitor if isinstance(visitor, dict) else {}
    brand = visitor.get("company") or visitor.get("name")
    deal = memory.get("deal")
    proposals = deal.get("proposals") if isinstance(deal, dict) else None
    topics = [str(k) for k in proposals if k != "general"] if isinstance(proposals, dict) else []
    host_name = row.title.partition(" × ")[2]
    return shown_room_title(
        row.title,
        host_name,
        brand if isinstance(brand, str) else None,
        deliverable_label(topics[0]) if topics else None,
        row.created_at.date(),
    )


@strawberry.type(description="A permanent room, seen from the reader's seat.")
class Room(Node):
    id: strawberry.ID = strawberry.field(description="The room id.")
    kind: RoomKind = strawberry.field(description="HOME or DEAL.")
    mode: RoomMode = strawberry.field(description="LIVE, DEMO or SCRIPTED.")
    title: str = strawberry.field(
        description="The room's title: '<Brand> × <Host>' once the brand is known, else for a "
        "guest's room its first topic and the day it opened ('Sponsored post · Dec 6 × Maya "
        "Lin'), else 'A visitor × <Host>'."
    )
    created_at: datetime = strawberry.field(description="When the room was opened (UTC).")
    last_activity_at: datetime = strawberry.field(description="Last event in the room (UTC).")
    _row: strawberry.Private[models.Room]

    @classmethod
    def for_reader(cls, row: models.Room) -> Room:
        return cls(
            id=strawberry.ID(str(row.id)),
            kind=RoomKind(row.kind),
            mode=RoomMode(row.mode),
            title=_title(row),
            created_at=row.created_at,
            last_activity_at=row.last_activity_at,
            _row=row,
        )

    @strawberry.field(
        description="Operators only (FORBIDDEN otherwise): runs, goal events, verdicts, flags "
        "and spend of this room (as opsRoom)."
    )
    async def ops(
        self, info: Info
    ) -> Annotated[OpsRoom, strawberry.lazy("dealroom.schema.ops_rooms")]:
        from dealroom.resolvers.ops import ops_room  # ops types build on these ones

        return await ops_room(info, self.id)

    async def _access(self, info: Info) -> RoomAccess:
        """The room as this reader sees it (the same projection the services use)."""
        return await room_fields.room_access(info, self._row)

    async def _names(self, info: Info, participants: list[models.Participant]) -> RoomNames:
        by_seat = {p.key: p for p in participants}
        visitor_row = by_seat.get(Seat.VISITOR)
        visitor_id = visitor_row.account_id if visitor_row is not None else None
        # Both loads in one tick, so a page's rooms share one accounts batch.
        host, visitor = await asyncio.gather(
            info.context.loaders.accounts.load(self._row.host_account_id),
            _maybe(info.context.loaders.accounts.load(visitor_id) if visitor_id else None),
        )
        return RoomNames(
            host=host.display_name if host else "",
            visitor=visitor.display_name if visitor else None,
        )

    @strawberry.field(
        description="The host's service the room is about (from /z/<handle>/<service>); null "
        "for a room about none. Its name is public; what the host knows of it is not."
    )
    async def service(self, info: Info) -> OfferedService | None:
        if self._row.service_id is None:
            return None
        row = await info.context.loaders.services.load(self._row.service_id)
        return OfferedService.from_row(row) if row is not None else None

    @strawberry.field(description="The seat the reader writes from by default.")
    async def reader_seat(self, info: Info) -> Seat:
        return (await self._access(info)).reader_seat

    @strawberry.field(
        description="Sides whose panes the reader may read: both for the host, else its own."
    )
    async def readable_seats(self, info: Info) -> list[Seat]:
        return sorted(access.sides_of((await self._access(info)).readable), key=list(Seat).index)

    @strawberry.field(
        description="True when the guest visitor must sign in: something the room would send "
        "out is held for them, or they used up the messages a guest may send. Always false "
        "outside the visitor's view and once the room is claimed."
    )
    async def login_required(self, info: Info) -> bool:
        if Seat.VISITOR not in (await self._access(info)).seats:
            return False  # seed 000: the gate is the visitor view's
        return await info.context.loaders.login_required.load(self._row.id)

    @strawberry.field(
        description="How many outbound effects wait on the guest's sign-in (a count, never "
        "their content). Only in the visitor's own view; null for anyone else."
    )
    async def held_effects(self, info: Info) -> int | None:
        if Seat.VISITOR not in (await self._access(info)).seats:
            return None
        return await info.context.loaders.held_effects.load(self._row.id)

    @strawberry.field(
        description="The room's participants the reader may know of: everyone for the host "
        "side; for a visitor, the host and the people on its own side."
    )
    async def participants(self, info: Info) -> list[Participant]:
        view = await self._access(info)
        rows = [p for p in view.participants if p.removed_at is None and _knows(view, p.key)]
        accounts = await asyncio.gather(
            *(
                _maybe(
                    info.context.loaders.accounts.load(row.account_id) if row.account_id else None
                )
                for row in rows
            )
        )
        result = []
        for row, account in zip(rows, accounts, strict=True):
            result.append(
                Participant(
                    id=strawberry.ID(str(row.id)),
                    key=row.key,
                    seat=side_of(row.key) or Seat.VISITOR,
                    is_you=row.key in view.keys,
                    shared_with_side=row.shared,
                    may_approve=row.may_approve,
                    display_name=account.display_name if account else GUEST_NAME,
                    is_guest=account is None,
                    account=Account.from_row(account) if account else None,
                )
            )
        return result

    @strawberry.field(description="The host: the account whose agent speaks in this room.")
    async def host(self, info: Info) -> Account:
        row = await info.context.loaders.accounts.load(self._row.host_account_id)
        assert row is not None
        return Account.from_row(row)

    @strawberry.field(description="A header for the room, said from the reader's side.")
    async def subtitle(self, info: Info) -> str:
        view = await self._access(info)
        names = await self._names(info, view.participants)
        return conversation_subtitle(
            RoomKind(self._row.kind), RoomMode(self._row.mode), view.reader_seat, names
        )

    @strawberry.field(
        description="One pane: FORBIDDEN unless the reader may read it (the host reads both); "
        "null when the room has no such seat (a home room has no visitor)."
    )
    async def pane(
        self,
        info: Info,
        seat: Annotated[
            Seat | None,
            strawberry.argument(
                description="Whose pane by side: the reader's own there, else that side's "
                "lead's. Give this or participantId, or neither for the reader's own pane."
            ),
        ] = None,
        participant_id: Annotated[
            strawberry.ID | None,
            strawberry.argument(description="Whose pane by participant (Room.participants)."),
        ] = None,
    ) -> Pane | None:
        view = await self._access(info)
        participant = _addressed(view, seat, participant_id)
        if participant is None:
            return None
        if participant.key not in view.readable:
            raise forbidden("You cannot read that pane.")
        return await _pane(info, view, participant, await self._names(info, view.participants))

    @strawberry.field(
        description="Every pane the reader may read: the host side reads all of them, anyone "
        "else its own (and those its side's lead shared)."
    )
    async def panes(self, info: Info) -> list[Pane]:
        view = await self._access(info)
        names = await self._names(info, view.participants)
        readable = [p for p in view.participants if p.key in view.readable]
        return list(await asyncio.gather(*(_pane(info, view, p, names) for p in readable)))

    @strawberry.field(
        description="Where the deal stands: derived from the room's current written offer "
        "(NO_WRITTEN_OFFER when there is none)."
    )
    async def stage(self, info: Info) -> Stage:
        offer = await info.context.loaders.current_offer.load(self._row.id)
        return room_fields.offer_stage(offer)

    @strawberry.field(description="The room's current written offer, if any.")
    async def offer(self, info: Info) -> Offer | None:
        row = await info.context.loaders.current_offer.load(self._row.id)
        if row is None:
            return None
        return Offer.for_reader(row, (await self._access(info)).reader_seat)

    @strawberry.field(
        description="The room's written offers, newest first (a closed one stays listed). "
        "first: 1-100."
    )
    async def offers(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description="Page size, 1-100.")] = 20,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
    ) -> OfferConnection:
        seat, rows = await room_fields.room_offers(info, self._row, first, after)
        edges = [
            OfferEdge(cursor=room_cursor(row.created_at, row.id), node=Offer.for_reader(row, seat))
            for row in rows[:first]
        ]
        return OfferConnection(
            edges=edges,
            has_next_page=len(rows) > first,
            end_cursor=edges[-1].cursor if edges else None,
        )

    @strawberry.field(description="The newest message in a pane the reader may read.")
    async def last_message(self, info: Info) -> Message | None:
        view = await self._access(info)
        panes = [p for p in view.participants if p.key in view.readable]
        rows = await asyncio.gather(*(info.context.loaders.last_message.load(p.id) for p in panes))
        newest: MessageView | None = None
        for participant, row in zip(panes, rows, strict=True):
            if row is not None and (newest is None or row.seq > newest.seq):
                newest = MessageView.from_row(row, side_of(participant.key) or Seat.VISITOR)
        return Message.from_view(newest, view.reader_seat) if newest else None


async def _pane(
    info: Info, view: RoomAccess, participant: models.Participant, names: RoomNames
) -> Pane:
    pane_seat = side_of(participant.key) or Seat.VISITOR
    account = await _maybe(
        info.context.loaders.accounts.load(participant.account_id)
        if participant.account_id
        else None
    )
    label = pane_label(
        view.reader_seat,
        pane_seat,
        names,
        own=participant.key in view.keys,
        pane_name=account.display_name if account is not None else None,
    )
    return Pane(
        seat=pane_seat,
        key=participant.key,
        participant_id=strawberry.ID(str(participant.id)),
        relationship_label=label,
        _participant_id=participant.id,
        _reader_seat=view.reader_seat,
    )


def _knows(view: RoomAccess, key: str) -> bool:
    """The host side knows everyone in its room; a visitor knows the host and its own side
    (one non-host participant's presence on the other side is not another's business)."""
    if any(on_host_side(k) for k in view.keys):
        return True
    return key == Seat.HOST.value or side_of(key) in view.seats


def _addressed(
    view: RoomAccess, seat: Seat | None, participant_id: strawberry.ID | None
) -> models.Participant | None:
    if seat is not None and participant_id is not None:
        raise bad_input("Give seat or participantId, not both.", "participantId")
    if participant_id is None:
        # Neither: the pane the reader writes into (as postMessage and paneEvents default).
        return view.participant(seat) if seat is not None else view.by_key(view.reader_key)
    try:
        wanted = uuid.UUID(str(participant_id))
    except ValueError as exc:
        raise bad_input("That is not a valid participant id.", "participantId") from exc
    found = next((p for p in view.participants if p.id == wanted), None)
    if found is None or found.key not in view.readable:
        raise forbidden("You cannot read that pane.")
    return found


@strawberry.type(description="An edge in a room connection.")
class RoomEdge:
    cursor: str = strawberry.field(description="The room's cursor.")
    node: Room = strawberry.field(description="The room.")


@strawberry.type(description="The reader's rooms, most recently active first.")
class RoomConnection:
    edges: list[RoomEdge] = strawberry.field(description="The rooms.")
    page_info: PageInfo = strawberry.field(description="Paging state.")
    total_count: int = strawberry.field(description="How many rooms the reader has in all.")


@strawberry.type(description="A written offer: the thing the parties approve and pay against.")
class Offer(Node):
    id: strawberry.ID = strawberry.field(description="The offer id.")
    version: int = strawberry.field(
        description="Grows on every material rewrite; the brand approves each version."
    )
    brand_approved_at: datetime | None = strawberry.field(
        description="When the brand approved this version (null until then)."
    )
    created_at: datetime = strawberry.field(description="When it was drawn (UTC).")
    updated_at: datetime = strawberry.field(description="Last change (UTC).")
    _row: strawberry.Private[models.Offer]
    _seat: strawberry.Private[Seat]

    @classmethod
    def for_reader(cls, row: models.Offer, seat: Seat) -> Offer:
        return cls(
            id=strawberry.ID(str(row.id)),
            version=row.version,
            brand_approved_at=row.brand_approved_at,
            created_at=row.created_at,
            updated_at=row.updated_at,
            _row=row,
            _seat=seat,
        )

    @strawberry.field(description="The stage, derived from the offer's status and approvals.")
    def stage(self) -> Stage:
        return room_fields.offer_stage(self._row)

    @strawberry.field(description="What the stage means, in words.")
    def stage_gloss(self) -> str:
        return GLOSSES[room_fields.offer_stage(self._row)]

    @strawberry.field(description="The terms.")
    def terms(self) -> OfferTerms:
        return OfferTerms.from_row(self._row)

    @strawberry.field(
        description="What the brand would pay now (due slice + 20% platform fee); null when "
        "the offer holds no payable fee."
    )
    def payment(self) -> PaymentQuote | None:
        quote = room_fields.offer_quote(self._row)
        if quote is None:
            return None
        return PaymentQuote.from_quote(quote, not (self._row.terms or {}).get("dueSlicePercent"))

    @strawberry.field(description="Payments made against this offer, oldest first.")
    async def payments(self, info: Info) -> list[Payment]:
        rows = await room_fields.offer_payments(info, self._row.id)
        return [Payment.from_row(row) for row in rows]

    @strawberry.field(description="The newest agreement draft; null until one is drawn.")
    async def agreement(self, info: Info) -> Agreement | None:
        row = await room_fields.latest_agreement(info, self._row.id)
        if row is None:
            return None
        return Agreement(
            text=row.text,
            version=row.version,
            fingerprint=row.fingerprint,
            current=row.fingerprint == self._row.fingerprint,
            created_at=row.created_at,
        )

    @strawberry.field(description="What the reader may do now, from its seat.")
    def viewer_actions(self) -> list[rules.Action]:
        return room_fields.offer_actions(self._row, self._seat)

    @strawberry.field(
        description="The buttons the reader may press now, with the labels the card shows "
        "and the agents name them by (one source)."
    )
    def viewer_buttons(self) -> list[OfferButton]:
        actions = room_fields.offer_actions(self._row, self._seat)
        return [OfferButton(action=a, label=pane_words.button(a)) for a in actions]

    @strawberry.field(description="The room the offer belongs to.")
    async def room(self, info: Info) -> Room:
        row = await room_fields.offer_room(info, self._row.room_id)
        return Room.for_reader(row)


@strawberry.type(description="An edge in an offer connection.")
class OfferEdge:
    cursor: str = strawberry.field(description="The offer's cursor.")
    node: Offer = strawberry.field(description="The offer.")


@strawberry.type(description="A room's written offers, newest first.")
class OfferConnection:
    edges: list[OfferEdge] = strawberry.field(description="The offers.")
    has_next_page: bool = strawberry.field(
        description="Older offers follow the last edge.", deprecation_reason=DEPRECATED_FLAT
    )
    end_cursor: str | None = strawberry.field(
        description="Cursor of the last edge.", deprecation_reason=DEPRECATED_FLAT
    )

    @strawberry.field(description="Relay page info.")
    def page_info(self) -> PageInfo:
        cursors = [edge.cursor for edge in self.edges]
        # hasPreviousPage false: Relay allows it when paging forward.
        return forward_page_info(cursors, self.has_next_page, None)


async def _maybe(load: Awaitable[models.Account | None] | None) -> models.Account | None:
    return await load if load is not None else None
