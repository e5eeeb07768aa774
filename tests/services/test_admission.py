"""Admission of subscription start-ups (services/live/admission.py): the bound, the bounded wait,
the coded refusal, and the slot given back once the stream has started."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.services.live.admission import Admission, slots_for


def test_the_bound_is_sized_from_the_pool(engine: AsyncEngine) -> None:
    # SQLite: one connection, one start-up ready for it; PostgreSQL: a third of the pool's 6.
    assert slots_for(engine, None) == 2


def test_a_configured_bound_wins(engine: AsyncEngine) -> None:
    assert slots_for(engine, 7) == 7


async def test_a_start_up_past_the_wait_is_refused_unavailable_with_a_retry_hint() -> None:
    admission = Admission(slots=1, wait_seconds=0.05)
    async with admission.start_up():
        with pytest.raises(DomainError) as refused:
            async with admission.start_up():
                pass
    assert refused.value.code is ErrorCode.UNAVAILABLE
    assert refused.value.details["retryAfterSeconds"] in (1, 2)


async def test_a_started_stream_gives_its_slot_back_while_it_stays_open() -> None:
    admission = Admission(slots=1, wait_seconds=0.05)
    async with admission.start_up() as started:
        started()
        async with admission.start_up():  # live delivery holds no slot
            pass
        started()  # giving it back twice frees nothing extra
        async with admission.start_up():
            with pytest.raises(DomainError):
                async with admission.start_up():
                    pass


async def test_waiting_start_ups_are_admitted_in_turn() -> None:
    admission = Admission(slots=1, wait_seconds=5)
    order: list[int] = []

    async def start(n: int) -> None:
        async with admission.start_up():
            order.append(n)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(start(n) for n in range(5)))
    assert order == [0, 1, 2, 3, 4]


async def _pool_times_out(admission: Admission, *, live: bool) -> None:
    async with admission.start_up() as started:
        if live:
            started()
        raise PoolTimeout("QueuePool limit of size 1 overflow 0 reached")


async def test_a_pool_timeout_during_start_up_is_unavailable_not_internal() -> None:
    admission = Admission(slots=1, wait_seconds=0.05)
    with pytest.raises(DomainError) as refused:
        await _pool_times_out(admission, live=False)
    assert refused.value.code is ErrorCode.UNAVAILABLE
    async with admission.start_up():  # the slot was given back
        pass


async def test_a_pool_timeout_once_live_is_left_alone() -> None:
    admission = Admission(slots=1, wait_seconds=0.05)
    with pytest.raises(PoolTimeout):
        await _pool_times_out(admission, live=True)
