"""The "notify" effect of a goal flip (seed 000 "Goals are structured envelopes":
"code fires effects the moment a status flips: notify a participant, generate the formal
offer").

Which flips notify whom is this table, owned by code: no model can attach a notify to a goal
or choose its recipient. The text is composed here from fixed words, so it carries nothing
of either side's memory.

- GN1 A flip notifies only the seats listed for its (goal, status), and never the pane whose
      agent ruled it (that side was there).
- GN2 A notice is delivered as a send (the one send path), written from the recipient's
      point of view, in the stage vocabulary's terms: nothing is called booked.
"""

from __future__ import annotations

from typing import Final

from dealroom.domain.memory import GoalStatus
from dealroom.domain.offers import NEW_OFFER
from dealroom.domain.seats import Seat

NOTIFY: Final[dict[tuple[str, GoalStatus], dict[Seat, str]]] = {
    (NEW_OFFER, GoalStatus.ABANDONED): {
        Seat.HOST: (
            "The negotiation with the brand in this deal room ended without a deal; any "
            "written offer is closed. Nothing is booked."
        ),
    },
    (NEW_OFFER, GoalStatus.BLOCKED): {
        Seat.HOST: (
            "The negotiation with the brand is stuck and needs your decision before it can "
            "go on. Nothing is booked."
        ),
    },
}


def notices(goal: str, status: str, *, ruled_in: str) -> dict[Seat, str]:
    """The notices a flip of ``goal`` to ``status``, ruled in pane ``ruled_in``, sends
    (GN1)."""
    try:
        key = (goal, GoalStatus(status))
    except ValueError:
        return {}
    return {seat: text for seat, text in NOTIFY.get(key, {}).items() if seat.value != ruled_in}
