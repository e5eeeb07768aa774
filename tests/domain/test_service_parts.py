"""The parts of durable memory: a room's view, paths as a room reads them, and Arvist's
changes routed to their part (domain/service_parts.py S1-S4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dealroom.domain import memory as memdoc
from dealroom.domain import service_parts as sp
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.seats import RoomKind

FLOOR = {"floor": "4000", "currency": "USD"}
KEYNOTE = {"floor": "2500", "currency": "USD"}
DOC: dict[str, Any] = {
    "style": "brief",
    "rates": {"sponsored_post": {"ask": "8000 USD"}},
    "services": {
        "sponsored_post": {"limits": {"sponsored_post": FLOOR}},
        "speaking_gig": {"limits": {"keynote": KEYNOTE}, "style": "warm"},
    },
}


def test_a_room_sees_the_shared_part_and_its_own_service_only() -> None:
    assert sp.view(DOC, "speaking_gig") == {
        "style": "warm",  # the service's leaf wins
        "rates": {"sponsored_post": {"ask": "8000 USD"}},
        "limits": {"keynote": KEYNOTE},
    }
    assert "4000" not in json.dumps(sp.view(DOC, "speaking_gig"))
    assert sp.view(DOC, "sponsored_post")["limits"] == {"sponsored_post": FLOOR}
    assert sp.view(DOC, None) == {"style": "brief", "rates": DOC["rates"]}
    assert sp.view(DOC, "unknown") == sp.view(DOC, None)
    assert sp.room_view(DOC, RoomKind.HOME, None) == DOC
    # a document from before services is all shared: every room sees all of it
    legacy = {"limits": {"sponsored_post": FLOOR}}
    assert sp.view(legacy, None) == sp.view(legacy, "speaking_gig") == legacy


def test_paths_read_as_the_room_reads_them() -> None:
    assert sp.view_path("limits.x.floor", "speaking_gig") == "limits.x.floor"
    assert sp.view_path("services.speaking_gig.limits.keynote.floor", "speaking_gig") == (
        "limits.keynote.floor"
    )
    assert sp.view_path("services.sponsored_post.limits.x.floor", "speaking_gig") is None
    assert sp.view_path("services.speaking_gig.style", None) is None
    changed = ["services.sponsored_post.limits.sponsored_post.floor", "style"]
    assert sp.room_paths(changed, RoomKind.DEAL, "speaking_gig") == ["style"]
    assert sp.room_paths(changed, RoomKind.HOME, None) == sorted(changed)
    dates = {"style": "d1", "services.speaking_gig.style": "d2", "services.other.x": "d3"}
    assert sp.view_dates(dates, "speaking_gig") == {"style": "d2"}


def test_keys_are_names_in_link_form() -> None:
    assert sp.service_key("Speaking gig") == "speaking_gig"
    assert sp.service_key("  Sponsored-Post!! ") == "sponsored_post"
    with pytest.raises(DomainError) as caught:
        sp.service_key(" -- ")
    assert caught.value.code == ErrorCode.BAD_USER_INPUT
    assert sp.clean_names(["Keynote", " Sponsored  post "]) == [
        ("keynote", "Keynote"),
        ("sponsored_post", "Sponsored post"),
    ]
    with pytest.raises(DomainError):
        sp.clean_names(["Sponsored post", "sponsored-post"])
    with pytest.raises(DomainError):
        sp.clean_names(["x" * 121])


def _set(path: str, value: str) -> memdoc.Change:
    return memdoc.Change(memdoc.Op.SET, path, value)


def test_changes_go_to_their_part() -> None:
    curated = sp.curate(
        DOC,
        [
            (
                sp.Part.SERVICE,
                _set("limits.keynote", json.dumps({"floor": "3000", "currency": "USD"})),
            ),
            (sp.Part.SHARED, _set("contact.email_ok", "yes")),
            (sp.Part.SERVICE, _set("rates.keynote.ask", "5000 USD")),
        ],
        service="speaking_gig",
        room_branch=None,
    )
    doc = curated.document
    assert doc["services"]["speaking_gig"]["limits"]["keynote"]["floor"] == "3000"
    assert doc["services"]["speaking_gig"]["rates"] == {"keynote": {"ask": "5000 USD"}}
    assert doc["contact"] == {"email_ok": "yes"}
    assert "keynote" not in doc.get("limits", {})
    assert doc["services"]["sponsored_post"] == DOC["services"]["sponsored_post"]
    # in a room about no service, a service change is shared
    plain = sp.curate(
        DOC, [(sp.Part.SERVICE, _set("rates.x.ask", "1 USD"))], service=None, room_branch=None
    )
    assert plain.document["rates"]["x"] == {"ask": "1 USD"}


def test_a_hosts_floor_the_curator_forgot_goes_to_the_rooms_service() -> None:
    branch = {"limits": {"workshop": {"floor": "900", "currency": "USD"}}}
    curated = sp.curate(DOC, [], service="speaking_gig", room_branch=branch)
    assert curated.document["services"]["speaking_gig"]["limits"]["workshop"]["floor"] == "900"
    assert "limits" not in curated.document
    shared = sp.curate(DOC, [], service=None, room_branch=branch)
    assert shared.document["limits"]["workshop"]["floor"] == "900"


def test_a_model_never_names_a_part() -> None:
    assert not sp.model_may_name("services.sponsored_post.limits.x")
    assert sp.model_may_name("rates.services_note")


def test_a_shared_leaf_filed_under_another_service_stays_out_of_a_room_about_one() -> None:
    """S5: a floor told in the home room lands in the shared part under the deliverable's key;
    a room about another of the host's services does not see it, in its view, its paths or its
    leaf dates; a room about that service, or about none, does."""
    keys = {"sponsored_post", "speaking_gig"}
    told = {
        "style": "brief",
        "limits": {"sponsored_post": FLOOR},
        "rates": {"sponsored_post": {"ask": "8000 USD"}, "keynote": {"ask": "5000 USD"}},
        "services": {"speaking_gig": {"limits": {"keynote": KEYNOTE}}},
    }
    speaking = sp.view(told, "speaking_gig", keys)
    assert speaking == {
        "style": "brief",
        "rates": {"keynote": {"ask": "5000 USD"}},
        "limits": {"keynote": KEYNOTE},
    }
    assert "4000" not in json.dumps(speaking)
    assert sp.room_view(told, RoomKind.DEAL, "speaking_gig", keys) == speaking
    assert sp.view(told, "sponsored_post", keys)["limits"] == {"sponsored_post": FLOOR}
    assert sp.view(told, None, keys)["limits"] == {"sponsored_post": FLOOR}
    assert sp.room_view(told, RoomKind.HOME, None, keys) == told
    # without the host's list (a host with no services) nothing is held back
    assert sp.view(told, "speaking_gig")["limits"]["sponsored_post"] == FLOOR

    assert sp.view_path("limits.sponsored_post.floor", "speaking_gig", keys) is None
    assert sp.view_path("limits.keynote.floor", "speaking_gig", keys) == "limits.keynote.floor"
    assert sp.view_path("style", "speaking_gig", keys) == "style"
    assert sp.view_path("limits.sponsored_post.floor", "sponsored_post", keys) == (
        "limits.sponsored_post.floor"
    )
    changed = ["limits.sponsored_post.floor", "rates.keynote.ask"]
    assert sp.room_paths(changed, RoomKind.DEAL, "speaking_gig", keys) == ["rates.keynote.ask"]
    dates = {"limits.sponsored_post.floor": "d1", "style": "d2"}
    assert sp.view_dates(dates, "speaking_gig", keys) == {"style": "d2"}
