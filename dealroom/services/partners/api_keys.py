"""Partner API keys: ``createApiKey`` shows a key once; only its SHA-256 is stored; a key
authenticates as its account with only its scopes (``domain/scopes.py``)."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass

import structlog

from dealroom.domain import scopes as scope_rules
from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found, unauthenticated
from dealroom.persistence.api_keys import ApiKeyRepository
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, ApiKey
from dealroom.services.accounts.identity import Identity, digest
from dealroom.services.clock import Clock

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class CreatedKey:
    row: ApiKey
    key: str
    """The key itself: returned once, never stored."""


def new_key() -> str:
    return scope_rules.API_KEY_PREFIX + secrets.token_urlsafe(32)


def _session_account(identity: Identity) -> Account:
    if identity.account is None:
        raise unauthenticated()
    if identity.by_api_key:  # K2: a key cannot mint or revoke keys
        raise DomainError(ErrorCode.FORBIDDEN, "Manage API keys while signed in.")
    return identity.account


async def create_api_key(
    db: Db, clock: Clock, identity: Identity, *, name: str, scopes: list[str]
) -> CreatedKey:
    account = _session_account(identity)
    name = name.strip()
    if not 0 < len(name) <= 80:
        raise bad_input("name must be 1-80 characters.", "name")
    try:
        granted = scope_rules.parse_scopes(scopes, operator=account.is_operator)
    except ValueError as exc:
        raise bad_input(str(exc), "scopes") from None
    key = new_key()
    row = ApiKey(
        id=uuid.uuid4(),
        account_id=account.id,
        name=name,
        prefix=key[:10],
        key_hash=digest(key),
        scopes=sorted(granted),
        created_at=clock.now(),
    )
    await db.add(row)
    log.info("api_key_created", account_id=str(account.id), key_id=str(row.id))
    return CreatedKey(row=row, key=key)


async def revoke_api_key(db: Db, clock: Clock, identity: Identity, key_id: uuid.UUID) -> ApiKey:
    account = _session_account(identity)
    row = await db.get(ApiKey, key_id)
    if row is None or row.account_id != account.id:
        raise not_found("API key")
    if row.revoked_at is None:
        row.revoked_at = clock.now()
        await db.flush()
    return row


async def api_keys_of(db: Db, identity: Identity) -> list[ApiKey]:
    account = _session_account(identity)
    return await ApiKeyRepository(db).of_account(account.id)
