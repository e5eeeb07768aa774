"""What the offline persona says about the written offer: the shortcut lines the offer's
buttons post, answers about where the deal stands, and the notices its own sends carry.

Every status answer is read from the DEAL STAGE in the context and nothing else (seed 000
"Deals move through explicit physical stages", the Sophie Bell reversal): only a BOOKED stage
is ever called booked, a request to "confirm acceptance" is answered, never granted, and a
payment is never declared or taken in chat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, assert_never

from dealroom.domain import offers
from dealroom.domain.offer_stage import Stage
from dealroom.domain.pane_words import button

PAY: Final = button(offers.Action.PAY)
"""PW3: the offer card's pay button, by the label it shows."""

# --- the shortcut lines -----------------------------------------------------------------------

# The lines the server posts as the reader (O7 in domain/offers.py); one definition.
COUNTER_PREFIX: Final = offers.COUNTER_PREFIX
REJECT_PREFIX: Final = offers.REJECT_PREFIX
ADD_PREFIX: Final = offers.ADD_PREFIX


def without_shortcut(text: str) -> str:
    """The reader's own words of an offer-button line (the line itself when it is none)."""
    stripped = text.strip()
    for prefix in (COUNTER_PREFIX, REJECT_PREFIX, ADD_PREFIX):
        if stripped.startswith(prefix):
            return stripped[len(prefix) :].strip()
    return text


def is_shortcut(text: str) -> bool:
    """A line an offer button posted (Counter, Reject or Add)."""
    stripped = text.strip()
    return any(
        stripped.startswith(prefix) for prefix in (COUNTER_PREFIX, REJECT_PREFIX, ADD_PREFIX)
    )


class ShortcutKind(StrEnum):
    COUNTER = "counter"
    REJECT = "reject"
    ADD = "add"


_PREFIXES: Final = (
    (COUNTER_PREFIX, ShortcutKind.COUNTER),
    (REJECT_PREFIX, ShortcutKind.REJECT),
    (ADD_PREFIX, ShortcutKind.ADD),
)


@dataclass(frozen=True, slots=True)
class Shortcut:
    kind: ShortcutKind
    text: str
    """What the reader wrote after the prefix, stripped (may be empty)."""


def read_shortcut(body: str) -> Shortcut | None:
    """The shortcut line ``body`` is, if it starts with one of the prefixes."""
    stripped = body.strip()
    for prefix, kind in _PREFIXES:
        if stripped.lower().startswith(prefix.lower()):
            return Shortcut(kind, stripped[len(prefix) :].strip())
    return None


# --- notices: the substances the offline persona sends about the written offer ----------------


class Notice(StrEnum):
    REJECTED = "rejected"
    ADD = "asks to add to"
    CHANGE = "asks to change"
    AGREES = "agrees to the change to"
    REFUSES = "doesn't agree to the change to"
    CANNOT = "can't make that change to"


_NOTICE = re.compile(
    r"\b(" + "|".join(re.escape(n.value) for n in Notice) + r") the written offer\b", re.I
)


def _clause(text: str) -> str:
    return text.strip().rstrip(".!?;:, ").strip()


def notice(kind: Notice, name: str, text: str = "") -> str:
    """The substance sent across for ``kind``, from the recipient's point of view."""
    said = _clause(text)
    match kind:
        case Notice.REJECTED | Notice.ADD | Notice.CHANGE | Notice.AGREES | Notice.REFUSES:
            return f"{name} {kind.value} the written offer" + (f": {said}." if said else ".")
        case Notice.CANNOT:
            return f"{name} {kind.value} the written offer; it stays as it is."
        case _:
            assert_never(kind)


def read_notice(body: str) -> Notice | None:
    """Which notice a delivered substance is, if it is one."""
    match = _NOTICE.search(body)
    return Notice(match.group(1).lower()) if match else None


def request_notice(shortcut: Shortcut, name: str) -> str:
    """A counter without an amount, or an add, as the notice the other side receives."""
    kind = Notice.ADD if shortcut.kind is ShortcutKind.ADD else Notice.CHANGE
    return notice(kind, name, shortcut.text)


# --- what is being asked ----------------------------------------------------------------------

_CARD_NUMBER = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
_PAYMENT_CLAIM = re.compile(
    r"\b(?:(?:i|we|they|she|he)(?:['’]ve| have| has| just)?\s+(?:already\s+)?"
    r"(?:paid|sent (?:the |a |you )?(?:payment|money|funds|deposit)|wired|transferred)|"
    r"payment (?:is |has been |was )?(?:sent|made|done|completed?)|"
    r"card (?:number|details|info)|cvc|cvv|security code|expiry|expiration|"
    r"here(?:['’]s| is) (?:my|our) card)\b",
    re.I,
)
_PAYMENT_ASK = re.compile(r"\b(?:pay|paid|paying|payment|invoice|deposit|card)\b", re.I)
_STATUS_ASK = re.compile(
    r"\b(?:booked|booking|accept(?:ed|ance|s)?|confirm(?:ed|ation|s)?|approv(?:e|ed|es|al)|"
    r"sign(?:ed|s|ing|ature)?|countersign\w*|contract|status|where (?:are|do) we|"
    r"where (?:things|it|we) stands?|next steps?|locked in|finali[sz]ed|official(?:ly)?|"
    r"done deal|(?:have|got) a deal|is it a deal|written offer)\b",
    re.I,
)

_ASKING = re.compile(
    r"\?|^\W*(?:please|kindly|can|could|would|will|confirm|tell me|let me know|any update|"
    r"what|whats|what's|how|which|who|when|where|why|do|does|did|is|are|has|have)\b",
    re.I,
)
"""A question or a request: a rule such as "always confirm the date first" is neither."""


def is_payment_claim(text: str) -> bool:
    """Someone says a payment was made, or writes card details, in chat."""
    return bool(_PAYMENT_CLAIM.search(text) or _CARD_NUMBER.search(text))


def is_payment_ask(text: str) -> bool:
    return bool(_PAYMENT_ASK.search(text))


def is_status_ask(text: str) -> bool:
    """A question or request about the deal's status, acceptance, booking, confirmation,
    contract or payment."""
    about = bool(_STATUS_ASK.search(text)) or is_payment_ask(text)
    return about and bool(_ASKING.search(text))


# --- answers from the DEAL STAGE --------------------------------------------------------------


def stage_of(value: object) -> Stage:
    """The stage in the context; no written offer when it is missing or unknown (ST1)."""
    try:
        return Stage(value) if isinstance(value, str) else Stage.NO_WRITTEN_OFFER
    except ValueError:
        return Stage.NO_WRITTEN_OFFER


def stage_answer(stage: Stage, *, host_pane: bool, host: str) -> str:
    """Where the deal stands, said to the pane's reader in the stage's own terms (the glosses,
    never the offers-system labels). Only a BOOKED stage says booked."""
    match stage:
        case Stage.NO_WRITTEN_OFFER:
            who = "you approve" if host_pane else f"{host} approves"
            return (
                "Nothing is written yet: terms may be agreed here in chat, then a written offer "
                f"is drawn. It is not booked until {who} the written offer."
            )
        case Stage.WRITTEN_AWAITING_BRAND:
            if host_pane:
                return (
                    "The written offer is drawn; the brand has not approved it yet. Once they "
                    "do, your approval of the written offer is the booking."
                )
            return (
                "The written offer is waiting for your approval. Once you approve it, "
                f"{host} reviews it; it is not booked until {host} approves the written offer."
            )
        case Stage.BRAND_ACKED_AWAITING_TALENT:
            if host_pane:
                return (
                    "The brand has approved; your approval of the written offer is the "
                    "booking. It is not booked yet."
                )
            return (
                f"You approved the written offer; {host} has not approved it yet, so it is "
                "not booked."
            )
        case Stage.BOOKED_AWAITING_PAYMENT:
            if host_pane:
                return (
                    f"You approved the written offer, so it is booked. The brand pays with {PAY} "
                    "on the offer and has not paid yet."
                )
            return (
                f"{host} approved the written offer, so it is booked. Payment is made with "
                f"{PAY} on the offer; I never take card details in chat."
            )
        case Stage.PENDING_PAY_CAPTURE:
            card = "The brand's card" if host_pane else "Your card"
            return (
                f"It is booked. {card} was submitted in the offer and the payment is still "
                "being captured."
            )
        case Stage.BOOKED_PAYMENT_HELD:
            whose = "the brand's" if host_pane else "your"
            return f"It is booked, and {whose} payment was captured and is held."
        case Stage.COMPLETED:
            return "It was booked, and the booked work is complete."
        case Stage.DISPUTED:
            return "It was booked, and the booked work is disputed."
        case Stage.DECLINED | Stage.WITHDRAWN:
            return "The written offer is closed, so there is no booking."
        case _:
            assert_never(stage)


def _payment_state(stage: Stage, *, host_pane: bool, host: str) -> str:
    """The payment half of the stage, as a clause."""
    match stage:
        case Stage.NO_WRITTEN_OFFER:
            return "nothing is written yet, so nothing is due"
        case Stage.WRITTEN_AWAITING_BRAND:
            who = "the brand and then you approve" if host_pane else f"you and then {host} approve"
            return f"nothing is due until {who} the written offer"
        case Stage.BRAND_ACKED_AWAITING_TALENT:
            who = "you approve" if host_pane else f"{host} approves"
            return f"nothing is due until {who} the written offer"
        case Stage.BOOKED_AWAITING_PAYMENT:
            return "it is booked, and the offer shows no payment yet"
        case Stage.PENDING_PAY_CAPTURE:
            card = "the brand's card" if host_pane else "your card"
            return (
                f"it is booked; {card} was submitted there and the payment is still being captured"
            )
        case Stage.BOOKED_PAYMENT_HELD:
            whose = "the brand's" if host_pane else "your"
            return f"it is booked, and {whose} payment was captured and is held"
        case Stage.COMPLETED:
            return "it was booked, and the booked work is complete"
        case Stage.DISPUTED:
            return "it was booked, and the booked work is disputed"
        case Stage.DECLINED | Stage.WITHDRAWN:
            return "the written offer is closed, so nothing is due"
        case _:
            assert_never(stage)


def payment_answer(stage: Stage, *, host_pane: bool, host: str) -> str:
    """The answer to a payment claim, card details or a payment question: payment happens in
    the offer, never in chat, and only the stage says whether it did."""
    state = _payment_state(stage, host_pane=host_pane, host=host)
    return f"Payment is made with {PAY} on the offer, not in chat; {state}."
