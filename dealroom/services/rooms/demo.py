"""The seeded demo: a host whose agent was taught its rates and a floor in its home room.

The teaching is a real turn: the rules are posted into the home room as the host, and the
agent runs (persona and Distil, on the configured engine — the offline one without a key)
record them in the host's branch, exactly as when a person types them. Seeding is idempotent:
an existing demo host is reused, and a teaching turn left queued by an interrupted seed runs.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

from dealroom.domain.limits import Limit, limits_of
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account
from dealroom.persistence.repositories import AccountRepository, RoomRepository
from dealroom.realtime import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.accounts.passwords import Passwords
from dealroom.services.accounts.service import sign_up
from dealroom.services.clock import Clock
from dealroom.services.rooms.messages import PostLimits, post_message
from dealroom.services.turns.runs import Runner

HANDLE = "maya"
NAME = "Maya Lin"
EMAIL = "maya@demo.dealroom.test"
PASSWORD = "dealroom-demo"
RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000, "
    "and I never work with alcohol brands. "
    "You can share my rate card: a sponsored post from $8,000 USD. "
    "You can tell visitors I do sponsored posts, reels and stories, "
    "and I book about two weeks ahead."
)
"""The demo host's teaching: a private floor and exclusion, and a public rate card and
deliverables the visitor's agent answers from before any sign-in."""
RULES_KEY = "demo-rules"


@dataclass(frozen=True, slots=True)
class DemoHost:
    handle: str
    email: str
    password: str
    created: bool
    limits: dict[str, Limit]
    asks: dict[str, str]

    @property
    def link(self) -> str:
        return f"/z/{self.handle}"


async def seed_demo(
    db: Db,
    broker: Broker,
    clock: Clock,
    runner: Runner,
    *,
    passwords: Passwords,
    posts_per_minute: int,
) -> DemoHost:
    """Create the demo host and teach its agent (or reuse it); run the teaching turn to the
    end and read back what the agent recorded."""
    accounts = AccountRepository(db)
    account = await accounts.by_handle(HANDLE)
    created = account is None
    if account is None:
        signed = await sign_up(
            db,
            clock,
            passwords,
            email=EMAIL,
            password=PASSWORD,
            handle=HANDLE,
            display_name=NAME,
            ttl_days=1,
        )
        account = signed.account
        home = await _home(db, account)
        await post_message(
            db,
            broker,
            clock,
            Identity(signed_in=account, account=account, guest_key=None),
            room_id=home,
            body=RULES,
            client_message_id=RULES_KEY,
            seat=None,
            limits=PostLimits(per_minute=posts_per_minute),
        )
        await db.commit()
    await db.close()
    # The teaching turn (and whatever else is due): persona, then Distil into the host branch.
    await _finish_runs(runner)
    memory = await _home_memory(db, account)
    limits = limits_of(memory)
    if not limits:
        raise RuntimeError(
            "the demo host's agent did not record a floor from its home room; "
            "see the agent_runs table for the failed turn"
        )
    return DemoHost(
        handle=HANDLE,
        email=EMAIL,
        password=PASSWORD,
        created=created,
        limits=limits,
        asks=_asks(memory),
    )


async def _finish_runs(runner: Runner, timeout: float = 120.0) -> None:
    """Run every due run here, and wait for runs that workers of a running server (this
    process's or another's) have claimed, until none is running or due."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        while await runner.run_once():
            pass
        try:
            await runner.wait_idle(timeout=0.5)
            return
        except TimeoutError:
            continue  # a worker elsewhere holds a run, or the next one just became due


async def demo_host_exists(db: Db) -> bool:
    try:
        return await AccountRepository(db).by_handle(HANDLE) is not None
    finally:
        await db.close()


async def database_is_empty(db: Db) -> bool:
    """No account at all: a fresh database, where `serve` seeds the demo."""
    try:
        return not await AccountRepository(db).any_exist()
    finally:
        await db.close()


async def _home(db: Db, account: Account) -> uuid.UUID:
    room = await RoomRepository(db).home_room(account.id)
    if room is None:
        raise RuntimeError("the demo host has no home room")
    return room.id


async def _home_memory(db: Db, account: Account) -> dict[str, Any]:
    try:
        room = await RoomRepository(db).home_room(account.id)
        return dict(room.memory) if room is not None else {}
    finally:
        await db.close()


def _asks(memory: dict[str, Any]) -> dict[str, str]:
    rates = memory.get("host", {}).get("rates", {})
    if not isinstance(rates, dict):
        return {}
    return {
        str(slug): str(rate["ask"])
        for slug, rate in rates.items()
        if isinstance(rate, dict) and "ask" in rate
    }
