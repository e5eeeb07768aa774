"""Account resolvers: parse input, call a service, map the result."""

from __future__ import annotations

import dataclasses
import uuid

import strawberry

from dealroom.domain.errors import not_found, unauthenticated
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account as AccountRow
from dealroom.persistence.repositories import AccountRepository
from dealroom.schema.account_types import Account
from dealroom.schema.context import ACT_AS_COOKIE, SESSION_COOKIE, Context, Info
from dealroom.schema.inputs import SignInInput, SignUpInput
from dealroom.schema.types import AuthPayload, Me
from dealroom.services.accounts import abuse
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.identity import GUEST_KEY_RE, digest, resolve_identity
from dealroom.services.accounts.passwords import passwords_for
from dealroom.services.gate import claims
from dealroom.services.live.endings import end_streams_after_commit
from dealroom.services.live.publish import publish_all


async def me(info: Info) -> Me | None:
    identity = await info.context.identity()
    if identity.account is None or identity.signed_in is None:
        return None
    return Me.from_rows(identity.account, identity.signed_in)


async def account(info: Info, handle: str) -> Account:
    row = await AccountRepository(info.context.db).by_handle(handle.strip().lower())
    if row is None:
        raise not_found("Account")
    return Account.from_row(row)


async def account_by_id(info: Info, id: strawberry.ID) -> Account:
    """A public profile by id (``node``): NOT_FOUND if unknown."""
    try:
        account_id = uuid.UUID(str(id))
    except ValueError as exc:
        raise not_found("Account") from exc
    row = await AccountRepository(info.context.db).by_id(account_id)
    if row is None:
        raise not_found("Account")
    return Account.from_row(row)


def _signed_in(info: Info, result: accounts.SignedIn) -> AuthPayload:
    settings = info.context.app.settings
    info.context.adopt_account(result.account)
    info.context.set_cookie(SESSION_COOKIE, result.token, int(settings.session_ttl.total_seconds()))
    return AuthPayload(token=result.token, account=Me.from_rows(result.account, result.account))


async def _claim(info: Info, db: Db, account: AccountRow) -> None:
    """A sign-up or sign-in that carries a guest key (header or cookie) claims the guest's
    rooms in the same transaction (the login gate: chat → gate → sign-in → same room)."""
    ctx = info.context
    guest_key = ctx.credentials().guest_key
    if not guest_key or not GUEST_KEY_RE.fullmatch(guest_key):
        return
    claimed = await claims.claim_guest_rooms(db, ctx.app.clock, account, guest_key)
    after_claim(ctx, db, claimed)


def after_claim(ctx: Context, db: Db, claimed: claims.Claimed) -> None:
    """After commit: tell the guest's panes the gate is down, and wake the replays."""
    broker, runner = ctx.app.broker, ctx.app.runner

    async def publish() -> None:
        await publish_all(broker, claimed.published)
        if claimed.replays:
            await runner.announce()

    if claimed.rooms:
        db.after_commit(publish)


async def sign_up(info: Info, input: SignUpInput) -> AuthPayload:
    ctx = info.context
    async with ctx.transaction() as db:
        result = await accounts.sign_up(
            db,
            ctx.app.clock,
            passwords_for(ctx.app.settings.password_profile),
            email=input.email,
            password=input.password,
            handle=input.handle,
            display_name=input.display_name,
            ttl_days=ctx.app.settings.session_ttl_days,
        )
        await _claim(info, db, result.account)
    return _signed_in(info, result)


async def sign_in(info: Info, input: SignInInput) -> AuthPayload:
    ctx = info.context
    result = await abuse.guard_sign_in(
        ctx.transaction,
        ctx.app.settings,
        ctx.app.clock.now(),
        email=input.email,
        ip=ctx.client_ip,
        attempt=lambda db: accounts.sign_in(
            db,
            ctx.app.clock,
            passwords_for(ctx.app.settings.password_profile),
            email=input.email,
            password=input.password,
            ttl_days=ctx.app.settings.session_ttl_days,
        ),
    )
    async with ctx.transaction() as db:
        await _claim(info, db, result.account)
    return _signed_in(info, result)


async def act_as(info: Info, account_id: strawberry.ID | None) -> Me:
    """Set (or, with null, clear) the act-as cookie for browser clients. Resolved without the
    current act-as choice, so a revoked edge can always be cleared."""
    ctx = info.context
    presented = dataclasses.replace(ctx.credentials(), act_as=None)
    signed_in = (await resolve_identity(ctx.db, ctx.app.clock, presented)).signed_in
    if signed_in is None:
        raise unauthenticated("Sign in before acting as another account.")
    if account_id is None:
        ctx.delete_cookie(ACT_AS_COOKIE)
        return Me.from_rows(signed_in, signed_in)
    chosen = await resolve_identity(
        ctx.db, ctx.app.clock, dataclasses.replace(presented, act_as=str(account_id))
    )
    assert chosen.account is not None
    ctx.set_cookie(
        ACT_AS_COOKIE, str(chosen.account.id), int(ctx.app.settings.session_ttl.total_seconds())
    )
    return Me.from_rows(chosen.account, signed_in)


async def sign_out(info: Info) -> bool:
    ctx = info.context
    token = ctx.credentials().token
    if token:
        async with ctx.transaction() as db:
            await accounts.sign_out(db, ctx.app.clock, token)
            end_streams_after_commit(db, ctx.app.broker, digest(token))
    ctx.delete_cookie(SESSION_COOKIE)
    ctx.delete_cookie(ACT_AS_COOKIE)
    return token is not None
