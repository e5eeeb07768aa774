"""The handler protocol: what the runner calls for a claimed run of one agent kind."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from dealroom.services.turns.context import RunSnapshot

Handler = Callable[[RunSnapshot], Awaitable[None]]
"""A run handler: load what the run reads, think (the model call), apply in one unit of work."""
