"""A message event's wire form: what the broker carries between processes. ``to_json`` is
written out field by field (issue 17), so these pin that it still names every field and
decodes to the same event."""

from __future__ import annotations

import dataclasses
import json
import uuid
from datetime import UTC, datetime

from dealroom.domain.seats import AuthorKind, Seat
from dealroom.services.events import MessageAddedEvent, MessageView, decode


def _view(client_message_id: str | None) -> MessageView:
    return MessageView(
        id=uuid.uuid4(),
        room_id=uuid.uuid4(),
        seat=Seat.VISITOR,
        seq=7,
        author_kind=AuthorKind.PARTICIPANT,
        body='Sponsored post, "two" reels: $8,000',
        session_no=2,
        client_message_id=client_message_id,
        created_at=datetime(2026, 12, 4, 7, 30, 1, 123456, tzinfo=UTC),
    )


def test_a_message_view_is_written_with_every_field_and_read_back_equal() -> None:
    for client_message_id in ("c-1", None):
        view = _view(client_message_id)
        written = view.to_json()
        assert set(written) == {field.name for field in dataclasses.fields(MessageView)}
        assert MessageView.from_json(json.loads(json.dumps(written))) == view


def test_a_message_event_decodes_to_the_event_that_was_encoded() -> None:
    event = MessageAddedEvent(cursor=8, prev=7, message=_view("c-2"))
    payload = event.encode()
    assert json.loads(payload)["message"]["seat"] == Seat.VISITOR.value
    assert decode(payload) == event
