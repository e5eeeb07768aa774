"""Structured logs with structlog: console lines for people, JSON for machines.

With ``json`` every line a process writes is one JSON object: structlog's own events, and the
standard library's records (uvicorn's start-up and access lines, strawberry, SQLAlchemy,
Alembic) rendered by the same processors through one root handler; ``gc_pause`` lines write
their own JSON (``gc_tuning``)."""

from __future__ import annotations

import logging
import sys

import structlog

_SHARED: list[structlog.types.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def configure(fmt: str = "console", level: int = logging.INFO) -> None:
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[*_SHARED, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=True,
    )
    if fmt == "json":
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                pass_foreign_args=True,
                foreign_pre_chain=[*_SHARED, structlog.stdlib.add_logger_name, _access_fields],
                processors=[
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info,
                    renderer,
                ],
            )
        )
        root = logging.getLogger()
        root.handlers[:] = [handler]
        root.setLevel(level)
    else:
        logging.basicConfig(level=level, format="%(message)s")
    # Alembic narrates every connection it inspects; the commands print their own summary.
    logging.getLogger("alembic").setLevel(logging.WARNING)


ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


def _access_fields(
    _logger: object, _name: str, event: structlog.types.EventDict
) -> structlog.types.EventDict:
    """uvicorn's access line as fields (``client``, ``method``, ``path``, ``http_version``,
    ``status``) beside its usual text, so log queries need no parsing."""
    record = event.get("_record")
    args = event.pop("positional_args", ())
    if (
        isinstance(record, logging.LogRecord)
        and record.name == "uvicorn.access"
        and isinstance(args, tuple)
        and len(args) == len(ACCESS_FIELDS)
    ):
        event.update(zip(ACCESS_FIELDS, args, strict=True))
    return event
