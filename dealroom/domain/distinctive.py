"""The distinctive values of the host's private branch — e-mail addresses, phone numbers and
code-like tokens — and the texts a scan looks for them in (``domain/firewall.py``, rules F2 and
F9, and F8 for a phone's digits).

- F2  A distinctive value is found anywhere in a private string (``literals``): an e-mail
      address; a phone number (9-15 digits, or fewer after a ``+``), kept as its national
      digits (the last ten) so that it matches whatever the punctuation and the country code;
      a code-like token (letters and digits mixed, ``MIN_TOKEN`` or more; a long identifier
      of three or more joined parts; or a letter run no word is as long as). E-mails and
      tokens are kept case-folded with separators removed, so ``QX7-Orchid-58213`` is found
      as ``qx7_orchid_58213``. An e-mail's parts are never tokens of their own.
- F8  A phone's digits are also looked for among the numbers a text writes one digit at a
      time or in groups (``normalise.joined_numbers``: ``five five five, one two three``).
- F9  An e-mail address spelled with ``at`` and ``dot`` (``dev at zyglorb dot com``) is looked
      for with those words dropped (``normalise.unspell_at_dot``).

Nothing here knows which private value a literal is: the firewall's ``PrivateValues`` keeps
what ``literals`` finds in the host's private strings and asks a scan's ``Haystacks`` for each.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from dealroom.domain import normalise

EMAIL: Final = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
PHONE: Final = re.compile(r"(?<![\w])\+?\d[\d\s().\-]{5,20}\d(?![\w])")
_TOKEN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.]*[A-Za-z0-9]")
NOT_ALNUM: Final = re.compile(r"[^0-9a-z]+")
"""What a literal is squeezed of: e-mails and tokens match with separators ignored (F2)."""
MIN_TOKEN: Final = 6
MIN_PHONE_DIGITS: Final = 9


def literals(text: str) -> Iterator[tuple[str, str, str]]:
    """F2: (kind, key, as stated) of every e-mail, phone and code-like token of one private
    string, in that order; ``key`` is what a scan looks for (squeezed, or a phone's national
    digits). The same key may come more than once: the caller keeps the first."""
    for email in EMAIL.findall(text):
        yield "email", NOT_ALNUM.sub("", email.casefold()), email
    for phone in PHONE.findall(text):
        digits = re.sub(r"\D", "", phone)
        if (len(digits) < MIN_PHONE_DIGITS and not phone.startswith("+")) or len(digits) > 15:
            continue
        # the national number: matched with or without the country code
        yield "phone", digits[-10:], phone.strip()
    for token in _TOKEN.findall(EMAIL.sub(" ", text)):
        if not _code_like(token):
            continue
        key = NOT_ALNUM.sub("", token.casefold())
        if len(key) >= MIN_TOKEN:
            yield "token", key, token


def _code_like(token: str) -> bool:
    letters = sum(c.isalpha() for c in token)
    digits = sum(c.isdigit() for c in token)
    if letters and digits and len(token) >= MIN_TOKEN:
        return True
    parts = [p for p in re.split(r"[_\-.]", token) if p]
    if len(parts) >= 3 and len(token) >= 12:
        return True
    return any(len(run) >= 20 for run in re.findall(r"[A-Za-z]+", token))


@dataclass(frozen=True, slots=True)
class Haystacks:
    """The texts one scan looks for the literals in (``of``): the text squeezed (F2), its phone
    numbers' digits (F2), and the haystacks of F8 and F9, each made once, when a literal of its
    kind first needs it."""

    plain: str
    read: str
    folded: str
    joined: list[normalise.Joined]
    squeezed: str
    digits: str
    made: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, plain: str, read: str, folded: str, joined: list[normalise.Joined]) -> Haystacks:
        """A text's haystacks, from its forms (``amounts_in_text.forms``: folded, read with
        numbers in words as digits, case-folded) and its joined numbers (F8)."""
        squeezed = NOT_ALNUM.sub("", folded)
        digits = re.sub(r"\D", "", " ".join(PHONE.findall(plain)))
        return cls(plain, read, folded, joined, squeezed, digits)

    def hold(self, kind: str, literal: str) -> bool:
        """Whether the text states a ``kind`` of literal: a phone's digits among its phone
        numbers' or its numbers in words or one by one (F8); an e-mail squeezed or spelled with
        at and dot (F9); a token squeezed or with digits in words (F8)."""
        if kind == "phone":
            return literal in self.digits or literal in self._more(kind, self.read)
        if kind == "email":  # F9
            return literal in self.squeezed or literal in self._more(kind, self.folded)
        return literal in self.squeezed or (
            self.read != self.plain and literal in self._more(kind, self.read)
        )

    def _more(self, kind: str, text: str) -> str:
        """The text a ``kind`` of literal is looked for in besides the plain text, made once a
        scan: a phone's digits in words or one by one (F8), an e-mail spelled with at and dot
        (F9), a token with digits in words (F8)."""
        if kind not in self.made:
            if kind == "phone":
                spelled = [re.sub(r"\D", "", phone) for phone in PHONE.findall(text)]
                self.made[kind] = "|".join([*spelled, *(run.digits for run in self.joined)])
            elif kind == "email":
                self.made[kind] = NOT_ALNUM.sub("", normalise.unspell_at_dot(text))
            else:
                self.made[kind] = NOT_ALNUM.sub("", text.casefold())
        return self.made[kind]
