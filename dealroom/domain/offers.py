"""Written offers: who may move one, to where, and when a rewrite is material (pure, no I/O).

Rules (numbered so tests and docs can point at them):

- O1  Roles come from the reader's seat: the visitor is the brand (buyer), the host is the
      talent (seller). An admin acting for an account has that account's seat.
- O2  The brand's approval stamps ``brand_approved_at`` for the current version; the status
      stays APPROVED (stage BRAND_ACKED_AWAITING_TALENT). Approving again is a no-op.
- O3  The talent's approval is the booking (APPROVED → ACCEPTED) and is allowed only once the
      brand has approved *this* version. Approving a booked offer again is a no-op.
- O4  An approval in any other stage is a CONFLICT carrying the current stage; an approval of
      a version other than the current one is a CONFLICT too (the reader saw stale terms),
      except the brand's repeated approval of a booked offer naming an older version that
      existed: that is the no-op of O2/O3 (an idempotent retry). A version that never existed
      (0, or past the current one) is always a CONFLICT.
- O5  A material rewrite (the commercial fields' fingerprint changes) makes a new version and
      clears the brand's stamp. The same fields again change nothing.
- O6  A booked offer is never rewritten in its room: a change after both approvals goes to a
      sibling deal room for the same pair.
- O7  Counter, Reject and Add are shortcuts into chat, allowed on a live offer before the
      booking; they never change the row.
- O8  Only the brand pays, only in BOOKED_AWAITING_PAYMENT.
- O9  ``abandoned`` of the ``new-offer`` goal closes a live written offer (REJECTED); a
      booked or closed one is left alone.
- O10 Abandoned is terminal like a booking: in a room whose ``new-offer`` was ever ruled
      abandoned, or whose written offer is closed, no offer is minted again; a later wish to
      deal is drawn in a sibling deal room for the same pair (as O6).
- O11 A new campaign after ``CAMPAIGN_SILENCE`` of silence is a new deal: new terms agreed
      after the pane fell silent that long since the written offer's last change are drawn
      in a sibling room; the old offer is left as it is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Final

from dealroom.domain.errors import DomainError, ErrorCode, forbidden
from dealroom.domain.offer_stage import BOOKED, OfferRow, OfferStatus, Stage, derive_stage
from dealroom.domain.seats import Seat

NEW_OFFER: Final = "new-offer"
"""The goal whose flips mint (met) and close (abandoned) the written offer."""

COMMERCIAL_FIELDS: Final = (
    "deliverables",
    "fee",
    "dates",
    "usageRights",
    "exclusivity",
    "dueSlicePercent",
)
"""The fields the agreement is drawn from and the fingerprint covers; nothing else of a room."""

COUNTER_PREFIX: Final = "Counter to the written offer:"
REJECT_PREFIX: Final = "I reject the written offer."
ADD_PREFIX: Final = "Please add to the written offer:"
"""O7: the chat lines the shortcuts post as the reader; the agents read them like any line."""

LIVE: Final = frozenset({OfferStatus.APPROVED})
"""Statuses of a written offer still open to approvals, rewrites and the chat shortcuts."""

CLOSED: Final = frozenset({OfferStatus.REJECTED, OfferStatus.WITHDRAWN})


class Role(StrEnum):
    BRAND = "brand"
    TALENT = "talent"


class Action(StrEnum):
    APPROVE = "APPROVE"
    COUNTER = "COUNTER"
    REJECT = "REJECT"
    ADD = "ADD"
    PAY = "PAY"


def role_of(seat: Seat) -> Role:
    """O1."""
    return Role.TALENT if seat is Seat.HOST else Role.BRAND


def commercial_fields(terms: Mapping[str, Any], seller: str, buyer: str | None) -> dict[str, Any]:
    """What an offer commits the parties to: its terms' commercial fields and the parties."""
    fields = {name: terms.get(name) for name in COMMERCIAL_FIELDS}
    fields["seller"] = seller
    fields["buyer"] = buyer
    return fields


def fingerprint(fields: Mapping[str, Any]) -> str:
    """A stable digest of the commercial fields (canonical JSON, sorted keys)."""
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class OfferState:
    """The columns the rules read."""

    status: OfferStatus
    brand_approved_at: datetime | None
    version: int

    @property
    def stage(self) -> Stage:
        return derive_stage(OfferRow(self.status, self.brand_approved_at))


def conflict(message: str, state: OfferState) -> DomainError:
    """O4: a move out of order names where the offer stands."""
    return DomainError(ErrorCode.CONFLICT, message, stage=state.stage.value, version=state.version)


class Approval(StrEnum):
    BRAND_STAMPED = "brand_stamped"
    BOOKED = "booked"
    ALREADY = "already"


def approve(state: OfferState, seat: Seat, version: int | None = None) -> Approval:
    """O2-O4: what an approval from ``seat`` does to an offer in ``state``."""
    stage = state.stage
    role = role_of(seat)
    if version is not None and version != state.version:
        if (
            1 <= version < state.version  # a version that never existed is never "already"
            and role is Role.BRAND
            and state.brand_approved_at is not None
            and stage in BOOKED
        ):
            return Approval.ALREADY
        raise conflict(
            f"The written offer is at version {state.version}; you approved version {version}.",
            state,
        )
    if role is Role.BRAND:
        if stage is Stage.WRITTEN_AWAITING_BRAND:
            return Approval.BRAND_STAMPED
        if state.brand_approved_at is not None and (
            stage is Stage.BRAND_ACKED_AWAITING_TALENT or stage in BOOKED
        ):
            return Approval.ALREADY
        raise conflict(f"The written offer cannot be approved at {stage.value}.", state)
    if stage is Stage.BRAND_ACKED_AWAITING_TALENT:
        return Approval.BOOKED
    if stage in BOOKED:
        return Approval.ALREADY
    if stage is Stage.WRITTEN_AWAITING_BRAND:
        raise conflict("The brand has not approved this version of the written offer.", state)
    raise conflict(f"The written offer cannot be approved at {stage.value}.", state)


class Rewrite(StrEnum):
    UNCHANGED = "unchanged"
    NEW_VERSION = "new_version"
    SIBLING = "sibling"
    MINT = "mint"


CAMPAIGN_SILENCE: Final = timedelta(days=7)


def new_campaign(
    offer_changed_at: datetime,
    since: Sequence[datetime],
    silence: timedelta = CAMPAIGN_SILENCE,
) -> bool:
    """O11: whether the pane fell silent for ``silence`` at some point after the offer's last
    change (``since``: the times of the pane's messages from then on, in order)."""
    previous = offer_changed_at
    for at in since:
        if at - previous >= silence:
            return True
        previous = max(previous, at)
    return False


def rewrite(
    state: OfferState | None,
    old_fingerprint: str | None,
    new_fingerprint: str,
    *,
    abandoned: bool = False,
    campaign: bool = False,
) -> Rewrite:
    """O5/O6: what newly extracted terms do to the room's current offer. O10: a room whose
    ``new-offer`` goal was ever ruled abandoned (``abandoned``), or whose offer is closed, is
    over like a booked one: a later wish to deal is drawn in a sibling room, never minted here."""
    if abandoned or (state is not None and state.status in CLOSED):
        return Rewrite.SIBLING
    if state is None:
        return Rewrite.MINT
    if state.stage in BOOKED or campaign:  # O6, O11
        return Rewrite.SIBLING if old_fingerprint != new_fingerprint else Rewrite.UNCHANGED
    if old_fingerprint == new_fingerprint:
        return Rewrite.UNCHANGED
    return Rewrite.NEW_VERSION


def check_shortcut(state: OfferState, action: Action) -> None:
    """O7: Counter/Reject/Add on a live offer before the booking, by either party."""
    if action not in (Action.COUNTER, Action.REJECT, Action.ADD):
        raise ValueError(action)
    if state.status not in LIVE:
        raise conflict(
            f"The written offer is at {state.stage.value}; it can no longer be changed here.",
            state,
        )


def check_pay(state: OfferState, seat: Seat) -> None:
    """O8."""
    if role_of(seat) is not Role.BRAND:
        raise forbidden("Only the brand pays a written offer.")
    if state.stage is not Stage.BOOKED_AWAITING_PAYMENT:
        raise conflict(f"The written offer cannot be paid at {state.stage.value}.", state)


def closes_on_abandon(state: OfferState | None) -> bool:
    """O9."""
    return state is not None and state.status in LIVE


def viewer_actions(state: OfferState, seat: Seat) -> list[Action]:
    """What the reader (from its seat) may do now, for buttons: never an action the mutations
    would refuse."""
    actions: list[Action] = []
    stage = state.stage
    role = role_of(seat)
    if (role is Role.BRAND and stage is Stage.WRITTEN_AWAITING_BRAND) or (
        role is Role.TALENT and stage is Stage.BRAND_ACKED_AWAITING_TALENT
    ):
        actions.append(Action.APPROVE)
    if state.status in LIVE:
        actions += [Action.COUNTER, Action.REJECT, Action.ADD]
    if role is Role.BRAND and stage is Stage.BOOKED_AWAITING_PAYMENT:
        actions.append(Action.PAY)
    return actions
