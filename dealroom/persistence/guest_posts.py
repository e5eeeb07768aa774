"""How many messages a guest has posted, for the guest message cap (issue 11): its key's own
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
    BindParameter,
    ColumnElement,
    Integer,
    Select,
    bindparam,
    func,
    select,
    union_all,
)
from sqlalchemy.orm import InstrumentedAttribute, aliased

from dealroom.domain.seats import AuthorKind, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import GuestKeyMint, Message, Participant

IP_WINDOW = timedelta(hours=24)
"""How far back one address's other keys count: a day, so a shared address (an office, a
carrier's NAT) is not held to one guest's allowance for ever."""


_BY_KEY, _BY_IP = aliased(GuestKeyMint), aliased(GuestKeyMint)
_AUTHOR = aliased(Participant)


def _charged(
    key_hash: InstrumentedAttribute[str | None] | BindParameter[str] | str,
    since: BindParameter[datetime] | datetime,
) -> tuple[Select[uuid.UUID], Select[uuid.UUID]]:
    """The messages charged to ``key_hash``, as two selects that do not overlap: the key's
    own posts, and its address's other keys' posts within the window.

    Two selects, not one ``OR``: PostgreSQL cannot drive an ``OR`` of the two through
    the indexes, so it read every guest's message in the database for each guest post
    (issue 17, ``pg_stat_statements``: 4.5 ms a post at 45,000 messages, growing with the
    table). Each half starts from the key's own index entries: participants by key,
    messages by participant."""
    # Correlated by name: SQLAlchemy correlates a subquery only to the select right around
    # it, and this one sits two deeper, so a room list's count (``key_hash`` a column of the
    # outer ``participants``) read the addresses of every participant in the database.
    address = (
        select(_BY_KEY.ip_hash).where(_BY_KEY.guest_key_hash == key_hash).correlate(Participant)
    )
    siblings = select(_BY_IP.guest_key_hash).where(_BY_IP.ip_hash.in_(address))
    posts = (  # every unclaimed guest's own lines
        select(Message.id)
        .join(_AUTHOR, _AUTHOR.id == Message.participant_id)
        .where(_AUTHOR.account_id.is_(None), Message.author_kind == AuthorKind.PARTICIPANT.value)
    )
    return (
        posts.where(_AUTHOR.guest_key_hash == key_hash),
        posts.where(
            _AUTHOR.guest_key_hash.in_(siblings),
            _AUTHOR.guest_key_hash != key_hash,
            Message.created_at >= since,
        ),
    )


# Built once: on the hot path (every guest post) building this statement cost more CPU than
# running it (issue 17, py-spy).
#
# Counted no further than the cap: the cap compares the count with it and nothing else reads
# it, and an unbounded count read every post an address's keys made in the window, for every
# guest post (issue 17: an office's or a carrier's shared address made each post dearer than
# the last; ``bench/floor.py``'s guests, all from one address, lost a third of their
# throughput in four rounds of eight seconds).
_CHARGED = (
    union_all(
        *_charged(
            bindparam("key_hash", type_=Participant.guest_key_hash.type),
            bindparam("since", type_=Message.created_at.type),
        )
    )
    .limit(bindparam("cap", type_=Integer()))
    .subquery()
)
_GUEST_POSTS = select(func.count()).select_from(_CHARGED)


@functools.cache
def charged_up_to_cap() -> ColumnElement[int]:
    """The posts charged to the guest key of the enclosing query's ``participants`` row, as
    :func:`guest_posts` counts them (up to the ``cap`` it binds, with ``since`` the window's
    start): a scalar subquery to read with the row, so a guest's post does not count in a
    statement of its own (issue 17)."""
    own, siblings = _charged(
        Participant.guest_key_hash, bindparam("since", type_=Message.created_at.type)
    )
    charged = (
        union_all(own.correlate(Participant), siblings.correlate(Participant))
        .limit(bindparam("cap", type_=Integer()))
        .subquery()
    )
    return select(func.count()).select_from(charged).scalar_subquery()


async def guest_posts(db: Db, guest_key_hash: str, now: datetime, cap: int) -> int:
    """Posts charged to a guest key while unclaimed (its own, and its address's other
    unclaimed keys' within the window: :func:`_charged`), counted up to ``cap``
    (``_GUEST_POSTS``)."""
    result = await db.execute(
        _GUEST_POSTS, {"key_hash": guest_key_hash, "since": now - IP_WINDOW, "cap": cap}
    )
    return int(result.scalar() or 0)


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
