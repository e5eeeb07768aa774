"""The bare-stack yardsticks of ``bench/floor.py``: the same work as
``postMessage`` — bump the room's event sequence, insert the message, commit, publish one
pane event to Redis — built from the same libraries with the same uvicorn options, and nothing
else (no auth, no idempotency read, no rate limit, no queued runs). The strawberry variants
cache parsing and validation as dealroom's schema does (``CACHING``): without it a post parses
and validates its document afresh, CPU that dealroom does not spend, and the floor would not be
the best reasonable build of the same work.

Run one as ``python bench/floor_apps.py VARIANT PORT`` with ``FLOOR_DATABASE_URL`` (a migrated
dealroom database) and ``FLOOR_REDIS_URL`` in the environment. Every variant answers the
client's ``postMessage`` document (``{"query": ..., "variables": {"input": {"roomId", "body",
"clientMessageId"}}}``) with ``{"data": {"postMessage": {"cursor": ...}}}``, so one client
drives them all. The visitor participant of each room is read once at start-up.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
import redis.asyncio as redis
import strawberry
import uvicorn
from sqlalchemy import Table, insert, text, update
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from strawberry.asgi import GraphQL
from strawberry.extensions import ParserCache, SchemaExtension, ValidationCache

from dealroom.persistence.models import Message, Room
from dealroom.server import uvicorn_config

VARIANTS = ("strawberry-orm", "strawberry-core", "strawberry-asyncpg", "starlette-asyncpg")

ROOMS: Table = Room.__table__  # type: ignore[assignment]  # declarative tables are Tables
MESSAGES: Table = Message.__table__  # type: ignore[assignment]

Insert = Callable[[uuid.UUID, str, str], Awaitable[int]]

CACHE_SIZE = 256
CACHING: tuple[Callable[[], SchemaExtension], ...] = (
    lambda: ParserCache(maxsize=CACHE_SIZE),
    lambda: ValidationCache(maxsize=CACHE_SIZE),
)
"""dealroom's parse and validation caching (``dealroom/schema/build.py``): strawberry's two
extensions, as factories (a fresh extension per operation over one process-wide LRU cache per
``maxsize``), the same sizes. dealroom's ``CachedParser`` is ``ParserCache`` but for a parse
error, which it leaves to strawberry's own error path; a valid document costs the same."""


def _asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


class Store:
    """The message write in one of three ways; ``panes`` maps a room to its visitor pane."""

    def __init__(self, url: str, redis_url: str) -> None:
        self.url = url
        self.redis = redis.Redis.from_url(redis_url)
        self.panes: dict[uuid.UUID, uuid.UUID] = {}
        self.pool: Any = None
        # dealroom's own pool: 10 kept, 20 more while busy. Every app of every variant holds
        # its pool while the others are driven, so together they hold no more than PostgreSQL
        # lets the machine open (max_connections 100): with a pool of 20 each and 4 more for
        # asyncpg in every process, dealroom's busy moments were refused connections (INTERNAL).
        self.engine = create_async_engine(url, pool_size=10, max_overflow=20)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)

    async def start(self, raw: bool) -> None:
        """``raw``: the variant writes through asyncpg's own pool, which lets idle connections
        go; the others through SQLAlchemy's (only the pool the variant uses is opened)."""
        if raw:
            self.pool = await asyncpg.create_pool(
                _asyncpg_dsn(self.url), min_size=1, max_size=30, max_inactive_connection_lifetime=5
            )
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                text("SELECT room_id, id FROM participants WHERE key = 'visitor'")
            )
            self.panes = {room_id: pane_id for room_id, pane_id in rows}
        if raw:
            await self.engine.dispose()

    async def publish(self, room_id: uuid.UUID, seq: int, body: str) -> None:
        payload = json.dumps({"cursor": seq, "prev": seq - 1, "body": body})
        await self.redis.publish(f"pane:{room_id}:visitor", payload)

    async def orm(self, room_id: uuid.UUID, body: str, client_id: str) -> int:
        async with self.sessions() as session, session.begin():
            seq = int(
                (
                    await session.execute(
                        update(Room)
                        .where(Room.id == room_id)
                        .values(event_seq=Room.event_seq + 1)
                        .returning(Room.event_seq)
                    )
                ).scalar_one()
            )
            session.add(self._message(room_id, seq, body, client_id))
        await self.publish(room_id, seq, body)
        return seq

    async def core(self, room_id: uuid.UUID, body: str, client_id: str) -> int:
        rooms, messages = ROOMS, MESSAGES
        async with self.engine.begin() as conn:
            seq = int(
                (
                    await conn.execute(
                        update(rooms)
                        .where(rooms.c.id == room_id)
                        .values(event_seq=rooms.c.event_seq + 1)
                        .returning(rooms.c.event_seq)
                    )
                ).scalar_one()
            )
            values = self._values(room_id, seq, body, client_id)
            await conn.execute(insert(messages).values(**values))
        await self.publish(room_id, seq, body)
        return seq

    async def raw(self, room_id: uuid.UUID, body: str, client_id: str) -> int:
        async with self.pool.acquire() as conn, conn.transaction():
            seq = int(
                await conn.fetchval(
                    "UPDATE rooms SET event_seq = event_seq + 1 WHERE id = $1 RETURNING event_seq",
                    room_id,
                )
            )
            values = self._values(room_id, seq, body, client_id)
            await conn.execute(
                "INSERT INTO messages (id, room_id, participant_id, seq, author_kind, body, "
                "session_no, client_message_id, created_at) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                values["id"],
                room_id,
                values["participant_id"],
                seq,
                values["author_kind"],
                body,
                1,
                client_id,
                values["created_at"],
            )
        await self.publish(room_id, seq, body)
        return seq

    def _values(self, room_id: uuid.UUID, seq: int, body: str, client_id: str) -> dict[str, Any]:
        return {
            "id": uuid.uuid4(),
            "room_id": room_id,
            "participant_id": self.panes[room_id],
            "seq": seq,
            "author_kind": "participant",
            "body": body,
            "session_no": 1,
            "client_message_id": client_id,
            "created_at": datetime.now(UTC),
        }

    def _message(self, room_id: uuid.UUID, seq: int, body: str, client_id: str) -> Message:
        return Message(**self._values(room_id, seq, body, client_id))


@strawberry.input
class PostMessageInput:
    room_id: strawberry.ID
    body: str
    client_message_id: str


@strawberry.type
class Posted:
    cursor: str


@strawberry.type
class Query:
    @strawberry.field
    def ok(self) -> bool:
        return True


def graphql_app(write: Insert) -> Any:
    @strawberry.type
    class Mutation:
        @strawberry.mutation
        async def post_message(self, input: PostMessageInput) -> Posted:
            seq = await write(uuid.UUID(str(input.room_id)), input.body, input.client_message_id)
            return Posted(cursor=str(seq))

    schema = strawberry.Schema(query=Query, mutation=Mutation, extensions=list(CACHING))
    return GraphQL(schema, graphql_ide=None)


def starlette_app(write: Insert) -> Any:
    async def post(request: Request) -> Response:
        data = json.loads(await request.body())["variables"]["input"]
        seq = await write(uuid.UUID(data["roomId"]), data["body"], data["clientMessageId"])
        return JSONResponse({"data": {"postMessage": {"cursor": str(seq)}}})

    return Starlette(routes=[Route("/graphql", post, methods=["POST"])])


def build(variant: str, store: Store) -> Any:
    writes = {
        "strawberry-orm": store.orm,
        "strawberry-core": store.core,
        "strawberry-asyncpg": store.raw,
        "starlette-asyncpg": store.raw,
    }
    endpoint = (starlette_app if variant == "starlette-asyncpg" else graphql_app)(writes[variant])

    async def health(_request: Request) -> Response:
        return Response("ok")

    app = Starlette(routes=[Route("/health", health)])
    app.mount("/", endpoint)
    return app


async def serve(variant: str, port: int) -> None:
    store = Store(os.environ["FLOOR_DATABASE_URL"], os.environ["FLOOR_REDIS_URL"])
    await store.start(raw=variant.endswith("asyncpg"))
    config = uvicorn_config(
        build(variant, store), host="127.0.0.1", port=port, log_level="warning", access_log=False
    )
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    name, port_arg = sys.argv[1], sys.argv[2]
    if name not in VARIANTS:
        raise SystemExit(f"variant must be one of {', '.join(VARIANTS)}")
    try:
        import uvloop

        uvloop.run(serve(name, int(port_arg)))
    except ImportError:
        asyncio.run(serve(name, int(port_arg)))
