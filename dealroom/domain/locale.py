"""Whose locale money is written in (P10 in ``domain/money.py``), decided in one place.

- L1 An account may name a locale Babel knows (``de_DE``, ``fr-FR``, ``pt_BR``); it is stored
     in Babel's canonical spelling. Anything else is BAD_USER_INPUT with ``reason``
     ``UNKNOWN_LOCALE`` on the field ``locale``; null clears it.
- L2 A reader's locale is its account's, else ``en_US``: a guest, an account that names none
     and an unreadable stored value all read ``en_US``.
- L3 Each text is written in its reader's locale: a GraphQL viewer's display fields in the
     effective account's, an email and the lines its agent writes into a pane in that pane's
     account's, a webhook's display fields in the endpoint owner's.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final, Protocol

from babel import Locale, UnknownLocaleError

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.money import DEFAULT_LOCALE

UNKNOWN_LOCALE: Final = "UNKNOWN_LOCALE"
"""L1: the stable ``reason`` of a refused locale."""

# Language, optional script, optional region: bounds what reaches Babel's parser.
_SHAPE: Final = re.compile(r"[A-Za-z]{2,3}(?:[_-][A-Za-z]{4})?(?:[_-](?:[A-Za-z]{2}|\d{3}))?")


class HasLocale(Protocol):
    @property
    def locale(self) -> str | None: ...


def parse_locale(raw: str | None) -> str | None:
    """L1: ``raw`` in Babel's canonical spelling (``"de-de"`` → ``"de_DE"``); None for None
    or blank (clears the choice)."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    canonical = _canonical(text)
    if canonical is not None:
        return canonical
    raise DomainError(
        ErrorCode.BAD_USER_INPUT,
        f"Unknown locale {text[:40]!r}; use a language and region such as 'en_US' or 'de_DE'.",
        field="locale",
        reason=UNKNOWN_LOCALE,
    )


def reader_locale(account: HasLocale | None) -> str:
    """L2: the locale ``account`` reads money in; ``en_US`` for a guest (None)."""
    return reader_locale_of(account.locale if account is not None else None)


def reader_locale_of(stored: str | None) -> str:
    """L2: the locale a stored choice reads as; ``en_US`` for none or one Babel lost."""
    if not stored:
        return DEFAULT_LOCALE
    return _canonical(stored.strip()) or DEFAULT_LOCALE


@lru_cache(maxsize=256)
def _canonical(text: str) -> str | None:
    """Babel's spelling of ``text``, or None when it is no locale Babel knows."""
    if not _SHAPE.fullmatch(text):
        return None
    try:
        return str(Locale.parse(text.replace("-", "_")))
    except (UnknownLocaleError, ValueError, TypeError):
        return None
