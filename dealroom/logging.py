"""Structured logs with structlog: console lines for people, JSON for machines."""

from __future__ import annotations

import logging

import structlog


def configure(fmt: str = "console", level: int = logging.INFO) -> None:
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=level, format="%(message)s")
    # Alembic narrates every connection it inspects; the commands print their own summary.
    logging.getLogger("alembic").setLevel(logging.WARNING)
