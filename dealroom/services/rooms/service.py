"""Opening, reading and listing rooms, with every read projected for the reader's seat."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import structlog

from dealroom.domain import access, greeting, service_parts, visits
from dealroom.domain.cursors import parse_room_cursor
from dealroom.domain.durable import public_dropped, screen_public
from dealroom.domain.errors import DomainError, ErrorCode, not_found
from dealroom.domain.seats import AuthorKind, RoomKind, RoomMode, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import Flag, Message, Participant, Room
from dealroom.persistence.offered_services import ServiceRepository
from dealroom.persistence.repositories import (
    AccountRepository,
    GuestCount,
    RoomRepository,
    WriterRoom,
    WriterSeat,
)
from dealroom.services.accounts.identity import Identity, digest, new_guest_key
from dealroom.services.accounts.offered import offered_service
from dealroom.services.clock import Clock
from dealroom.services.rooms import guests

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RoomAccess:
    """A room as one reader may see it."""

    room: Room
    participants: list[Participant]
    keys: frozenset[str]
    """The participants (by key) the reader is."""

    @property
    def seats(self) -> frozenset[Seat]:
        return access.sides_of(self.keys)

    @property
    def reader_seat(self) -> Seat:
        return _reader_seat(self.room.mode, self.seats)

    @property
    def reader_key(self) -> str:
        """The pane the reader writes into by default."""
        return _own(self.keys, self.reader_seat)

    @property
    def readable(self) -> frozenset[str]:
        """The panes (by key) the reader reads (access R2, R3, R8)."""
        return access.readable_keys(self.keys, access.holders(self.participants))

    def participant(self, seat: Seat) -> Participant | None:
        """The pane on ``seat`` the reader means: its own there, else that side's lead's."""
        return self.by_key(access.own_key(self.keys, seat) or seat.value)

    def by_key(self, key: str) -> Participant | None:
        return next((p for p in self.participants if p.key == key), None)


@dataclass(frozen=True, slots=True)
class WriterAccess:
    """A room as the writer of its own pane reads it (``room_for_writer``): plain rows of
    what a post needs, no memory."""

    room: WriterRoom
    participants: list[WriterSeat]
    keys: frozenset[str]
    guest_posts: Mapping[uuid.UUID, int] = field(default_factory=dict)
    """Posts charged to each unclaimed guest seat's key, when the read counted them
    (``room_for_writer``'s ``count``)."""

    @property
    def seats(self) -> frozenset[Seat]:
        return access.sides_of(self.keys)

    @property
    def reader_seat(self) -> Seat:
        return _reader_seat(self.room.mode, self.seats)

    def participant(self, seat: Seat) -> WriterSeat | None:
        """The reader's own pane on ``seat`` (a writer writes only its own)."""
        key = access.own_key(self.keys, seat)
        return next((p for p in self.participants if p.key == key), None)


def _reader_seat(mode: str, seats: frozenset[Seat]) -> Seat:
    seat = access.reader_seat(RoomMode(mode), seats)
    assert seat is not None  # a room's access exists only for seat holders
    return seat


def _own(keys: frozenset[str], seat: Seat) -> str:
    key = access.own_key(keys, seat)
    assert key is not None  # the reader's seat is one of the sides it holds
    return key


def parse_id(raw: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError as exc:
        raise DomainError(
            ErrorCode.BAD_USER_INPUT, f"That is not a valid {what} id.", field=f"{what}Id"
        ) from exc


async def room_for_reader(db: Db, identity: Identity, room_id: uuid.UUID) -> RoomAccess:
    """The room if the reader holds a seat in it. Anyone else gets NOT_FOUND: a room's
    existence is not revealed to those outside it."""
    rooms = RoomRepository(db)
    room = await rooms.by_id(room_id)
    if room is None:
        raise not_found("Room")
    participants = await rooms.participants(room.id)
    keys = access.keys_of(identity.viewer, access.holders(participants))
    if not keys:
        raise not_found("Room")
    return RoomAccess(room, participants, keys)


async def room_for_writer(
    db: Db, identity: Identity, room_id: uuid.UUID, *, count: GuestCount | None = None
) -> WriterAccess:
    """:func:`room_for_reader` for a writer of its own pane (``postMessage``): one statement
    of plain rows, without the room's memory. With ``count``, each unclaimed guest seat's
    charged posts come with it (``WriterAccess.guest_posts``)."""
    found = await RoomRepository(db).for_writer(room_id, count=count)
    if found is None:
        raise not_found("Room")
    keys = access.keys_of(identity.viewer, access.holders(found.participants))
    if not keys:
        raise not_found("Room")
    return WriterAccess(found.room, found.participants, keys, found.guest_posts)


@dataclass(frozen=True, slots=True)
class OpenedRoom:
    room: Room
    guest_key: str | None
    created: bool


async def open_visitor_room(
    db: Db,
    clock: Clock,
    identity: Identity,
    *,
    handle: str,
    new_conversation: bool,
    client_ip: str | None = None,
    guest_keys_per_hour: int | None = None,
    greet: bool,
    band_percent: Decimal | None = None,
    service: str | None = None,
) -> OpenedRoom:
    """A visit to ``/z/<handle>`` (seed 002 "Authentication Modes & Visitor Resolution").
    A new guest key counts against its address's hourly allowance (``guest_keys_per_hour``).
    A new room's visitor pane opens with the welcome (``greet``, domain.greeting). The seed and
    the welcome are screened with the firewall's band (``band_percent``, the deployment's).
    ``service`` is the key in ``/z/<handle>/<service>`` (S4): the room is about that service and
    reuses only a room about it; None leaves the room about no service."""
    accounts = AccountRepository(db)
    rooms = RoomRepository(db)
    visitor = identity.account
    fresh_guest = visitor is None and identity.guest_key is None
    # Locking the host row serialises visits to one host, so two racing bare visits by the same
    # visitor cannot both decide to create a room (the empty-room reuse rule holds). A guest
    # without a key gets one minted here: it has no room to reuse and no twin to race, so its visit
    # takes no lock (else every first visit to a popular link waits in one line: ~4.5 rooms/s for
    # one host under bench/realtime.py's set-up).
    host = await accounts.by_handle(handle.strip().lower(), lock=not fresh_guest)
    if host is None:
        raise not_found("Account")
    offered = await offered_service(db, host.id, service)
    guest_key = None
    if visitor is None:
        guest_key = identity.guest_key
        if guest_key is None:
            guest_key = new_guest_key()
            if guest_keys_per_hour is not None:
                await guests.mint_allowed(
                    db,
                    client_ip,
                    digest(guest_key),
                    per_hour=guest_keys_per_hour,
                    now=clock.now(),
                )
    kind = visits.visitor_kind(host.id, visitor.id if visitor else None)
    guest_hash = digest(guest_key) if guest_key else None

    prior = await rooms.newest_visit(
        host.id,
        account_id=visitor.id if visitor else None,
        guest_key_hash=guest_hash,
        service_id=offered.id if offered is not None else None,
    )
    reuse = visits.room_to_reuse(
        None
        if prior is None
        else visits.PriorRoom(prior[0].id, prior[1].first_spoke_at is not None),
        new_conversation,
    )
    if reuse is not None and prior is not None:
        return OpenedRoom(prior[0], guest_key, created=False)

    plan = visits.new_room(kind, host.display_name, visitor.display_name if visitor else None)
    now = clock.now()
    seeded = await seed_host_memory(
        db,
        host.id,
        band_percent=band_percent,
        service=service_parts.service_key(offered.name) if offered is not None else None,
    )
    memory = seeded.memory
    room = Room(
        id=uuid.uuid4(),
        kind=RoomKind.DEAL,
        mode=plan.mode,
        host_account_id=host.id,
        service_id=offered.id if offered is not None else None,
        title=plan.title,
        memory=memory,
        event_seq=1 if greet else 0,
        created_at=now,
        last_activity_at=now,
    )
    await db.add(room)
    visitor_pane = Participant(
        id=uuid.uuid4(),
        room_id=room.id,
        key=Seat.VISITOR,
        account_id=visitor.id if visitor else None,
        guest_key_hash=guest_hash,
        created_at=now,
    )
    host_pane = Participant(
        id=uuid.uuid4(),
        room_id=room.id,
        key=Seat.HOST,
        account_id=host.id,
        last_merged_memory_version=seeded.version,
        created_at=now,
    )
    await db.add(host_pane, visitor_pane)
    if (flag := seed_flag(seeded, room.id, host_pane.id, now)) is not None:
        await db.add(flag)
    if greet:
        # The welcome is the room's first event (``event_seq`` 1): nobody can be subscribed
        # to a room that did not exist, so it is stored and read as history, never published.
        body = greeting.welcome(
            host.display_name,
            visitor.display_name if visitor else None,
            memory,
            band_percent=band_percent,
        )
        await db.add(  # after its pane: no ORM relationship orders the two inserts
            Message(
                id=uuid.uuid4(),
                room_id=room.id,
                participant_id=visitor_pane.id,
                seq=1,
                author_kind=AuthorKind.AGENT.value,
                body=body,
                session_no=1,
                client_message_id=greeting.KEY,
                created_at=now,
            )
        )
    return OpenedRoom(room, guest_key, created=True)


@dataclass(frozen=True, slots=True)
class SeededMemory:
    memory: dict[str, object]
    version: int
    """The durable version the seed reflects: the host participant's
    ``last_merged_memory_version``, so AccUpdate merges only what changes after it."""
    dropped: tuple[str, ...] = ()
    """D7: the ``public`` leaves left out because they state a private value."""


def seed_flag(
    seeded: SeededMemory,
    room_id: uuid.UUID,
    host_participant_id: uuid.UUID,
    now: datetime,
    run_id: uuid.UUID | None = None,
) -> Flag | None:
    """D7: the operator flag for the public leaves a seed left out (None when none were)."""
    if not seeded.dropped:
        return None
    log.warning("seed_public_dropped", room_id=str(room_id), leaves=list(seeded.dropped))
    return Flag(
        room_id=room_id,
        participant_id=host_participant_id,
        run_id=run_id,
        level="firewall",
        evidence=public_dropped(seeded.dropped, "seeded"),
        created_at=now,
    )


async def seed_host_memory(
    db: Db,
    host_id: uuid.UUID,
    *,
    band_percent: Decimal | None = None,
    service: str | None = None,
) -> SeededMemory:
    """The memory a new deal room starts with — any new room, a sibling after a booking too.

    seed 002 layer 1: only the host seeds a deal room (into the host branch). The visitor's
    account memory is never read here, whoever the visitor is.

    The home room's host branch is used when it changed after durable memory did, so a link opened
    right after the host told their agent something is not stale. Either way the room reads the
    shared part and its ``service``'s part only (S1)."""
    memories = await AccountRepository(db).memories([host_id])
    durable = memories[0] if memories else None
    version = durable.version if durable is not None else 0
    home = await RoomRepository(db).home_room(host_id)
    home_branch = (home.memory or {}).get("host") if home is not None else None
    if (
        isinstance(home_branch, dict)
        and home_branch
        and home is not None
        and home.memory_updated_at is not None
        and (durable is None or not durable.document or home.memory_updated_at > durable.updated_at)
    ):
        branch: Mapping[str, Any] = home_branch
    else:
        branch = durable.document if durable is not None and durable.document else {}
    # S5: what is filed under the host's other services stays out of a room about one.
    services = await ServiceRepository(db).keys_of(host_id) if service is not None else ()
    branch = service_parts.view(branch, service, services)
    if not branch:
        return SeededMemory({}, version)
    # D7: a public note that states a limit, a figure within the band of one, or a private
    # value never seeds a room.
    screened, dropped = screen_public(branch, band_percent=band_percent)
    return SeededMemory({"host": screened}, version, tuple(dropped))


async def participants_by_room(
    db: Db, room_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[Participant]]:
    """Each room's participants, in one statement."""
    found: dict[uuid.UUID, list[Participant]] = {}
    if room_ids:
        for participant in await RoomRepository(db).participants_of(room_ids):
            found.setdefault(participant.room_id, []).append(participant)
    return found


@dataclass(frozen=True, slots=True)
class RoomPage:
    rooms: list[Room]
    has_next: bool
    total: int


async def rooms_for_reader(
    db: Db, identity: Identity, *, first: int, after: str | None
) -> RoomPage:
    viewer = identity.viewer
    position = parse_room_cursor(after) if after is not None else None
    if viewer.anonymous:
        return RoomPage([], False, 0)
    repo = RoomRepository(db)
    found = await repo.page_for_reader(
        account_id=viewer.account_id,
        guest_key_hash=viewer.guest_key_hash,
        limit=first + 1,
        after=position,
    )
    total = await repo.count_for_reader(
        account_id=viewer.account_id, guest_key_hash=viewer.guest_key_hash
    )
    return RoomPage(found[:first], len(found) > first, total)
