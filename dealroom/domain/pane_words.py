"""What a person may read in a pane: people's words, never the system's labels (seed 000: the
stage vocabulary is for agents, not people), and the one source of the offer's button labels.

- PW1 No line an agent, the platform or an operator writes into a pane contains a stage label
      (``WRITTEN_AWAITING_BRAND``), an offers-system status (``PAYMENT_HELD``) or an internal
      field name (``pendingPrincipalDecisions``, ``brand_approved_at``); ``refuse_labels`` is
      the check every such line passes (the pane log calls it) and raises ``LabelInLine``.
- PW2 A model's reply is put in people's words before it is stored (``in_people_words``): a
      label becomes its gloss, a "Stage: X —" preamble goes, so a slip is never a lost turn.
- PW3 A button is named to a person by the label the offer card shows (``BUTTON_LABELS``);
      the web client reads the same labels from ``Offer.viewerButtons``.
"""

from __future__ import annotations

import re
from typing import Final

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.offer_stage import GLOSSES, OfferStatus, Stage
from dealroom.domain.offers import Action

BUTTON_LABELS: Final[dict[Action, str]] = {
    Action.APPROVE: "Approve offer",
    Action.PAY: "Pay now",
    Action.COUNTER: "Counter",
    Action.ADD: "Add",
    Action.REJECT: "Reject",
}
"""PW3: the offer card's buttons, as the card shows them and as agents name them."""


def button(action: Action) -> str:
    """PW3: the label of ``action``'s button, quoted as a person sees it ("Pay now")."""
    return BUTTON_LABELS[action]


INTERNAL_NAMES: Final = (
    "pendingPrincipalDecisions",
    "principalInstruction",
    "brand_approved_at",
    "brandApprovedAt",
    "private_terms",
    "host.limits",
    "host.public",
    "offer_mint",
    "loginRequired",
    "pending_effects",
    "dueSlicePercent",
    "openQuestions",
    "NO_WRITTEN_OFFER",
)
"""PW1: the memory and row fields an agent sees by name, which no person should."""

_LABELS: Final = tuple(
    sorted(
        {s.value for s in Stage} | {s.value for s in OfferStatus if "_" in s.value},
        key=len,
        reverse=True,
    )
)
"""Stage labels and the offers-system statuses that look like one (APPROVED, ACCEPTED,
COMPLETED are English words too and read as such)."""

_LABEL = re.compile(
    r"(?<![A-Za-z0-9_.])(?:"
    + "|".join(re.escape(name) for name in (*_LABELS, *INTERNAL_NAMES))
    + r")(?![A-Za-z0-9_])"
)
_STAGE_PREAMBLE = re.compile(
    r"\s*\b(?:deal )?stage:\s*(?P<label>[A-Z_]{4,})\s*(?:[—–-]\s*[^.]*)?\.?", re.IGNORECASE
)


class LabelInLine(DomainError):
    """PW1: a line bound for a person names a system label."""

    def __init__(self, labels: list[str]) -> None:
        super().__init__(
            ErrorCode.BAD_USER_INPUT,
            f"A line for a person names system labels: {', '.join(labels)}.",
            field="body",
        )
        self.labels = labels


def labels_in(text: str) -> list[str]:
    """PW1: every system label or internal field name ``text`` contains, in order."""
    return [match.group(0) for match in _LABEL.finditer(text)]


def refuse_labels(text: str) -> None:
    """PW1: raise ``LabelInLine`` when ``text`` names a system label."""
    found = labels_in(text)
    if found:
        raise LabelInLine(found)


def in_people_words(text: str) -> str:
    """PW2: ``text`` with each label said as people say it: a "Stage: X — gloss." preamble
    dropped, a bare stage label replaced by its gloss, a field name by nothing."""
    text = _STAGE_PREAMBLE.sub("", text)

    def plain(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in Stage.__members__:
            return GLOSSES[Stage(word)]
        return word.replace("_", " ").lower() if word in OfferStatus.__members__ else ""

    said = _LABEL.sub(plain, text)
    said = re.sub(r"[ \t]+([.,;:!?])", r"\1", said)
    return re.sub(r"[ \t]{2,}", " ", said).strip()


_SIGN_IN: Final = re.compile(
    r"\bsign(?:ing)?[ -]?(?:in|up)\b|\bcreate (?:a |an )?(?:free )?account\b", re.IGNORECASE
)


_STARTING: Final = re.compile(r"[A-Za-z_.]*$")


def safe_prefix(draft: str, *, final: bool = False) -> int:
    """PW1 for a reply still being written: how much of ``draft`` may be shown — up to the
    first label it names, and (unless it is ``final``) short of a trailing word still being
    written, which may turn out to be one."""
    found = _LABEL.search(draft)
    end = found.start() if found is not None else len(draft)
    if final:
        return end
    tail = _STARTING.search(draft, 0, end)
    return tail.start() if tail is not None and tail.end() == end else end


_PATH: Final = re.compile(r"\s*\((?:host|deal|goals|plans|offers)(?:\.[\w-]+)+\)")


def without_paths(text: str) -> str:
    """PW1: ``text`` without the memory paths it cites in parentheses ("your limit 6000 USD
    (host.limits.reel)" → "your limit 6000 USD"): where memory keeps a value is for code."""
    return _PATH.sub("", text)


def asks_sign_in(text: str) -> bool:
    """Whether ``text`` asks its reader to sign in (the login gate said in the reply)."""
    return bool(_SIGN_IN.search(text))
