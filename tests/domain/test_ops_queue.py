"""The ops queue's rules (``domain/ops_queue.py`` Q2-Q5), pure."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from dealroom.domain import ops_queue as q
from dealroom.domain.errors import DomainError, ErrorCode

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
JANE = uuid.uuid4()
RAJ = uuid.uuid4()


def test_q2_levels() -> None:
    assert [q.flag_level(x) for x in ("high", "medium", "low", "firewall")] == [
        q.Level.HIGH,
        q.Level.MEDIUM,
        q.Level.LOW,
        q.Level.MEDIUM,
    ]
    assert q.verdict_level("unrepaired") is q.Level.HIGH
    assert q.verdict_level("repaired") is q.Level.LOW
    assert q.payment_level("disputed") is q.Level.HIGH
    assert q.RANK[q.Level.HIGH] < q.RANK[q.Level.MEDIUM] < q.RANK[q.Level.LOW]


def test_q3_acknowledging_twice_keeps_the_first() -> None:
    once = q.acknowledge(q.ItemState(), JANE, NOW)
    assert q.acknowledge(once, RAJ, NOW + timedelta(minutes=5)) == once


def test_q4_only_an_operator_is_assigned() -> None:
    with pytest.raises(DomainError) as refused:
        q.assign(q.ItemState(), RAJ, is_operator=False)
    assert refused.value.code is ErrorCode.BAD_USER_INPUT
    assert q.assign(q.ItemState(), RAJ, is_operator=True).assigned_to == RAJ


def test_q5_a_resolved_item_is_not_acted_on_again() -> None:
    resolved = q.resolve(q.ItemState(), JANE, " Called them. ", NOW)
    assert (resolved.note, resolved.acknowledged_by) == ("Called them.", JANE)
    acts: list[Callable[[], q.ItemState]] = [
        lambda: q.resolve(resolved, JANE, "again", NOW),
        lambda: q.acknowledge(resolved, JANE, NOW),
        lambda: q.assign(resolved, RAJ, is_operator=True),
    ]
    for act in acts:
        with pytest.raises(DomainError) as refused:
            act()
        assert refused.value.code is ErrorCode.CONFLICT
    with pytest.raises(DomainError):
        q.resolve(q.ItemState(), JANE, "   ", NOW)


def test_item_ids_and_cursors_round_trip_and_refuse_forgeries() -> None:
    source = uuid.uuid4()
    assert q.parse_item_key(q.item_key(q.ItemKind.FLAG, source)) == (q.ItemKind.FLAG, source)
    cursor = q.queue_cursor(1, NOW, "flag", source)
    assert q.parse_queue_cursor(cursor) == (1, NOW, "flag", source)
    for bad in ("nonsense", "flag:", "rooms:" + str(source)):
        with pytest.raises(DomainError):
            q.parse_item_key(bad)
    with pytest.raises(DomainError):
        q.parse_queue_cursor("bm90LWEtY3Vyc29y")
