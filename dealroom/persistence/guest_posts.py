"""How many messages a guest has posted, for the guest message cap: its key's own
posts across its rooms, and, so that a fresh key does not start at zero, the posts made in
the last :data:`IP_WINDOW` by every unclaimed key minted from the same client address.

Only keys whose mint was recorded with the key (``guest_key_mints.guest_key_hash``) have an
address; a key from before that (or minted with the allowance off) is counted on its own.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    bindparam,
    func,
    select,
    union_all,
)
from sqlalchemy.orm import aliased

from dealroom.domain.seats import AuthorKind, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import GuestKeyMint, Message, Participant

IP_WINDOW = timedelta(hours=24)
"""How far back one address's other keys count: a day, so a shared address (an office, a
carrier's NAT) is not held to one guest's allowance for ever."""


_BY_KEY, _BY_IP = aliased(GuestKeyMint), aliased(GuestKeyMint)
_AUTHOR = aliased(Participant)


def _charged() -> tuple[Select[uuid.UUID], Select[uuid.UUID]]:
    """The messages charged to the guest key of the enclosing query's ``participants`` row,
    as two selects that do not overlap: the key's own posts, and its address's other keys'
    posts since ``since`` (a bind).

    Two selects, not one ``OR``: PostgreSQL cannot drive an ``OR`` of the two through
    the indexes, so it would read every guest's message in the database for each guest post,
    a cost growing with the table. Each half starts from the key's own index entries:
    participants by key, messages by participant."""
    key_hash = Participant.guest_key_hash
    # Correlated by name: SQLAlchemy correlates a subquery only to the select right around
    # it, and these sit two and three deeper, so the outer ``participants`` would otherwise
    # join in (a room list's count read the addresses of every participant in the database).
    address = (
        select(_BY_KEY.ip_hash).where(_BY_KEY.guest_key_hash == key_hash).correlate(Participant)
    )
    siblings = select(_BY_IP.guest_key_hash).where(_BY_IP.ip_hash.in_(address))
    posts = (  # every unclaimed guest's own lines
        select(Message.id)
        .join(_AUTHOR, _AUTHOR.id == Message.participant_id)
        .where(_AUTHOR.account_id.is_(None), Message.author_kind == AuthorKind.PARTICIPANT.value)
    )
    since = bindparam("since", type_=Message.created_at.type)
    return (
        posts.where(_AUTHOR.guest_key_hash == key_hash).correlate(Participant),
        posts.where(
            _AUTHOR.guest_key_hash.in_(siblings),
            _AUTHOR.guest_key_hash != key_hash,
            Message.created_at >= since,
        ).correlate(Participant),
    )


@functools.cache
def charged_up_to_cap() -> ColumnElement[int]:
    """The posts charged to the guest key of the enclosing query's ``participants`` row (its
    own, and its address's other unclaimed keys' since ``since``), counted up to ``cap``: a
    scalar subquery read with the row, by a post (``RoomRepository.for_writer``) and by the
    room list (:func:`guest_capped_rooms`). Binds ``since`` and ``cap``.

    Built once: on the hot path (every guest post) building it costs more CPU than running
    it. Counted no further than the cap: the cap compares the count with it and nothing else
    reads it, and an unbounded count would read every post an address's keys made in the
    window, for every guest post, so a shared address (an office, a carrier's NAT) would make
    each post dearer than the last."""
    charged = union_all(*_charged()).limit(bindparam("cap", type_=Integer())).subquery()
    return select(func.count()).select_from(charged).scalar_subquery()


async def guest_capped_rooms(
    db: Db, room_ids: Sequence[uuid.UUID], cap: int, now: datetime
) -> set[uuid.UUID]:
    """Rooms whose visitor is an unclaimed guest charged ``cap`` posts or more: the guest
    message cap rides on the login gate. Each guest's posts are counted no further than the
    cap (``charged_up_to_cap``)."""
    rows = await db.scalars(
        select(Participant.room_id).where(
            Participant.room_id.in_(room_ids),
            Participant.key == Seat.VISITOR.value,
            Participant.account_id.is_(None),
            Participant.guest_key_hash.is_not(None),
            charged_up_to_cap() >= bindparam("cap", type_=Integer()),
        ),
        {"cap": cap, "since": now - IP_WINDOW},
    )
    return set(rows)
