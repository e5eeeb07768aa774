"""Held subscriptions re-checked together: a stream loses what its standing no longer allows, at a
cost that does not grow with the subscriptions held.

Every guarded stream (``resolvers/live.Guarded``) holds a ``Watch`` keyed by what it stands
on: its credentials as presented (hashed) and what it reads (a room, a pane). Streams with
equal keys share one watch. Once per ``subscription_recheck_seconds`` the registry re-reads,
for every watch in the process at once, what could take a stream away: the sessions' liveness,
the API keys, the act-as edges and the rooms' seat bindings, each one statement per chunk of
500 (``persistence/standing.py``), so a round's cost does not grow with the subscriptions held.
A watch whose standing is unchanged and still reaches its stream costs nothing more. Otherwise
its future is resolved and every stream on it acts: ``SESSION_ENDED`` closes the socket (4401);
``CHANGED`` re-runs the stream's own authorisation once, which ends it with the right coded
error or lets it go on (a claim takes the seat from the guest key, R7: a stream the old key holds
ends NOT_FOUND, its socket stays open, since a guest key is no session).

A signOut or an API key's revocation does not wait for the round: the broker tells every
process (``services/live/endings.py``) and ``end`` wakes the watches on that credential with
``SESSION_ENDED`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import uuid
from dataclasses import dataclass
from typing import TypeAlias

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.domain import access
from dealroom.domain.scopes import API_KEY_PREFIX, key_may_call
from dealroom.persistence.standing import KeyStanding, RoomSeats, StandingRepository
from dealroom.realtime.broker import RESYNC, Broker, Subscription
from dealroom.services.accounts.identity import Credentials, digest
from dealroom.services.clock import Clock
from dealroom.services.live.endings import ENDED_CHANNEL
from dealroom.services.live.periodic import Periodic
from dealroom.services.unit_of_work import reading

log = structlog.get_logger(__name__)


class Outcome(enum.Enum):
    SESSION_ENDED = "session_ended"
    """The session token (or API key) presented is no longer live: close the socket, 4401."""
    CHANGED = "changed"
    """The credentials stand but what they reach changed: re-run the stream's authorisation."""


@dataclass(frozen=True, slots=True)
class Held:
    """What a guarded stream stands on. Only the parts that can change after the stream's
    first authorisation are re-read; the rest (a malformed header, a guest key's format, an
    API key with act-as) was refused then and cannot change."""

    token_hash: str | None
    key_hash: str | None
    guest_key_hash: str | None
    act_as: uuid.UUID | None
    field: str
    room_id: uuid.UUID
    pane: str | None
    """The pane (participant key) a ``paneEvents`` stream reads; None for a room-wide stream
    (``offerStage``)."""

    @classmethod
    def of(
        cls, presented: Credentials, *, field: str, room_id: uuid.UUID, pane: str | None
    ) -> Held:
        token = presented.token
        by_key = token is not None and token.startswith(API_KEY_PREFIX)
        act_as: uuid.UUID | None = None
        if presented.act_as:
            with contextlib.suppress(ValueError):  # refused by the first authorisation
                act_as = uuid.UUID(presented.act_as)
        return cls(
            token_hash=digest(token) if token and not by_key else None,
            key_hash=digest(token) if token and by_key else None,
            guest_key_hash=digest(presented.guest_key) if presented.guest_key else None,
            act_as=act_as,
            field=field,
            room_id=room_id,
            pane=pane,
        )


JUDGED_AT_ONCE = 250
"""Watches judged between two turns of the event loop: a process holding 2,500 streams judged them
all in one block of about 20 ms every round, and every request and delivery of the process waited
meanwhile."""

Standing: TypeAlias = tuple[
    uuid.UUID | None, frozenset[str] | None, frozenset[str], uuid.UUID | None
]
"""The effective account, an API key's scopes, the seats held in the room, the pane's id."""


class Watch:
    """Every stream holding one ``Held``: one future wakes them all."""

    __slots__ = ("held", "members", "seen", "woken")

    def __init__(self, held: Held, woken: asyncio.Future[Outcome]) -> None:
        self.held = held
        self.members = 0
        self.seen: Standing | None = None
        self.woken = woken


@dataclass(frozen=True, slots=True)
class _Round:
    """What one round read, for every watch."""

    sessions: dict[str, uuid.UUID]
    keys: dict[str, KeyStanding]
    edges: set[tuple[uuid.UUID, uuid.UUID]]
    rooms: dict[uuid.UUID, RoomSeats]


class Rechecks:
    """The process's registry of held streams, run by the app's lifespan."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        clock: Clock,
        every: float,
        broker: Broker | None = None,
    ) -> None:
        """With ``broker``, credentials ended in any process end their streams here at once."""
        self._sessionmaker = sessionmaker
        self._clock = clock
        self._broker = broker
        self._watches: dict[Held, Watch] = {}
        # The next round retries; meanwhile streams go on, as they would have between two
        # rounds (their events come from the same database).
        self._loop = Periodic(every, self.round, "subscription_recheck_failed")
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()

    def start(self) -> None:
        self._loop.start()
        if self._broker is not None:
            self._listener = asyncio.create_task(self._listen(self._broker))

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        await self._loop.close()

    async def listening(self) -> None:
        """Until the broker lists this process for ended credentials (tests)."""
        await self._listening.wait()

    def end(self, credential_hash: str) -> int:
        """Wake every watch standing on the session token or API key with this hash, as
        ``SESSION_ENDED`` (their sockets close 4401); returns how many."""
        ended = [
            (held, watch)
            for held, watch in self._watches.items()
            if credential_hash in (held.token_hash, held.key_hash)
        ]
        for held, watch in ended:
            del self._watches[held]
            watch.woken.set_result(Outcome.SESSION_ENDED)
        return len(ended)

    async def _listen(self, broker: Broker) -> None:
        """Ended credentials from every process, for the app's life. A RESYNC (an ending
        whose publish was lost) runs a round now; the broker unreachable, it retries, and the
        periodic rounds end the streams meanwhile."""
        while True:
            subscription = Subscription((ENDED_CHANNEL,))
            subscription.idle_resync = None
            try:
                await broker.join(subscription)
                self._listening.set()
                try:
                    while True:
                        payload = await subscription.get()
                        if payload == RESYNC:
                            try:
                                await self.round()
                            except Exception:  # the periodic round retries
                                log.warning("credential_endings_round_failed", exc_info=True)
                        else:
                            self.end(payload)
                finally:
                    self._listening.clear()
                    await broker.leave(subscription)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("credential_endings_listener_failed")
                await asyncio.sleep(1.0)

    def hold(self, held: Held) -> Watch:
        watch = self._watches.get(held)
        if watch is None:
            watch = Watch(held, asyncio.get_running_loop().create_future())
            self._watches[held] = watch
        watch.members += 1
        return watch

    def release(self, watch: Watch) -> None:
        watch.members -= 1
        if watch.members <= 0 and self._watches.get(watch.held) is watch:
            del self._watches[watch.held]

    async def round(self) -> None:
        """Re-read every watch's standing in one short unit of work; wake those it changed."""
        watches = list(self._watches.values())
        if not watches:
            return
        read = await self._read([watch.held for watch in watches])
        for index, watch in enumerate(watches):
            if index and not index % JUDGED_AT_ONCE:
                await asyncio.sleep(0)  # deliveries and requests go on between slices
            outcome = self._judge(watch, read)
            if outcome is not None and self._watches.get(watch.held) is watch:
                # Later streams with this key start a fresh watch, judged from the next round.
                del self._watches[watch.held]
                watch.woken.set_result(outcome)

    async def _read(self, helds: list[Held]) -> _Round:
        token_hashes = {h.token_hash for h in helds if h.token_hash is not None}
        key_hashes = {h.key_hash for h in helds if h.key_hash is not None}
        async with reading(self._sessionmaker) as db:
            repo = StandingRepository(db)
            sessions = await repo.live_sessions(token_hashes, self._clock.now())
            keys = await repo.live_keys(key_hashes) if key_hashes else {}
            managers = {
                sessions[h.token_hash]
                for h in helds
                if h.act_as is not None and h.token_hash in sessions
            }
            edges = await repo.manager_edges(managers) if managers else set()
            # a set, not sorted: UUIDs compare in Python, 2,500 of them ~10 ms a round
            rooms = await repo.room_seats(list({h.room_id for h in helds}))
        return _Round(sessions, keys, edges, rooms)

    @staticmethod
    def _judge(watch: Watch, read: _Round) -> Outcome | None:
        """None when the watch's streams still stand as they stood; what to do otherwise.
        The same decisions as ``identity.resolve_identity`` and ``rooms.room_for_reader``,
        over the round's reads; a watch that no longer seems to reach its stream is CHANGED,
        so the stream's own authorisation has the last word."""
        held = watch.held
        account: uuid.UUID | None = None
        scopes: frozenset[str] | None = None
        if held.token_hash is not None:
            account = read.sessions.get(held.token_hash)
            if account is None:
                return Outcome.SESSION_ENDED  # a stale cookie too, as the socket's session
        if held.key_hash is not None:
            key = read.keys.get(held.key_hash)
            if key is None:
                return Outcome.SESSION_ENDED
            account, scopes = key.account_id, key.scopes
            if key_may_call(held.field, scopes) is not None:  # K1
                return Outcome.CHANGED
        if held.act_as is not None and held.act_as != account:
            if account is None or (account, held.act_as) not in read.edges:
                return Outcome.CHANGED
            account = held.act_as
        viewer = access.Viewer(account_id=account, guest_key_hash=held.guest_key_hash)
        room = read.rooms.get(held.room_id)
        keys = access.keys_of(viewer, room.holders) if room is not None else frozenset()
        readable = access.readable_keys(keys, room.holders) if room is not None else frozenset()
        pane_id = None
        if room is not None and held.pane is not None:
            pane_id = next((pid for key, pid in room.panes if key == held.pane), None)
        if not access.reaches(readable, keys, held.pane) or (
            held.pane is not None and pane_id is None
        ):
            return Outcome.CHANGED
        standing: Standing = (account, scopes, keys, pane_id)
        if watch.seen is not None and watch.seen != standing:
            return Outcome.CHANGED
        watch.seen = standing
        return None
