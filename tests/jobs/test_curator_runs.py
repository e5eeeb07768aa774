"""Whose account the curator window promotes from a room: the host and the visitor side, never
a host's teammate (its pane reads the host's memory; its own account must not learn from it)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from dealroom.domain.seats import RoomMode
from dealroom.jobs.arvist import curator_runs
from dealroom.persistence.models import Participant


def test_a_hosts_teammate_gets_no_curator_run() -> None:
    room_id = uuid.uuid4()
    seated = {
        key: Participant(id=uuid.uuid4(), room_id=room_id, key=key, account_id=uuid.uuid4())
        for key in ("host", "host_2", "visitor", "visitor_2")
    }
    runs = curator_runs(room_id, RoomMode.LIVE, list(seated.values()), datetime.now(UTC))
    curated = {p.key for p in seated.values() if p.id in {r.participant_id for r in runs}}
    assert curated == {"host", "visitor", "visitor_2"}
