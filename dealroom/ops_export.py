"""``GET /ops/actions.jsonl``: the operators' audit trail as JSON lines, newest first (one
room's with ``?roomId=``). An operator's session, or an operator's API key with ops:read;
anyone else gets a plain 404, as for a page that does not exist. The export is itself an ops
read and is recorded before the first line is sent."""

from __future__ import annotations

import functools
import uuid

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from dealroom.domain.errors import DomainError
from dealroom.domain.scopes import key_may_call
from dealroom.schema.context import AppState, Context
from dealroom.services.accounts.identity import Identity, resolve_identity
from dealroom.services.ops import audit
from dealroom.services.unit_of_work import UnitOfWork, reading

PATH = "/ops/actions.jsonl"
FIELD = "opsActions"
"""The export reads what ``opsActions`` reads, so a key needs that field's scope."""


def _not_found() -> Response:
    return PlainTextResponse("Not Found", status_code=404, headers={"cache-control": "no-store"})


async def _operator(state: AppState, request: Request) -> Identity | None:
    credentials = Context(state, request, None).credentials()
    try:
        async with reading(state.sessionmaker) as db:
            identity = await resolve_identity(db, state.clock, credentials)
    except DomainError:
        return None
    account = identity.account
    if account is None or not account.is_operator:
        return None
    if identity.scopes is not None and key_may_call(FIELD, identity.scopes) is not None:
        return None
    return identity


def ops_export_routes(state: AppState) -> list[Route]:
    async def export(request: Request) -> Response:
        identity = await _operator(state, request)
        if identity is None:
            return _not_found()
        room_id: uuid.UUID | None = None
        raw = request.query_params.get("roomId")
        if raw is not None:
            try:
                room_id = uuid.UUID(raw)
            except ValueError:
                return PlainTextResponse("roomId must be a room id.", status_code=400)
        async with UnitOfWork(state.sessionmaker) as unit:
            await audit.record_read(
                unit.db,
                state.clock,
                identity,
                "opsActionsExport",
                {"roomId": str(room_id)} if room_id else {},
            )
        lines = audit.export_lines(functools.partial(reading, state.sessionmaker), room_id)
        return StreamingResponse(
            lines,
            media_type="application/jsonl; charset=utf-8",
            headers={
                "cache-control": "no-store",
                "content-disposition": 'attachment; filename="ops-actions.jsonl"',
            },
        )

    return [Route(PATH, export, methods=["GET"])]
