"""GraphQL types of perceived links (``domain/links.py``): what became of a link pasted in a
message, shown to the pane's own participant on its messages and to operators on the room. The
page's extracted text is never among them: only the pane's agents read it, as quoted
material."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dealroom.domain.links import PLAIN_WORDS, LinkStatus, Reader, Reason
from dealroom.persistence import models

strawberry.enum(
    LinkStatus,
    name="LinkStatus",
    description="READ: the agent read the page. UNREADABLE: it could not (see the reason).",
)
strawberry.enum(
    Reason,
    name="LinkUnreadableReason",
    description="Why a link could not be read: it needs a login, was not found, is too large, "
    "is not a page, points somewhere not allowed, did not answer properly, or had no text.",
)
strawberry.enum(
    Reader,
    name="LinkReader",
    description="What read a link: Gemini's URL context, the guarded fetch, or the room's "
    "recent read of the same URL.",
)


@strawberry.type(description="A link in a message, as the pane's agent perceived it.")
class MessageLink:
    url: str = strawberry.field(description="The link as written in the message.")
    final_url: str | None = strawberry.field(
        description="Where it led after redirects; null when it was not reached."
    )
    status: LinkStatus = strawberry.field(description="Whether the agent could read it.")
    reason: Reason | None = strawberry.field(description="Why it was unreadable; else null.")
    reason_text: str | None = strawberry.field(
        description="That reason in plain words, as the agent says it; else null."
    )
    title: str | None = strawberry.field(description="The page's title, when read.")
    fetched_at: datetime = strawberry.field(description="When it was read (UTC).")

    @classmethod
    def from_row(cls, row: models.PerceivedLink) -> MessageLink:
        reason = Reason(row.reason) if row.reason else None
        return cls(
            url=row.url,
            final_url=row.final_url,
            status=LinkStatus(row.status),
            reason=reason,
            reason_text=PLAIN_WORDS[reason] if reason is not None else None,
            title=row.title,
            fetched_at=row.fetched_at,
        )


@strawberry.type(description="A link pasted in a pane of the room, as operators see it.")
class OpsLink:
    seat: str = strawberry.field(description="The pane it was pasted in.")
    message_id: strawberry.ID = strawberry.field(description="The message that held it.")
    url: str = strawberry.field(description="The link as written.")
    final_url: str | None = strawberry.field(description="Where it led after redirects.")
    status: LinkStatus = strawberry.field(description="Whether the agent could read it.")
    reason: Reason | None = strawberry.field(description="Why it was unreadable; else null.")
    detail: str | None = strawberry.field(
        description="The technical cause of an unreadable link (HTTP 403, loopback address)."
    )
    title: str | None = strawberry.field(description="The page's title, when read.")
    content_type: str | None = strawberry.field(description="The page's content type.")
    reader: Reader = strawberry.field(description="What read it.")
    fetched_at: datetime = strawberry.field(description="When it was read (UTC).")

    @classmethod
    def from_row(cls, row: models.PerceivedLink, seat: str) -> OpsLink:
        return cls(
            seat=seat,
            message_id=strawberry.ID(str(row.message_id)),
            url=row.url,
            final_url=row.final_url,
            status=LinkStatus(row.status),
            reason=Reason(row.reason) if row.reason else None,
            detail=row.detail,
            title=row.title,
            content_type=row.content_type,
            reader=Reader(row.reader),
            fetched_at=row.fetched_at,
        )
