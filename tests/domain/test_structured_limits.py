"""A host's limits are code-owned data.

Memory M12: the writer records a floor only as ``host.limits.<slug> = {floor, currency,
source}`` and a private term only as ``{text, source}`` appended to ``host.private_terms``;
M13: a ``host.public`` write that states a private value is refused. Visibility V4: no
visitor-side view (persona, Distil, context filter, Offer-Gen) ever holds either part.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dealroom.domain import memory as memdoc
from dealroom.domain.limits import Limit, limits_of, private_terms_of
from dealroom.domain.provenance import Said
from dealroom.domain.seats import RoomKind
from dealroom.domain.visibility import visible_memory

HOST_WRITER = memdoc.writable_prefixes("host", RoomKind.DEAL)


def write(document: dict[str, Any], *changes: memdoc.Change) -> memdoc.Applied:
    return memdoc.apply_changes(document, changes, allowed=HOST_WRITER)


def set_(path: str, value: str) -> memdoc.Change:
    return memdoc.Change(memdoc.Op.SET, path, value)


def append(path: str, value: str) -> memdoc.Change:
    return memdoc.Change(memdoc.Op.APPEND, path, value)


LIMIT = json.dumps({"floor": "6137", "currency": "usd", "source": "m-1"})


def test_m12_a_limit_is_stored_as_data_and_read_by_code() -> None:
    result = write({}, set_("host.limits.sponsored_post", LIMIT))
    assert result.rejected == ()
    assert result.document == {
        "host": {
            "limits": {"sponsored_post": {"floor": "6137", "currency": "USD", "source": "m-1"}}
        }
    }
    assert limits_of(result.document) == {
        "sponsored_post": Limit("sponsored_post", Decimal(6137), "USD", "m-1")
    }


def test_m12_anything_else_under_limits_is_refused() -> None:
    refused = [
        set_("host.limits.sponsored_post", "6137 USD"),  # free text, not data
        set_("host.limits.sponsored_post", '{"floor": "cheap", "currency": "USD"}'),
        set_("host.limits.sponsored_post", '{"floor": "-5", "currency": "USD"}'),
        set_("host.limits.sponsored_post", '{"floor": "6137", "currency": "dollars"}'),
        set_("host.limits.sponsored_post", '{"floor": "6137", "currency": "USD", "why": "x"}'),
        set_("host.limits.sponsored_post.floor", "6137"),  # a part of a limit
        set_("host.limits", LIMIT),  # the whole section (M4 as well)
        append("host.limits.sponsored_post", LIMIT),
    ]
    result = write({}, *refused)
    assert result.applied == ()
    assert len(result.rejected) == len(refused)
    assert result.document == {}


def test_m12_a_limit_is_removed_whole() -> None:
    document = write({}, set_("host.limits.reel", LIMIT)).document
    said = [Said("m-3", "Forget the 6137 floor for reels.")]  # M16: on the principal's word
    result = memdoc.apply_changes(
        document,
        [memdoc.Change(memdoc.Op.REMOVE, "host.limits.reel")],
        allowed=HOST_WRITER,
        said=said,
    )
    assert limits_of(result.document) == {}


def test_m12_private_terms_are_appended_as_entries() -> None:
    result = write(
        {},
        append("host.private_terms", json.dumps({"text": "no alcohol brands", "source": "m-2"})),
        append("host.private_terms", "never mention my agency"),
        set_("host.private_terms", "overwrite them all"),
        append("host.private_terms.extra", "x"),
        append("host.private_terms", '{"text": "", "source": "m"}'),
    )
    assert [r.change.path for r in result.rejected] == [
        "host.private_terms",
        "host.private_terms.extra",
        "host.private_terms",
    ]
    assert result.document["host"]["private_terms"] == [
        {"text": "no alcohol brands", "source": "m-2"},
        {"text": "never mention my agency", "source": None},
    ]
    assert private_terms_of(result.document) == ["no alcohol brands", "never mention my agency"]


def test_m12_code_writes_are_not_held_to_the_writer_shape() -> None:
    """Code (allowed=None) may write any valid path, as M2 says."""
    result = memdoc.apply_changes({}, [set_("host.limits.reel.floor", "1")], allowed=None)
    assert result.rejected == ()


def test_m13_a_public_write_stating_a_private_value_is_refused() -> None:
    document = write(
        {},
        set_("host.limits.sponsored_post", LIMIT),
        append("host.private_terms", "no QX7-orchid-58213 brands"),
        set_("host.notes", "reach me at dev@raman.example"),
    ).document
    # M15: the principal said every one of them may be shared; the firewall still refuses three
    said = Said(
        "m-4",
        "Share these: Sponsored post from $6,137. DEV@raman.example. We never take "
        "qx7_orchid_58213 money. Sponsored post from $8,000.",
    )
    result = memdoc.apply_changes(
        document,
        [
            set_("host.public.card", "Sponsored post from $6,137."),
            set_("host.public.contact", "DEV@raman.example"),
            set_("host.public.terms", "we never take qx7_orchid_58213 money"),
            set_("host.public.ok", "Sponsored post from $8,000."),
        ],
        allowed=HOST_WRITER,
        said=[said],
    )
    assert [r.change.path for r in result.rejected] == [
        "host.public.card",
        "host.public.contact",
        "host.public.terms",
    ]
    assert all("private values" in r.reason for r in result.rejected)
    assert result.document["host"]["public"] == {"ok": "Sponsored post from $8,000."}


def test_m13_public_writes_are_checked_after_the_limit_in_the_same_output() -> None:
    """A writer cannot get a value out by filing it publicly before it records the limit."""
    result = write(
        {},
        set_("host.public.card", "from 6137 USD"),
        set_("host.limits.sponsored_post", LIMIT),
    )
    assert [r.change.path for r in result.rejected] == ["host.public.card"]
    assert "public" not in result.document["host"]


_slug = st.from_regex(r"[a-z][a-z_]{0,20}", fullmatch=True)


@given(
    slug=_slug,
    floor=st.integers(1, 10**9),
    term=st.text(min_size=1, max_size=80).filter(str.strip),
)
def test_v4_no_visitor_side_view_holds_limits_or_private_terms(
    slug: str, floor: int, term: str
) -> None:
    document = write(
        {"host": {"public": {"card": "hello"}}},
        set_(f"host.limits.{slug}", json.dumps({"floor": str(floor), "currency": "USD"})),
        append("host.private_terms", json.dumps({"text": term, "source": "m"})),
    ).document
    for pane in ("visitor", "brand", "guest_2"):
        view = visible_memory(document, pane=pane, room_kind=RoomKind.DEAL)
        assert view.get("host") == {"public": {"card": "hello"}}
        assert "limits" not in json.dumps(view)
        assert "private_terms" not in json.dumps(view)
    host = visible_memory(document, pane="host", room_kind=RoomKind.DEAL)
    assert "limits" in host["host"]
    assert "private_terms" in host["host"]
