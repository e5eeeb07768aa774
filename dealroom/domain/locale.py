"""Whose locale money is written in (P10 in ``domain/money.py``), decided in one place.

- L1 An account may name a locale Babel knows (``de_DE``, ``fr-FR``, ``pt_BR``) whose money
     the firewall reads (an amount written in it near a private limit must be held: a locale
     that writes ``6,140US$`` is refused); it is stored in Babel's canonical spelling. Anything
     else is BAD_USER_INPUT with ``reason``
     ``UNKNOWN_LOCALE`` on the field ``locale``; null clears it.
- L2 A reader's locale is its account's, else ``en_US``: a guest, an account that names none
     and an unreadable stored value all read ``en_US``.
- L3 Each text is written in its reader's locale: a GraphQL viewer's display fields in the
     effective account's, an email and the lines its agent writes into a pane in that pane's
     account's, a webhook's display fields in the endpoint owner's.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Final, Protocol

from babel import Locale, UnknownLocaleError

from dealroom.domain import firewall
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.money import DEFAULT_LOCALE, display

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
        f"Unknown or unsupported locale {text[:40]!r}; use a language and region such as "
        "'en_US' or 'de_DE'.",
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
    """Babel's spelling of ``text``, or None when it is no locale Babel knows or one whose
    money the firewall cannot read (L1)."""
    if not _SHAPE.fullmatch(text):
        return None
    try:
        canonical = str(Locale.parse(text.replace("-", "_")))
    except (UnknownLocaleError, ValueError, TypeError):
        return None
    return canonical if money_is_read(canonical) else None


_PROBE_MEMORY: Final = {
    "host": {"limits": {"probe": {"floor": "6137", "currency": "USD", "source": "probe"}}}
}
_PROBES: Final = (Decimal("6140"), Decimal("6137.5"))
"""Amounts within the band of the probe floor: the firewall must hold each as written."""


def money_is_read(locale: str) -> bool:
    """L1: the firewall holds an amount near a private limit as ``locale`` writes it."""
    return all(firewall.check(_PROBE_MEMORY, display(probe, "USD", locale)) for probe in _PROBES)
