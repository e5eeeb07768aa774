"""Setting the locale an account reads money in (L1 in ``domain/locale.py``)."""

from __future__ import annotations

from dealroom.domain.errors import unauthenticated
from dealroom.domain.locale import parse_locale
from dealroom.persistence.db import Db
from dealroom.persistence.locales import LocaleRepository
from dealroom.persistence.models import Account
from dealroom.services.accounts.identity import Identity


async def set_locale(db: Db, identity: Identity, raw: str | None) -> Account:
    """Store the effective account's locale (None or blank clears it); returns the account.
    BAD_USER_INPUT (reason UNKNOWN_LOCALE) for a locale Babel does not know, UNAUTHENTICATED
    when anonymous."""
    account = identity.account
    if account is None or identity.signed_in is None:
        raise unauthenticated()
    chosen = parse_locale(raw)
    await LocaleRepository(db).set_locale(account.id, chosen)
    account.locale = chosen  # the identity's row reads the new choice for the rest of the request
    return account
