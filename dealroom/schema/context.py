"""The typed per-request context: app state, one unit of work, loaders and the identity."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.types import Info as StrawberryInfo

from dealroom.config import Settings
from dealroom.domain.errors import DomainError
from dealroom.domain.locale import reader_locale
from dealroom.domain.money import DEFAULT_LOCALE
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account
from dealroom.realtime.broker import Broker
from dealroom.schema.loaders import Loaders, create_loaders
from dealroom.services.accounts.identity import Credentials, Identity, resolve_identity
from dealroom.services.clock import Clock
from dealroom.services.live.admission import Admission
from dealroom.services.live.heartbeats import Heartbeats
from dealroom.services.live.rechecks import Rechecks
from dealroom.services.offers.provider import PaymentProvider
from dealroom.services.turns.runs import Runner
from dealroom.services.unit_of_work import UnitOfWork, reading

SESSION_COOKIE = "dealroom_session"
GUEST_COOKIE = "dealroom_guest"
ACT_AS_COOKIE = "dealroom_act_as"


@dataclass(frozen=True)
class AppState:
    settings: Settings
    sessionmaker: async_sessionmaker[AsyncSession]
    broker: Broker
    clock: Clock
    runner: Runner
    payments: PaymentProvider
    admission: Admission
    """Bounds subscription start-ups' database work in this process."""
    rechecks: Rechecks
    """Held subscriptions' periodic re-checks (``resolvers/live.Guarded``)."""
    heartbeats: Heartbeats
    """Followed streams woken when the database holds an event they missed."""


class Context:
    def __init__(
        self, app: AppState, request: Request | WebSocket, response: Response | None
    ) -> None:
        self.app = app
        self.request = request
        self.response = response
        self.connection_params: dict[str, Any] | None = None
        """A websocket's connection_init payload (set by strawberry)."""
        self.credentials_unchecked = False
        """connection_init acked the socket without checking its credentials (the database
        was busy): its next subscription start-up checks them (``resolvers/live``)."""
        self.credentials_check: asyncio.Task[tuple[int, str] | None] | None = None
        """connection_init's check, still waiting on the database when the socket was acked;
        a subscription start-up waits for it before it queues for a slot of its own."""
        self._identity: Identity | None = None

    @functools.cached_property
    def unit(self) -> UnitOfWork:
        """The request's unit of work (made on first use: a websocket never needs one)."""
        return UnitOfWork(self.app.sessionmaker, self.app.broker, self.app.runner.signal)

    @property
    def db(self) -> Db:
        return self.unit.db

    def reading(self) -> contextlib.AbstractAsyncContextManager[Db]:
        """A short read of its own, closed on exit: a websocket's operations take one each, so
        the socket never holds a pooled connection while it waits."""
        return reading(self.app.sessionmaker)

    @functools.cached_property
    def loaders(self) -> Loaders:
        return create_loaders(
            self.db, guest_cap=self.app.settings.guest_message_cap, now=self.app.clock.now
        )

    @property
    def client_ip(self) -> str:
        """The caller's address (uvicorn applies X-Forwarded-For from trusted proxies)."""
        client = self.request.client
        return client.host if client else "unknown"

    @property
    def is_websocket(self) -> bool:
        return isinstance(self.request, WebSocket)

    def credentials(self) -> Credentials:
        """Bearer header, then cookie; a websocket may also pass them in connection_init
        (browsers cannot set headers on a websocket), under the names clients use:
        ``authorization``, ``Authorization`` or Apollo's ``authToken``, Bearer or bare, at the
        top level or in a ``headers`` object."""
        headers = self.request.headers
        cookies = self.request.cookies
        params = self.connection_params or {}
        token: str | None = None
        from_cookie = False
        malformed = False
        header = headers.get("authorization")
        authorization = header or _param(params, "authorization", "authtoken")
        if authorization:
            scheme, _, value = authorization.strip().partition(" ")
            if value:
                token = value.strip() if scheme.lower() == "bearer" else None
            elif header is None:  # a bare token, as Apollo's docs put it in connectionParams
                token = scheme
            malformed = not token
        elif cookies.get(SESSION_COOKIE):
            token, from_cookie = cookies[SESSION_COOKIE], True
        guest_key = (
            headers.get("x-guest-key")
            or _param(params, "guestkey", "x-guest-key")
            or cookies.get(GUEST_COOKIE)
        )
        act_as = (
            headers.get("x-act-as")
            or _param(params, "actas", "x-act-as")
            or cookies.get(ACT_AS_COOKIE)
        )
        return Credentials(
            token=token,
            token_from_cookie=from_cookie,
            guest_key=guest_key,
            act_as=act_as,
            malformed_authorization=malformed,
        )

    async def identity(self) -> Identity:
        """Resolved once per HTTP request. A websocket resolves per operation (``fresh``)."""
        if self._identity is None:
            if not self.is_websocket:
                self._identity = await resolve_identity(self.db, self.app.clock, self.credentials())
                return self._identity
            # A socket's unit of work lives as long as the socket: reads left open on it would
            # hold a pooled connection (SQLite's only one) until it closes. An API key's events
            # resolve it here, through the scope gate.
            async with self.reading() as db:
                self._identity = await resolve_identity(db, self.app.clock, self.credentials())
        return self._identity

    async def locale(self) -> str:
        """L3: the locale this request's display fields are written in: the effective
        account's (``domain/locale.py``), en_US for a guest or nobody. Read from the identity
        the request resolved anyway, so it costs no statement of its own over HTTP."""
        try:
            identity = await self.identity()
        except DomainError:
            return DEFAULT_LOCALE
        return reader_locale(identity.account)

    def adopt_account(self, account: Account) -> None:
        """A sign-up or sign-in just succeeded: the rest of this response reads as that account."""
        guest_key = self._identity.guest_key if self._identity else None
        self._identity = Identity(signed_in=account, account=account, guest_key=guest_key)

    def adopt_guest_key(self, guest_key: str) -> None:
        """A visit just minted a guest key: the rest of this request reads as that guest."""
        if self._identity is not None:
            self._identity = dataclasses.replace(self._identity, guest_key=guest_key)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Db]:
        """A mutation's boundary: commit on success (then run after-commit publishes),
        roll back on any error so bad input changes nothing."""
        unit = self.unit
        try:
            yield unit.db
        except BaseException:
            await unit.rollback()
            raise
        try:
            await unit.commit()  # sends any deferred writes first (Db.defer)
        except BaseException:
            await unit.rollback()
            raise

    def set_cookie(self, name: str, value: str, max_age: int) -> None:
        if self.response is None:
            return
        self.response.set_cookie(
            name,
            value,
            max_age=max_age,
            httponly=True,
            samesite="lax",
            secure=self.app.settings.cookie_secure,
            path="/",
        )

    def delete_cookie(self, name: str) -> None:
        if self.response is not None:
            self.response.delete_cookie(name, path="/")


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _param(params: dict[str, Any], *names: str) -> str | None:
    """A connection_init value by any of ``names`` (lower case), in any letter case, at the
    top level or in a ``headers`` object (how some Apollo setups pass them)."""
    nested = params.get("headers")
    for scope in (params, nested if isinstance(nested, dict) else {}):
        for key, value in scope.items():
            if isinstance(key, str) and key.lower() in names and _str(value):
                return _str(value)
    return None


Info: TypeAlias = StrawberryInfo[Context, None]
