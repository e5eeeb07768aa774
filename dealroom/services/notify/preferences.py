"""Each account's notification preferences (a mode per kind) and the one-click unsubscribe."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from dealroom.domain.errors import bad_input
from dealroom.persistence.db import Db
from dealroom.persistence.models import NotificationSettings
from dealroom.persistence.notifications import NotificationRepository
from dealroom.services.notify import tokens
from dealroom.services.notify.kinds import CHOOSABLE, Kind, Mode, mode_for, parse_kind


@dataclass(frozen=True, slots=True)
class Preference:
    kind: Kind
    mode: Mode


async def ensure(db: Db, account_id: uuid.UUID, now: datetime) -> NotificationSettings:
    """The account's settings row, made (with its unsubscribe secret) on first need."""
    repo = NotificationRepository(db)
    row = await repo.settings_of(account_id)
    if row is None:
        row = NotificationSettings(
            account_id=account_id, modes={}, secret=tokens.new_secret(), updated_at=now
        )
        await db.add(row)
    return row


async def of(db: Db, account_id: uuid.UUID) -> list[Preference]:
    row = await NotificationRepository(db).settings_of(account_id)
    modes = dict(row.modes or {}) if row is not None else {}
    return [Preference(kind, mode_for(modes, kind)) for kind in CHOOSABLE]


async def set_modes(
    db: Db, account_id: uuid.UUID, chosen: list[tuple[str, str]], now: datetime
) -> list[Preference]:
    """Set the mode of each named kind; an unknown kind or mode is BAD_INPUT and nothing is
    changed."""
    parsed: dict[str, str] = {}
    for kind, mode in chosen:
        try:
            name = parse_kind(kind).value
        except ValueError as exc:
            raise bad_input(str(exc), "kind") from None
        if mode not in {m.value for m in Mode}:
            raise bad_input(f"unknown mode {mode!r} (immediate, digest or off)", "mode")
        parsed[name] = mode
    row = await ensure(db, account_id, now)
    row.modes = dict(row.modes or {}) | parsed
    row.updated_at = now
    await db.flush()
    return await of(db, account_id)


def unsubscribe_token(row: NotificationSettings, kind: str, now: datetime) -> str:
    """A token that turns ``kind`` (one kind's emails, or ``all``) off for the row's account."""
    return tokens.sign(row.secret, row.account_id, kind, now)


async def unsubscribe(db: Db, token: str, now: datetime) -> Kind | None:
    """Apply a one-click unsubscribe: the kind turned off (None: every kind). Raises
    ``tokens.TokenError`` for a forged, expired or malformed token, or one signed for another
    account (it fails the named account's signature)."""
    claim = tokens.read(token)
    row = await NotificationRepository(db).settings_of(claim.account_id, lock=True)
    if row is None:
        raise tokens.TokenError("unknown account")
    tokens.verify(token, row.secret, now)
    if claim.kind == tokens.ALL:
        off = {k.value: Mode.OFF.value for k in CHOOSABLE}
        kind = None
    else:
        try:
            kind = parse_kind(claim.kind)
        except ValueError as exc:
            raise tokens.TokenError("unknown kind") from exc
        off = {kind.value: Mode.OFF.value}
    row.modes = dict(row.modes or {}) | off
    row.updated_at = now
    await db.flush()
    return kind
