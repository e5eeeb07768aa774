"""``dealroom``: serve | worker | migrate | export-schema | accounts ..."""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import pydantic

from dealroom.config import Settings
from dealroom.logging import configure

if TYPE_CHECKING:
    from dealroom.services.rooms.demo import DemoHost

F = TypeVar("F", bound=Callable[..., Any])


def one_line_errors(command: F) -> F:
    """An operator's mistake (no database, unmigrated schema, unknown handle) is one line on
    stderr and exit status 1, never a traceback."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise click.ClickException(_one_line(exc)) from exc

    return run  # type: ignore[return-value]


def _one_line(exc: BaseException) -> str:
    from dealroom.domain.errors import DomainError

    if isinstance(exc, DomainError):
        return f"{exc.code}: {exc.message}"
    if isinstance(exc, pydantic.ValidationError) and exc.errors():
        # A refused setting: its own message, not pydantic's "1 validation error" header.
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        detail = str(first.get("msg", "")).removeprefix("Value error, ")
        return f"invalid settings: {where + ': ' if where else ''}{detail}"
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    detail = text[0] if text else ""
    message = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    if type(exc).__module__.startswith("sqlalchemy"):
        message += " (check DEALROOM_DATABASE_URL, then run `dealroom migrate`)"
    return message


async def _require_head(settings: Settings) -> None:
    from dealroom.persistence.engine import create_engine
    from dealroom.persistence.migrate import NotAtHead, require_head

    engine = create_engine(settings.resolved_database_url)
    try:
        await require_head(engine)
    except NotAtHead as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        await engine.dispose()


@click.group()
def main() -> None:
    """dealroom: a GraphQL server for firewalled agent negotiation rooms."""


async def _migrate(settings: Settings) -> None:
    from dealroom.persistence.engine import create_engine
    from dealroom.persistence.migrate import upgrade

    engine = create_engine(settings.resolved_database_url)
    try:
        await upgrade(engine)
    finally:
        await engine.dispose()


@main.command()
@click.option("--host", default=None, help="Interface to bind (DEALROOM_HOST).")
@click.option("--port", default=None, type=int, help="Port (DEALROOM_PORT).")
@click.option(
    "--processes",
    default=None,
    type=int,
    help="Server processes sharing the port (default: one per core with DEALROOM_REDIS_URL, "
    "else 1).",
)
@one_line_errors
def serve(host: str | None, port: int | None, processes: int | None) -> None:
    """Run the server. On embedded defaults, applies migrations first; otherwise refuses to
    start on a database that is not at the newest migration."""
    import os

    import uvicorn

    from dealroom.app import create_app
    from dealroom.server import SUPERVISOR_PID_ENV, process_count, uvicorn_config

    settings = Settings()
    configure(settings.log_format)
    say = banner(settings.log_format)
    host = host or settings.host
    port = port or settings.port
    try:
        count = process_count(
            processes, shared_broker=bool(settings.redis_url), cpus=os.cpu_count()
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    demo: DemoHost | None = None
    if settings.embedded:
        say(f"migrating {settings.resolved_database_url}")
        asyncio.run(_migrate(settings))
        if settings.demo:
            try:
                demo = asyncio.run(_seed_demo(settings, only_if_empty=True))
            except Exception as exc:  # the server is still worth starting without the demo
                say(f"dealroom: the demo could not be seeded ({exc}); serving without it")
    asyncio.run(_require_head(settings))
    broker = "redis" if settings.redis_url else "in-process"
    say(f"dealroom: open http://{host}:{port}/ (the web client; hosts sign in here)")
    if demo is not None:
        _echo_demo(demo, f"http://{host}:{port}", say)
    say(f"dealroom: GraphQL + GraphiQL  http://{host}:{port}/graphql")
    say(f"dealroom: subscriptions       ws://{host}:{port}/graphql")
    say(f"dealroom: health              http://{host}:{port}/health")
    say(f"dealroom: database {settings.resolved_database_url.split('@')[-1]}; broker {broker}")
    engine = "gemini" if settings.use_gemini else "offline"
    say(f"dealroom: agents on the {engine} engine, {settings.workers} workers")
    if count > 1:
        # The supervisor forks the children; each builds its own app from the environment
        # (server.app_from_env) and listens on a socket of its own, all on the one port
        # (SO_REUSEPORT: the kernel spreads the connections; dealroom/supervisor.py).
        from dealroom.supervisor import SocketPerChild, listening_sockets

        os.environ[SUPERVISOR_PID_ENV] = str(os.getpid())  # inherited by every child
        say(f"dealroom: {count} server processes")
        config = uvicorn_config(
            "dealroom.server:app_from_env",
            host=host,
            port=port,
            access_log=settings.access_log,
            processes=count,
            ws_ping_seconds=settings.ws_ping_seconds,
            header_timeout=settings.http_header_timeout,
            log_format=settings.log_format,
        )
        try:
            listeners = listening_sockets(host, port, count)
        except OSError as error:
            raise click.ClickException(f"cannot listen on {host}:{port}: {error}") from None
        SocketPerChild(config, listeners).run()
        return
    from dealroom.gc_tuning import settle_after_startup

    config = uvicorn_config(
        create_app(settings),
        host=host,
        port=port,
        access_log=settings.access_log,
        ws_ping_seconds=settings.ws_ping_seconds,
        header_timeout=settings.http_header_timeout,
        log_format=settings.log_format,
    )
    # modules, schema and app outlive every request: out of the GC's way
    settle_after_startup(
        young_threshold=settings.gc_young_threshold,
        log_pauses_over_ms=settings.gc_pause_log_ms,
        log_format=settings.log_format,
        survivors=settings.gc_freeze_survivors,
    )
    uvicorn.Server(config).run()


@main.command()
@click.option("--host", default=None, help="Host named in the printed URLs (DEALROOM_HOST).")
@click.option("--port", default=None, type=int, help="Port named in the printed URLs.")
@one_line_errors
def demo(host: str | None, port: int | None) -> None:
    """Seed the demo host (idempotent): an account whose agent was taught a sponsored-post
    rate and floor in its home room, through the real turn. Prints the visitor URL and the
    host's credentials."""
    settings = Settings()
    configure(settings.log_format)
    if settings.embedded:
        asyncio.run(_migrate(settings))
    else:
        asyncio.run(_require_head(settings))
    seeded = asyncio.run(_seed_demo(settings, only_if_empty=False))
    assert seeded is not None
    _echo_demo(seeded, f"http://{host or settings.host}:{port or settings.port}")


async def _seed_demo(settings: Settings, *, only_if_empty: bool) -> DemoHost | None:
    """Seed the demo over the configured edges (engine, broker, model), running the teaching
    turn here. With ``only_if_empty``: only on a database without accounts, else report the
    demo host if it is there."""
    from dealroom.jobs.wiring import (
        create_model_client,
        create_payment_provider,
        create_runner,
    )
    from dealroom.persistence.db import Db
    from dealroom.persistence.engine import create_engine, create_sessionmaker
    from dealroom.realtime import create_broker
    from dealroom.services.accounts.passwords import passwords_for
    from dealroom.services.clock import SystemClock
    from dealroom.services.rooms.demo import database_is_empty, demo_host_exists, seed_demo

    engine = create_engine(settings.resolved_database_url)
    sessionmaker = create_sessionmaker(engine)
    db = Db(sessionmaker)
    try:
        if only_if_empty and not await database_is_empty(db) and not await demo_host_exists(db):
            return None
        broker = create_broker(settings.redis_url)
        model = create_model_client(settings)
        clock = SystemClock()
        payments = create_payment_provider(settings, clock)
        runner = create_runner(settings, sessionmaker, broker, clock, model, payments)
        await broker.start()
        try:
            return await seed_demo(
                db,
                broker,
                clock,
                runner,
                passwords=passwords_for(settings.password_profile),
                posts_per_minute=settings.posts_per_minute,
            )
        finally:
            await model.close()
            await broker.close()
    finally:
        await db.close()
        await engine.dispose()


def banner(log_format: str) -> Callable[[str], None]:
    """How ``serve`` says what it is doing: plain lines, or with ``json`` logs one JSON
    ``banner`` event each, so every line of the process parses."""
    if log_format != "json":
        return click.echo
    import structlog

    log = structlog.get_logger("dealroom.cli")

    def say(text: str) -> None:
        log.info("banner", message=text)

    return say


def _echo_demo(demo: DemoHost, base: str, say: Callable[[str], None] = click.echo) -> None:
    taught = "; ".join(
        f"{slug.replace('_', ' ')}: ask {demo.asks.get(slug, '?')}, "
        f"floor {limit.floor} {limit.currency}"
        for slug, limit in demo.limits.items()
    )
    state = "seeded" if demo.created else "ready"
    say(f"dealroom: demo host {state}: {demo.handle} (taught in its home room: {taught})")
    say(f"dealroom:   as a brand, open   {base}{demo.link}")
    say(f"dealroom:   as the host, open  {base}/  and sign in as {demo.email} / {demo.password}")


@main.command()
@one_line_errors
def worker() -> None:
    """Run agent turns, webhook deliveries and notification emails (no HTTP): any number of
    these may share one database and Redis.
    Stop with Ctrl-C; a turn cut off mid-run is re-queued when its lease expires."""
    settings = Settings()
    configure(settings.log_format)
    if settings.workers < 1 and settings.webhook_workers < 1 and settings.notify_workers < 1:
        raise click.UsageError(
            "DEALROOM_WORKERS, DEALROOM_WEBHOOK_WORKERS or DEALROOM_NOTIFY_WORKERS must be at "
            "least 1 for a worker."
        )
    asyncio.run(_require_head(settings))
    click.echo(
        f"dealroom worker: {settings.workers} agent, {settings.webhook_workers} webhook and "
        f"{settings.notify_workers} notification workers on "
        f"{settings.resolved_database_url.split('@')[-1]}"
    )
    from dealroom.worker import run

    try:
        asyncio.run(run(settings))
    except KeyboardInterrupt:
        click.echo("stopped")


@main.command()
@one_line_errors
def migrate() -> None:
    """Apply every migration to DEALROOM_DATABASE_URL (or the embedded file)."""
    settings = Settings()
    configure(settings.log_format)
    click.echo(f"migrating {settings.resolved_database_url.split('@')[-1]}")
    asyncio.run(_migrate(settings))
    click.echo("migrated to head")


@main.command("export-schema")
@click.option("--output", type=click.Path(path_type=Path), help="Write to FILE instead of stdout.")
def export_schema(output: Path | None) -> None:
    """Print the GraphQL SDL (schema.graphql is this output)."""
    from dealroom.schema.build import create_schema

    sdl = create_schema(Settings()).as_str() + "\n"
    if output is None:
        sys.stdout.write(sdl)
    else:
        output.write_text(sdl)
        click.echo(f"wrote {output}", err=True)


@main.group()
def accounts() -> None:
    """Account administration (operators, act-as edges)."""


def _run_in_transaction(work: Callable[..., Awaitable[None]], **kwargs: object) -> None:
    from dealroom.persistence.db import Db
    from dealroom.persistence.engine import create_engine, create_sessionmaker

    async def run() -> None:
        settings = Settings()
        engine = create_engine(settings.resolved_database_url)
        db = Db(create_sessionmaker(engine))
        try:
            await work(db, **kwargs)
            await db.commit()
        finally:
            await db.close()
            await engine.dispose()

    asyncio.run(_require_head(Settings()))
    asyncio.run(run())


@accounts.command("grant-manager")
@click.argument("manager")
@click.argument("managed")
@one_line_errors
def grant_manager(manager: str, managed: str) -> None:
    """Let MANAGER (handle) act as MANAGED (handle) with X-Act-As."""
    from dealroom.services.accounts.service import grant_manager as grant

    _run_in_transaction(grant, manager_handle=manager, managed_handle=managed)
    click.echo(f"{manager} may now act as {managed}")


@accounts.command("revoke-manager")
@click.argument("manager")
@click.argument("managed")
@one_line_errors
def revoke_manager(manager: str, managed: str) -> None:
    """Remove MANAGER's right to act as MANAGED."""
    from dealroom.services.accounts.service import revoke_manager as revoke

    _run_in_transaction(revoke, manager_handle=manager, managed_handle=managed)
    click.echo(f"{manager} may no longer act as {managed}")


@accounts.command("set-operator")
@click.argument("handle")
@click.option("--off", is_flag=True, help="Remove the operator flag instead.")
@one_line_errors
def set_operator(handle: str, off: bool) -> None:
    """Mark HANDLE as an operator (or not, with --off)."""
    from dealroom.services.accounts.service import set_operator as mark

    _run_in_transaction(mark, handle=handle, operator=not off)
    click.echo(f"{handle} operator={'no' if off else 'yes'}")


if __name__ == "__main__":
    main()
