"""The kinds of notification, who they are for, and what an account gets by default."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Kind(StrEnum):
    DECISION = "decision"
    """The host's agent asked its principal something it may not decide."""
    APPROVAL = "approval"
    """A written offer waits for this reader's approval."""
    STAGE = "stage"
    """An offer was approved, booked, paid or closed."""
    ANSWERED = "answered"
    """The other side answered after a wait."""
    REMINDER = "reminder"
    ESCALATION = "escalation"
    """The waiting side is told the host has not answered yet."""
    OPERATOR_ALERT = "operator_alert"
    INVITATION = "invitation"
    """Someone invited this account into a deal room, to their side."""
    DIGEST = "digest"
    """The daily email carrying the notifications an account digests."""


class Mode(StrEnum):
    IMMEDIATE = "immediate"
    DIGEST = "digest"
    OFF = "off"
    """No email; the notification is still in the app's list (nothing is lost)."""


class Audience(StrEnum):
    HOST = "host"
    VISITOR = "visitor"
    """Visitor-facing: its text passed the private-value screen."""
    OPERATOR = "operator"


CHOOSABLE: Final = (
    Kind.DECISION,
    Kind.APPROVAL,
    Kind.STAGE,
    Kind.ANSWERED,
    Kind.REMINDER,
    Kind.ESCALATION,
    Kind.OPERATOR_ALERT,
    Kind.INVITATION,
)
"""The kinds an account sets a mode for (a digest is how others arrive, not a kind to pick)."""

DEFAULTS: Final[dict[Kind, Mode]] = {
    # What needs a person now comes at once; news that needs nothing comes once a day.
    Kind.DECISION: Mode.IMMEDIATE,
    Kind.APPROVAL: Mode.IMMEDIATE,
    Kind.REMINDER: Mode.IMMEDIATE,
    Kind.ESCALATION: Mode.IMMEDIATE,
    Kind.ANSWERED: Mode.IMMEDIATE,
    Kind.INVITATION: Mode.IMMEDIATE,
    Kind.OPERATOR_ALERT: Mode.OFF,
    Kind.STAGE: Mode.DIGEST,
    Kind.DIGEST: Mode.IMMEDIATE,
}
"""An operator opts in to alert emails; everything else a creator would accept as is."""


def mode_for(modes: dict[str, object] | None, kind: Kind) -> Mode:
    """The account's mode for ``kind``: its choice, else the default."""
    chosen = (modes or {}).get(kind.value)
    if isinstance(chosen, str) and chosen in Mode.__members__.values():
        return Mode(chosen)
    return DEFAULTS[kind]


def parse_kind(value: str) -> Kind:
    """A choosable kind, or ValueError naming the ones there are."""
    try:
        kind = Kind(value)
    except ValueError:
        kind = None
    if kind is None or kind not in CHOOSABLE:
        names = ", ".join(k.value for k in CHOOSABLE)
        raise ValueError(f"unknown notification kind {value!r} (one of: {names})")
    return kind
