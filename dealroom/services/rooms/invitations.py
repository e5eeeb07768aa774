"""People joining and leaving a room's sides: invitations (a single-use, expiring link to the
inviter's side), removal (it ends the removed person's streams), a side's lead sharing a pane
with its side (access R8) and the buying account letting a member of its side approve offers.

Every change takes the room's row lock and decides on the participants re-read under it, so two
accepts of one link, or an accept racing a removal, decide one after the other."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import structlog

from dealroom.domain import access, validation
from dealroom.domain.errors import DomainError, ErrorCode, not_found
from dealroom.domain.seats import (
    VISITOR_KEY,
    AuthorKind,
    RoomKind,
    RoomMode,
    Seat,
    is_lead,
    member_key,
    on_host_side,
    side_of,
)
from dealroom.persistence.db import Db
from dealroom.persistence.invitations import InvitationRepository
from dealroom.persistence.models import Account, Invitation, Participant, Room
from dealroom.persistence.notifications import NotificationRepository
from dealroom.persistence.repositories import AccountRepository, RoomRepository
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.identity import Identity, digest
from dealroom.services.clock import Clock
from dealroom.services.live.endings import recheck_streams_after_commit
from dealroom.services.live.publish import publish_after_commit
from dealroom.services.live.room_activity import announce_new_room, announce_people
from dealroom.services.notify import render
from dealroom.services.notify.kinds import Audience, Kind
from dealroom.services.notify.outbox import Note, write
from dealroom.services.rooms import pane_lines
from dealroom.services.rooms.guests import LOGIN_REQUIRED
from dealroom.services.rooms.service import RoomAccess, room_for_reader

log = structlog.get_logger(__name__)

INVITE_PATH = "/invite/"
DEFAULT_MAX_PARTICIPANTS = 8
DEFAULT_VALID_FOR = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class Issued:
    invitation: Invitation
    token: str
    """The secret in the link: shown once, stored only as its SHA-256."""
    link: str


def _refused(code: ErrorCode, message: str, reason: str, **details: object) -> DomainError:
    return DomainError(code, message, reason=reason, **details)


def _room_full(limit: int) -> DomainError:
    return _refused(
        ErrorCode.CONFLICT, f"The room already holds {limit} people, its most.", "ROOM_FULL"
    )


async def invite_to_room(
    db: Db,
    broker: Broker | None,
    clock: Clock,
    identity: Identity,
    room_id: uuid.UUID,
    email: str,
    *,
    max_participants: int = DEFAULT_MAX_PARTICIPANTS,
    valid_for: timedelta = DEFAULT_VALID_FOR,
    public_url: str | None = None,
    band_percent: Decimal | None = None,
) -> Issued:
    """An invitation to the inviter's side of a deal room it holds a pane in. The link is
    ``/invite/<token>`` (absolute under ``public_url`` when given). The invitee is told by
    email, and in the app too when it has an account; the text names only the room and the
    inviter."""
    account = identity.account
    if account is None:
        if identity.guest_key is not None:
            raise _refused(
                ErrorCode.FORBIDDEN,
                "Sign in to invite someone: a guest cannot invite.",
                "GUEST_CANNOT_INVITE",
            )
        raise _refused(ErrorCode.UNAUTHENTICATED, "Sign in to invite someone.", LOGIN_REQUIRED)
    address = validation.email(email)
    view = await room_for_reader(db, identity, room_id)
    if view.room.kind != RoomKind.DEAL.value or view.room.mode != RoomMode.LIVE.value:
        # A home room is the host's own; a demo room is the host previewing its agent.
        raise _refused(
            ErrorCode.BAD_USER_INPUT,
            "Only a live deal room takes more people.",
            "NOT_A_DEAL_ROOM",
            field="roomId",
        )
    inviter = view.by_key(view.reader_key)
    if inviter is None or inviter.account_id != account.id:
        # the pane is held by a guest key beside the account: the guest's, not the account's
        raise _refused(
            ErrorCode.FORBIDDEN,
            "Sign in to invite someone: a guest cannot invite.",
            "GUEST_CANNOT_INVITE",
        )
    own = await AccountRepository(db).credential_for(account.id)
    if own is not None and own.email.strip().lower() == address:
        raise _refused(
            ErrorCode.BAD_USER_INPUT, "You are already in this room.", "INVITE_SELF", field="email"
        )
    invitations = InvitationRepository(db)
    if await invitations.active_count(view.room.id) >= max_participants:
        raise _room_full(max_participants)
    side = side_of(inviter.key)
    assert side is not None  # a pane the reader holds sits on a side (access.keys_of)
    token = secrets.token_urlsafe(32)
    now = clock.now()
    invitation = Invitation(
        id=uuid.uuid4(),
        room_id=view.room.id,
        side=side.value,
        inviter_id=inviter.id,
        email=address,
        token_hash=digest(token),
        expires_at=now + valid_for,
        created_at=now,
    )
    await invitations.add(invitation)
    path = INVITE_PATH + token
    link = render.absolute(public_url, path) if public_url else path
    await _tell_invitee(db, broker, view.room, account, invitation, path, band_percent)
    log.info("room_invitation", room_id=str(view.room.id), side=side.value)
    return Issued(invitation, token, link)


async def _tell_invitee(
    db: Db,
    broker: Broker | None,
    room: Room,
    inviter: Account,
    invitation: Invitation,
    path: str,
    band_percent: Decimal | None,
) -> None:
    """An invitee hears of it by email (the outbox), and in the app when it has an account
    already. The text names the room and the inviter only; to a visitor side it passes the exit
    screen."""
    credential = await AccountRepository(db).credential_by_email(invitation.email)
    inviter_name = inviter.display_name or inviter.handle
    title = room.title or "a deal room"
    host_side = invitation.side == Seat.HOST.value
    note = Note(
        account_id=credential.account_id if credential is not None else None,
        address=None if credential is not None else invitation.email,
        kind=Kind.INVITATION,
        audience=Audience.HOST if host_side else Audience.VISITOR,
        source=f"invitation:{invitation.id}",
        title=f"{inviter_name} invited you to \u201c{title}\u201d",
        body=f"{inviter_name} invited you to join them in \u201c{title}\u201d. "
        "Open the link to join; it works once.",
        link=path,
        reason=f"{inviter_name} invited your email address to this room.",
        room_id=room.id,
    )
    facts = None if host_side else await NotificationRepository(db).room_facts(room.id)
    written = await write(db, invitation.created_at, [note], facts, band_percent=band_percent)
    if broker is not None:
        publish_after_commit(db, broker, written.published)


def _participant(view: RoomAccess, participant_id: uuid.UUID) -> Participant:
    found = next(
        (p for p in view.participants if p.id == participant_id and p.removed_at is None), None
    )
    if found is None:
        raise not_found("Participant")
    return found


async def _locked(db: Db, identity: Identity, room_id: uuid.UUID) -> RoomAccess:
    """The room as the reader holds it, decided on participants re-read under its lock."""
    view = await room_for_reader(db, identity, room_id)
    await RoomRepository(db).lock(room_id)
    participants = await InvitationRepository(db).participants(room_id)
    keys = access.keys_of(identity.viewer, access.holders(participants))
    if not keys:
        raise not_found("Room")  # removed while the lock was awaited
    return RoomAccess(view.room, participants, keys)


async def accept_invitation(
    db: Db,
    broker: Broker | None,
    clock: Clock,
    identity: Identity,
    token: str,
    *,
    max_participants: int = DEFAULT_MAX_PARTICIPANTS,
) -> Room:
    """Join the inviter's side of the room as a new participant (its own pane). An account
    already on that side gets the room unchanged; any refusal changes nothing."""
    account = identity.account
    if account is None:
        raise _refused(
            ErrorCode.UNAUTHENTICATED,
            "Sign in or sign up to accept the invitation.",
            LOGIN_REQUIRED,
        )
    invitations = InvitationRepository(db)
    found = await invitations.by_token_hash(digest(token.strip()))
    if found is None:
        raise _invalid()
    await RoomRepository(db).lock(found.room_id)
    invitation = await invitations.by_token_hash(found.token_hash, lock=True)
    room = await RoomRepository(db).by_id(found.room_id, fresh=True)
    if invitation is None or room is None:
        raise _invalid()
    participants = await invitations.participants(room.id)
    inviter = next((p for p in participants if p.id == invitation.inviter_id), None)
    if inviter is None or inviter.removed_at is not None:
        raise _invalid()  # the inviter's invitations leave the room with it
    side = Seat(invitation.side)
    # The sides the reader sits on, by its account or by a guest key it still holds (R1, R4).
    seated = access.holders(p for p in participants if p.removed_at is None)
    held = access.seats_of(identity.viewer, seated)
    if side in held:
        return room  # already there (a second click on the link it used too): nothing to do
    if invitation.used_at is not None:
        raise _refused(ErrorCode.CONFLICT, "That invitation was already used.", "INVITATION_USED")
    now = clock.now()
    if now >= invitation.expires_at:
        raise _refused(ErrorCode.CONFLICT, "That invitation has expired.", "INVITATION_EXPIRED")
    if held:
        raise _refused(
            ErrorCode.CONFLICT,
            "You are already in this room on the other side.",
            "ALREADY_ON_OTHER_SIDE",
        )
    if side == Seat.HOST:
        # The host's side reads every pane: its link admits only the address it was sent to.
        own = await AccountRepository(db).credential_for(account.id)
        if own is None or own.email.strip().lower() != invitation.email:
            raise _refused(
                ErrorCode.FORBIDDEN,
                "This invitation was sent to another email address: sign in with that one.",
                "INVITATION_FOR_ANOTHER_ADDRESS",
            )
    if sum(1 for p in participants if p.removed_at is None) >= max_participants:
        raise _room_full(max_participants)
    # Removed participants keep their keys: a key names one pane for the room's life.
    key = member_key(side, (p.key for p in participants))
    member = Participant(
        id=uuid.uuid4(),
        room_id=room.id,
        key=key,
        account_id=account.id,
        invited_by=inviter.id,
        created_at=now,
    )
    await invitations.add_participant(member)
    await invitations.mark_used(invitation, account.id, now)
    # The new pane opens with the agent's greeting, as a new room does: a pane is never empty,
    # so a reader who opens it before the member speaks follows it from a stored cursor.
    _, published = await pane_lines.line_at(
        db,
        member,
        await _joined_line(db, room, inviter, side),
        author=AuthorKind.AGENT,
        key=f"joined:{member.id}",
        now=now,
    )
    if broker is not None:
        # Its room list follows what it now reads: every pane on the host side, else its own.
        follows = [p.key for p in participants] + [key] if side is Seat.HOST else [key]
        announce_new_room(db, broker, account.id, room.id, follows)
        announce_people(db, broker, room.host_account_id, room.id, [key])
        if published is not None:
            publish_after_commit(db, broker, [published])
    log.info("room_invitation_accepted", room_id=str(room.id), side=side.value)
    return room


async def _joined_line(db: Db, room: Room, inviter: Participant, side: Seat) -> str:
    """The first line of a new member's pane, the host's agent greeting it the way a new room's
    welcome does: who added it and what this conversation is."""
    accounts = AccountRepository(db)
    host = await accounts.by_id(room.host_account_id)
    by = await accounts.by_id(inviter.account_id) if inviter.account_id else None
    host_name = host.display_name if host is not None else "the host"
    added = f"{by.display_name} added you to this room" if by is not None else "You joined"
    if side is Seat.HOST:
        return (
            f"Hi! {added} on {host_name}'s side: you can read every conversation here. I'm "
            f"{host_name}'s agent; tell me here what {host_name} wants done."
        )
    return f"Hi! {added}. I'm {host_name}'s agent; this conversation is yours with me."


def _invalid() -> DomainError:
    return _refused(ErrorCode.NOT_FOUND, "That invitation link is not valid.", "INVITATION_INVALID")


async def remove_participant(
    db: Db,
    broker: Broker | None,
    clock: Clock,
    identity: Identity,
    room_id: uuid.UUID,
    participant_id: uuid.UUID,
) -> Room:
    """Take a participant out: the host side may remove anyone but the host, a side's lead the
    members of its side, and a member may leave. The removed participant's account and guest
    key are unbound (it holds nothing), and every stream it held ends now."""
    view = await _locked(db, identity, room_id)
    target = _participant(view, participant_id)
    if target.key == Seat.HOST.value:
        raise _refused(ErrorCode.FORBIDDEN, "The host cannot be removed.", "CANNOT_REMOVE_HOST")
    if is_lead(target.key):
        raise _refused(
            ErrorCode.CONFLICT,
            "The visitor who opened the room cannot be removed: a side keeps its lead.",
            "LAST_OF_SIDE",
        )
    side = side_of(target.key)
    allowed = (
        any(on_host_side(key) for key in view.keys)
        or (side is Seat.VISITOR and VISITOR_KEY in view.keys)
        or target.key in view.keys
    )
    if not allowed:
        raise _refused(ErrorCode.FORBIDDEN, "You may not remove that participant.", "NOT_YOUR_SIDE")
    removed_account = target.account_id
    await InvitationRepository(db).remove_participant(target, clock.now())
    if broker is not None:
        recheck_streams_after_commit(db, broker)
        if removed_account is not None:
            announce_people(db, broker, removed_account, view.room.id, ())
        announce_people(db, broker, view.room.host_account_id, view.room.id, ())
    log.info("room_participant_removed", room_id=str(view.room.id), key=target.key)
    return view.room


async def share_pane(
    db: Db,
    broker: Broker | None,
    identity: Identity,
    room_id: uuid.UUID,
    participant_id: uuid.UUID,
    shared: bool,
) -> Room:
    """R8: the visitor side's lead lets the rest of its side read a pane of that side (or stops
    it). The host side reads every pane already (R2): nothing there to share."""
    view = await _locked(db, identity, room_id)
    target = _participant(view, participant_id)
    if side_of(target.key) is not Seat.VISITOR or VISITOR_KEY not in view.keys:
        raise _refused(
            ErrorCode.FORBIDDEN,
            "Only the visitor who opened the room shares its side's panes.",
            "NOT_THE_LEAD",
        )
    if target.shared != shared:
        await InvitationRepository(db).set_shared(target, shared)
        if broker is not None and not shared:
            recheck_streams_after_commit(db, broker)
    return view.room


async def allow_approval(
    db: Db,
    identity: Identity,
    room_id: uuid.UUID,
    participant_id: uuid.UUID,
    allowed: bool,
) -> Room:
    """The buying account lets a member of its side approve written offers (or stops it)."""
    view = await _locked(db, identity, room_id)
    if VISITOR_KEY not in view.keys:
        raise _refused(
            ErrorCode.FORBIDDEN,
            "Only the buying account chooses who approves offers for it.",
            "NOT_THE_BUYER",
        )
    target = _participant(view, participant_id)
    if side_of(target.key) is not Seat.VISITOR or is_lead(target.key):
        raise _refused(
            ErrorCode.BAD_USER_INPUT,
            "Only another member of your side can be allowed to approve.",
            "NOT_A_MEMBER",
            field="participantId",
        )
    if target.may_approve != allowed:
        await InvitationRepository(db).set_may_approve(target, allowed)
    return view.room
