"""Who is asking: a signed-in account, an account acted as, a partner's API key, a guest key,
or nobody."""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

from dealroom.domain.access import Viewer
from dealroom.domain.errors import DomainError, ErrorCode, bad_input, forbidden, unauthenticated
from dealroom.domain.scopes import API_KEY_PREFIX
from dealroom.persistence.api_keys import ApiKeyRepository
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account
from dealroom.persistence.repositories import AccountRepository, SessionRepository
from dealroom.services.clock import Clock

GUEST_KEY_RE = re.compile(r"g_[A-Za-z0-9_-]{20,64}")


def digest(secret: str) -> str:
    """Tokens and guest keys are stored only as their SHA-256."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_token() -> str:
    return "s_" + secrets.token_urlsafe(32)


def new_guest_key() -> str:
    return "g_" + secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a request presented, raw, from headers, cookies or a websocket's init payload."""

    token: str | None = None
    token_from_cookie: bool = False
    guest_key: str | None = None
    act_as: str | None = None
    malformed_authorization: bool = False
    """An Authorization header that is not ``Bearer <token>``."""


@dataclass(frozen=True, slots=True)
class Identity:
    signed_in: Account | None
    """The account whose session this is."""
    account: Account | None
    """The effective account: ``signed_in``, or the managed account it acts as."""
    guest_key: str | None
    scopes: frozenset[str] | None = None
    """Set when the request authenticated with an API key: only these scopes (rule K1).
    None for a session, which carries the account's full rights."""

    @property
    def by_api_key(self) -> bool:
        return self.scopes is not None

    @property
    def viewer(self) -> Viewer:
        return Viewer(
            account_id=self.account.id if self.account else None,
            guest_key_hash=digest(self.guest_key) if self.guest_key else None,
        )


async def resolve_identity(db: Db, clock: Clock, presented: Credentials) -> Identity:
    """Turn presented credentials into an identity, or raise with a stable code.

    A bad bearer header is UNAUTHENTICATED; a stale session cookie is ignored (the browser
    keeps sending it after expiry). Act-as is honoured only along an account_managers edge
    from the signed-in account (seed 002 "Act-As Mode"); otherwise FORBIDDEN."""
    signed_in: Account | None = None
    if presented.malformed_authorization:
        raise unauthenticated(
            "The Authorization header must be 'Bearer <token>' (the token signUp or signIn "
            "returned)."
        )
    if presented.token and presented.token.startswith(API_KEY_PREFIX):
        if presented.act_as:
            raise forbidden("An API key acts only as its own account.")
        key = await authenticate(db, clock, presented.token)
        return Identity(
            signed_in=key.account, account=key.account, guest_key=None, scopes=key.scopes
        )
    if presented.token:
        signed_in = await SessionRepository(db).account_for_live_token(
            digest(presented.token), clock.now()
        )
        if signed_in is None and not presented.token_from_cookie:
            raise DomainError(
                ErrorCode.UNAUTHENTICATED, "That session token is not valid or has expired."
            )
    guest_key = presented.guest_key
    if guest_key is not None and not GUEST_KEY_RE.fullmatch(guest_key):
        raise bad_input("That guest key is not one this server issued.", "guestKey")

    account = signed_in
    if presented.act_as:
        if signed_in is None:
            raise unauthenticated("Sign in before acting as another account.")
        try:
            target_id = uuid.UUID(presented.act_as)
        except ValueError as exc:
            raise bad_input("X-Act-As must be an account id.", "actAs") from exc
        if target_id != signed_in.id:
            if not await AccountRepository(db).manages(signed_in.id, target_id):
                raise forbidden("You do not manage that account.")
            account = await AccountRepository(db).by_id(target_id)
            if account is None:  # the edge cascades on delete; defensive only
                raise forbidden("You do not manage that account.")
    return Identity(signed_in=signed_in, account=account, guest_key=guest_key)


LAST_USED_GRANULARITY = timedelta(minutes=1)
"""``last_used_at`` is written at most this often per key: reads stay reads."""


@dataclass(frozen=True, slots=True)
class KeyIdentity:
    account: Account
    scopes: frozenset[str]


async def authenticate(db: Db, clock: Clock, key: str) -> KeyIdentity:
    """The account and scopes of a live key, or UNAUTHENTICATED. ``last_used_at`` is
    written and committed here, on the request's own unit of work: the scope gate
    (``schema/scope_gate.py``) resolves a key before any resolver runs, so nothing else is in
    that transaction yet (and SQLite's single connection rules out a second one)."""
    keys = ApiKeyRepository(db)
    row = await keys.live_by_hash(digest(key))
    account = await db.get(Account, row.account_id) if row is not None else None
    if row is None or account is None:
        raise unauthenticated("That API key is not valid or was revoked.")
    now = clock.now()
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_GRANULARITY:
        await keys.mark_used(row.id, now)
        await db.commit()
    return KeyIdentity(account=account, scopes=frozenset(row.scopes or ()))
