"""``dealroom``: serve | worker | migrate | export-schema | accounts ..."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import click

from dealroom.config import Settings
from dealroom.logging import configure


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
def serve(host: str | None, port: int | None) -> None:
    """Run the server. On embedded defaults, applies migrations first."""
    import uvicorn

    from dealroom.app import create_app
    from dealroom.server import uvicorn_config

    settings = Settings()
    configure(settings.log_format)
    host = host or settings.host
    port = port or settings.port
    if settings.embedded:
        click.echo(f"migrating {settings.resolved_database_url}")
        asyncio.run(_migrate(settings))
    broker = "redis" if settings.redis_url else "in-process"
    click.echo(f"dealroom: GraphQL + GraphiQL  http://{host}:{port}/graphql")
    click.echo(f"dealroom: subscriptions       ws://{host}:{port}/graphql")
    click.echo(f"dealroom: health              http://{host}:{port}/health")
    click.echo(
        f"dealroom: database {settings.resolved_database_url.split('@')[-1]}; broker {broker}"
    )
    engine = "gemini" if settings.use_gemini else "offline"
    click.echo(f"dealroom: agents on the {engine} engine, {settings.workers} workers")
    config = uvicorn_config(
        create_app(settings), host=host, port=port, access_log=settings.access_log
    )
    uvicorn.Server(config).run()


@main.command()
def worker() -> None:
    """Run agent turns and webhook deliveries (no HTTP): any number of these may share one
    database and Redis.
    Stop with Ctrl-C; a turn cut off mid-run is re-queued when its lease expires."""
    settings = Settings()
    configure(settings.log_format)
    if settings.workers < 1 and settings.webhook_workers < 1:
        raise click.UsageError(
            "DEALROOM_WORKERS or DEALROOM_WEBHOOK_WORKERS must be at least 1 for a worker."
        )
    click.echo(
        f"dealroom worker: {settings.workers} agent and {settings.webhook_workers} webhook "
        "workers on "
        f"{settings.resolved_database_url.split('@')[-1]}"
    )
    try:
        asyncio.run(_work(settings))
    except KeyboardInterrupt:
        click.echo("stopped")


async def _work(settings: Settings) -> None:
    from dealroom.persistence.engine import create_engine, create_sessionmaker
    from dealroom.realtime import create_broker
    from dealroom.services.agents import (
        create_model_client,
        create_payment_provider,
        create_runner,
    )
    from dealroom.services.clock import SystemClock

    engine = create_engine(settings.resolved_database_url)
    broker = create_broker(settings.redis_url)
    model = create_model_client(settings)
    clock = SystemClock()
    payments = create_payment_provider(settings, clock)
    from dealroom.services.webhook_worker import WebhookWorker

    sessionmaker = create_sessionmaker(engine)
    runner = create_runner(settings, sessionmaker, broker, clock, model, payments)
    webhooks = WebhookWorker(settings, sessionmaker, broker, clock)
    await broker.start()
    await runner.start()
    await webhooks.start()
    try:
        await asyncio.Event().wait()
    finally:
        await webhooks.close()
        await runner.close()
        await model.close()
        await broker.close()
        await engine.dispose()


@main.command()
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
    from dealroom.schema.root import create_schema

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

    from dealroom.domain.errors import DomainError

    try:
        asyncio.run(run())
    except DomainError as exc:
        raise click.ClickException(f"{exc.code}: {exc.message}") from exc


@accounts.command("grant-manager")
@click.argument("manager")
@click.argument("managed")
def grant_manager(manager: str, managed: str) -> None:
    """Let MANAGER (handle) act as MANAGED (handle) with X-Act-As."""
    from dealroom.services.accounts import grant_manager as grant

    _run_in_transaction(grant, manager_handle=manager, managed_handle=managed)
    click.echo(f"{manager} may now act as {managed}")


@accounts.command("revoke-manager")
@click.argument("manager")
@click.argument("managed")
def revoke_manager(manager: str, managed: str) -> None:
    """Remove MANAGER's right to act as MANAGED."""
    from dealroom.services.accounts import revoke_manager as revoke

    _run_in_transaction(revoke, manager_handle=manager, managed_handle=managed)
    click.echo(f"{manager} may no longer act as {managed}")


@accounts.command("set-operator")
@click.argument("handle")
@click.option("--off", is_flag=True, help="Remove the operator flag instead.")
def set_operator(handle: str, off: bool) -> None:
    """Mark HANDLE as an operator (or not, with --off)."""
    from dealroom.services.accounts import set_operator as mark

    _run_in_transaction(mark, handle=handle, operator=not off)
    click.echo(f"{handle} operator={'no' if off else 'yes'}")


if __name__ == "__main__":
    main()
