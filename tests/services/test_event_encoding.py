"""A message event's wire form: what the broker carries between processes. ``to_json`` is written
out field by field, so these pin that it still names every field and decodes to the same event; and
a payload handed to many subscribers is decoded once."""

from __future__ import annotations

import dataclasses
import json
import uuid
from datetime import UTC, datetime

from dealroom.domain.seats import AuthorKind, Seat
from dealroom.services.live.events import (
    DECODED_KEPT,
    MessageAddedEvent,
    MessageView,
    decode,
    decode_shared,
)


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


def test_one_payload_handed_to_many_subscribers_is_decoded_once() -> None:
    payload = MessageAddedEvent(cursor=9, prev=8, message=_view("c-3")).encode()
    first = decode_shared(payload)
    assert first is not None
    assert decode_shared(payload) is first  # the same object: not parsed again
    # Another string with the same text is another payload (keyed by identity).
    twin = "".join(list(payload))
    assert twin is not payload
    again = decode_shared(twin)
    assert again == first
    assert again is not first


def test_the_decoded_payloads_kept_are_bounded() -> None:
    payload = MessageAddedEvent(cursor=10, prev=9, message=_view(None)).encode()
    first = decode_shared(payload)
    others = [
        MessageAddedEvent(cursor=11 + n, prev=10 + n, message=_view(None)).encode()
        for n in range(DECODED_KEPT)
    ]
    for other in others:
        decode_shared(other)
    again = decode_shared(payload)
    assert again == first
    assert again is not first  # evicted, so parsed anew
