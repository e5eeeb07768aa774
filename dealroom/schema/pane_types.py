"""GraphQL types of a pane as the reader sees it: its messages and pages of them, the
``Pane`` itself, and the events its subscription streams (``PaneEvent``). Never ORM rows:
each is built from a view (``from_*``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

import strawberry

from dealroom.domain.cursors import event_cursor
from dealroom.domain.durable import system_line_kind
from dealroom.domain.seats import Seat, message_alignment
from dealroom.resolvers import room_fields
from dealroom.schema.context import Info
from dealroom.schema.enums import Alignment, AuthorKind, SystemLineKind
from dealroom.schema.link_types import MessageLink
from dealroom.schema.offer_types import StageChanged
from dealroom.schema.paging import PageInfo
from dealroom.services.live.events import MessageView


@strawberry.type(description="A message in a pane, projected for the reader.")
class Message:
    id: strawberry.ID = strawberry.field(description="The message id.")
    cursor: str = strawberry.field(description="Position in the room's event sequence.")
    body: str = strawberry.field(description="The text.")
    author_kind: AuthorKind = strawberry.field(
        description="Participant, agent, system, or an operator in the agent's seat (OPERATOR "
        "is shown to operators only: anyone else reads an operator's line as AGENT)."
    )
    seat: Seat = strawberry.field(description="The pane the message is in.")
    alignment: Alignment = strawberry.field(description="Left or right for this reader.")
    session_no: int = strawberry.field(description="The conversation session it belongs to.")
    client_message_id: str | None = strawberry.field(
        description="The client's idempotency key, for participant messages."
    )
    created_at: datetime = strawberry.field(description="When it was stored (UTC).")
    room_id: strawberry.ID = strawberry.field(description="The room it belongs to.")
    system_kind: SystemLineKind | None = strawberry.field(
        description="For a system line, what it is about (NOTICE, MEMORY_MERGED, "
        "TURN_RETRYING, TURN_FAILED); else null."
    )
    _own: strawberry.Private[bool] = False
    """The reader is the pane's own participant (or an operator reading the pane)."""

    @strawberry.field(
        description="The links in this message and what the pane's agent could read of each "
        "(never the page's text). Shown only to the pane's own participant: empty for anyone "
        "else reading the pane, and for a message without links."
    )
    async def links(self, info: Info) -> list[MessageLink]:
        if not self._own or self.author_kind is not AuthorKind.PARTICIPANT:
            return []
        rows = await room_fields.message_links(info, uuid.UUID(str(self.id)))
        return [MessageLink.from_row(row) for row in rows]

    @classmethod
    def from_view(
        cls, view: MessageView, reader_seat: Seat, *, operator_shown: bool = False
    ) -> Message:
        """``operator_shown``: the reader is an operator. Anyone else reads an operator's line
        as the agent's, so the people in the room are not told a human is typing unless the
        operator says so."""
        author_kind = view.author_kind
        if author_kind is AuthorKind.OPERATOR and not operator_shown:
            author_kind = AuthorKind.AGENT
        return cls(
            id=strawberry.ID(str(view.id)),
            cursor=event_cursor(view.seq),
            body=view.body,
            author_kind=author_kind,
            seat=view.seat,
            alignment=message_alignment(reader_seat, view.seat, author_kind),
            session_no=view.session_no,
            client_message_id=view.client_message_id,
            created_at=view.created_at,
            room_id=strawberry.ID(str(view.room_id)),
            system_kind=system_line_kind(view.client_message_id)
            if view.author_kind is AuthorKind.SYSTEM
            else None,
            _own=reader_seat == view.seat,
        )


@strawberry.type(description="An edge in a message connection.")
class MessageEdge:
    cursor: str = strawberry.field(description="The message's cursor.")
    node: Message = strawberry.field(description="The message.")


@strawberry.type(description="A page of a pane's messages, oldest first.")
class MessageConnection:
    edges: list[MessageEdge] = strawberry.field(description="The messages, oldest first.")
    page_info: PageInfo = strawberry.field(description="Paging state.")


@strawberry.type(description="One participant's side of a room: its conversation with its agent.")
class Pane:
    seat: Seat = strawberry.field(description="The side of the participant whose pane this is.")
    key: str = strawberry.field(description="The key of the participant whose pane this is.")
    participant_id: strawberry.ID = strawberry.field(
        description="The participant whose pane this is (paneEvents(participantId:))."
    )
    relationship_label: str = strawberry.field(
        description="Who talks with whom here, from the reader's side."
    )
    _participant_id: strawberry.Private[uuid.UUID]
    _reader_seat: strawberry.Private[Seat]

    @strawberry.field(
        description="Messages. first/after page forward; last/before page backward "
        "(the newest `last` before `before`). At most 100 per page."
    )
    async def messages(
        self,
        info: Info,
        first: Annotated[int | None, strawberry.argument(description="Page forward.")] = None,
        after: Annotated[str | None, strawberry.argument(description="Start after.")] = None,
        last: Annotated[int | None, strawberry.argument(description="Page backward.")] = None,
        before: Annotated[str | None, strawberry.argument(description="End before.")] = None,
    ) -> MessageConnection:
        page = await room_fields.pane_messages(
            info, self._participant_id, self.key, first, after, last, before
        )
        edges = [
            MessageEdge(cursor=event_cursor(m.seq), node=Message.from_view(m, self._reader_seat))
            for m in page.messages
        ]
        return MessageConnection(
            edges=edges,
            page_info=PageInfo(
                has_next_page=page.has_next,
                has_previous_page=page.has_previous,
                start_cursor=edges[0].cursor if edges else None,
                end_cursor=edges[-1].cursor if edges else None,
            ),
        )


@strawberry.type(description="A message was stored in the pane.")
class MessageAdded:
    cursor: str = strawberry.field(description="Resume after this cursor to continue from here.")
    message: Message = strawberry.field(description="The message.")


@strawberry.type(description="A streamed fragment of an agent's reply (not stored).")
class MessageDelta:
    cursor: str = strawberry.field(description="The cursor of the last stored event before it.")
    message_id: strawberry.ID = strawberry.field(description="The reply being composed.")
    delta: str = strawberry.field(description="Text to append.")


@strawberry.type(
    description="An agent started composing a reply in the pane; deltas with the same "
    "messageId follow, then MessageAdded with the stored message."
)
class AgentTyping:
    cursor: str = strawberry.field(description="The cursor of the last stored event before it.")
    message_id: strawberry.ID = strawberry.field(description="The reply being composed.")
    agent: str = strawberry.field(description="Which agent is composing (persona).")


@strawberry.type(description="A system line in the pane (a merge, a failed turn being retried).")
class SystemLine:
    cursor: str = strawberry.field(description="Resume after this cursor.")
    message: Message = strawberry.field(description="The system message.")

    @strawberry.field(description="What the line is about, so clients can style it.")
    def kind(self) -> SystemLineKind:
        return self.message.system_kind or SystemLineKind.NOTICE


@strawberry.type(
    description="The visitor view's loginRequired flag changed: the login gate went up (a "
    "held effect, the guest message cap) or a claim took it down. Not stored: a client that "
    "reconnects reads Room.loginRequired."
)
class LoginRequiredChanged:
    cursor: str = strawberry.field(
        description="The cursor of the last stored event before it (not an event of its own)."
    )
    login_required: bool = strawberry.field(description="The new value.")


PaneEvent = Annotated[
    MessageAdded | AgentTyping | MessageDelta | SystemLine | StageChanged | LoginRequiredChanged,
    strawberry.union("PaneEvent", description="Something that happened in a pane."),
]
