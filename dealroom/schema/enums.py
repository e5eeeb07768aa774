"""GraphQL enums: the domain's StrEnums, registered with strawberry (GraphQL names are the
member names, so ``Seat.HOST`` is ``HOST``)."""

from __future__ import annotations

import strawberry

from dealroom.domain.durable import SystemLineKind
from dealroom.domain.seats import Alignment, AuthorKind, RoomKind, RoomMode, Seat

strawberry.enum(Seat, description="A participant's place in a room; each seat has one pane.")
strawberry.enum(
    RoomKind,
    description="HOME: an account with its own agent. DEAL: a visitor negotiating with a host.",
)
strawberry.enum(
    RoomMode,
    description="LIVE: a real negotiation. DEMO: the host previewing its own agent. "
    "SCRIPTED: a mock tape (never written to durable memory).",
)
strawberry.enum(
    AuthorKind,
    description="Who wrote a message: the pane's participant, its agent, the system, or an "
    "operator speaking in the agent's seat of a taken-over pane.",
)
strawberry.enum(
    Alignment,
    description="Which side of the reader's screen a message sits on (computed per reader).",
)

# Registered here, with the other enums, before any type names it: a type whose annotations
# resolve first would otherwise register it bare (no description).
strawberry.enum(
    SystemLineKind,
    description="What a system line is about: NOTICE (a new room, a handback), MEMORY_MERGED "
    "(standing knowledge from the participant's profile was merged into this room), "
    "TURN_RETRYING (the pane's agent could not answer and tries again by itself: what it had "
    "streamed will not be stored) or TURN_FAILED (it could not answer; retryTurn runs the turn "
    "again).",
)

__all__ = ["Alignment", "AuthorKind", "RoomKind", "RoomMode", "Seat", "SystemLineKind"]
