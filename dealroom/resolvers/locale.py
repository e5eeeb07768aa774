"""The locale resolver: parse nothing here, call the service, map the account to ``Me``."""

from __future__ import annotations

from dealroom.schema.context import Info
from dealroom.schema.types import Me
from dealroom.services.accounts import locale


async def set_locale(info: Info, value: str | None) -> Me:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        account = await locale.set_locale(db, identity, value)
    assert identity.signed_in is not None  # the service refused an anonymous caller
    return Me.from_rows(account, identity.signed_in)
