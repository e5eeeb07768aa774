"""Sign-up, sign-in, sign-out and account administration."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.exc import IntegrityError

from dealroom.domain import validation
from dealroom.domain.errors import DomainError, ErrorCode, not_found
from dealroom.domain.seats import RoomKind, RoomMode, Seat, home_room_title
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    AccountManager,
    AccountMemory,
    AuthSession,
    Credential,
    Participant,
    Room,
)
from dealroom.persistence.repositories import AccountRepository, SessionRepository
from dealroom.services.accounts.identity import digest, new_token
from dealroom.services.accounts.passwords import Passwords
from dealroom.services.clock import Clock


@dataclass(frozen=True, slots=True)
class SignedIn:
    token: str
    account: Account


async def sign_up(
    db: Db,
    clock: Clock,
    passwords: Passwords,
    *,
    email: str,
    password: str,
    handle: str,
    display_name: str,
    ttl_days: int,
) -> SignedIn:
    email = validation.email(email)
    password = validation.password(password)
    handle = validation.handle(handle)
    display_name = validation.display_name(display_name)
    accounts = AccountRepository(db)
    taken = await accounts.handle_or_email_taken(handle, email)
    if taken is not None:
        raise DomainError(ErrorCode.CONFLICT, f"That {taken} is already taken.", field=taken)
    password_hash = await passwords.hash(password)
    now = clock.now()
    account = Account(id=uuid.uuid4(), handle=handle, display_name=display_name, created_at=now)
    # seed 000 "Rooms never close": exactly one home room per account, created with it.
    home = Room(
        id=uuid.uuid4(),
        kind=RoomKind.HOME,
        mode=RoomMode.LIVE,
        host_account_id=account.id,
        title=home_room_title(display_name),
        memory={},
        created_at=now,
        last_activity_at=now,
    )
    try:
        await db.add(account)
        await db.add(
            Credential(account_id=account.id, email=email, password_hash=password_hash),
            AccountMemory(account_id=account.id, document={}, version=0, updated_at=now),
            home,
        )
        await db.add(Participant(room_id=home.id, key=Seat.HOST, account_id=account.id))
    except IntegrityError as exc:  # a concurrent sign-up won the race for the handle/email
        raise DomainError(ErrorCode.CONFLICT, "That handle or email is already taken.") from exc
    token = await _open_session(db, clock, account.id, ttl_days)
    return SignedIn(token=token, account=account)


async def sign_in(
    db: Db, clock: Clock, passwords: Passwords, *, email: str, password: str, ttl_days: int
) -> SignedIn:
    accounts = AccountRepository(db)
    credential = await accounts.credential_by_email(email.strip().lower())
    stored = credential.password_hash if credential else passwords.dummy_hash
    if not await passwords.verify(stored, password) or credential is None:
        raise DomainError(ErrorCode.UNAUTHENTICATED, "Email or password is wrong.")
    if passwords.needs_rehash(credential.password_hash):
        credential.password_hash = await passwords.hash(password)
        await db.flush()
    account = await accounts.by_id(credential.account_id)
    if account is None:
        raise DomainError(ErrorCode.UNAUTHENTICATED, "Email or password is wrong.")
    token = await _open_session(db, clock, account.id, ttl_days)
    return SignedIn(token=token, account=account)


async def sign_out(db: Db, clock: Clock, token: str) -> None:
    await SessionRepository(db).revoke(digest(token), clock.now())


async def _open_session(db: Db, clock: Clock, account_id: uuid.UUID, ttl_days: int) -> str:
    token = new_token()
    now = clock.now()
    await db.add(
        AuthSession(
            account_id=account_id,
            token_hash=digest(token),
            created_at=now,
            expires_at=now + timedelta(days=ttl_days),
        )
    )
    return token


async def grant_manager(db: Db, *, manager_handle: str, managed_handle: str) -> None:
    """Let ``manager`` act as ``managed`` (X-Act-As). Idempotent."""
    accounts = AccountRepository(db)
    manager = await accounts.by_handle(manager_handle)
    managed = await accounts.by_handle(managed_handle)
    if manager is None or managed is None:
        raise not_found("Account")
    if not await accounts.manages(manager.id, managed.id):
        await db.add(AccountManager(manager_id=manager.id, managed_id=managed.id))


async def revoke_manager(db: Db, *, manager_handle: str, managed_handle: str) -> None:
    accounts = AccountRepository(db)
    manager = await accounts.by_handle(manager_handle)
    managed = await accounts.by_handle(managed_handle)
    if manager is None or managed is None:
        raise not_found("Account")
    await accounts.revoke_manager(manager.id, managed.id)


async def set_operator(db: Db, *, handle: str, operator: bool) -> None:
    account = await AccountRepository(db).by_handle(handle)
    if account is None:
        raise not_found("Account")
    account.is_operator = operator
    await db.flush()
