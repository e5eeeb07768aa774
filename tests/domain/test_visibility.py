"""What each pane may see of room memory (rules V1-V10 of dealroom.domain.visibility).

seed 002 layers 1-3: confidentiality is enforced by this function, never by a model, so the
properties below plant canaries in every host-private place and search the visitor's view
for them.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealroom.domain.seats import RoomKind
from dealroom.domain.visibility import (
    HIDDEN_FROM_ALL,
    SHARED_GOALS,
    is_visitor_facing,
    visible_memory,
)
from tests.support.documents import leaves

DEAL = RoomKind.DEAL
HOME = RoomKind.HOME


def visitor_view(memory: Mapping[str, Any]) -> dict[str, Any]:
    return visible_memory(memory, pane="visitor", room_kind=DEAL)


def host_view(memory: Mapping[str, Any], kind: RoomKind = DEAL) -> dict[str, Any]:
    return visible_memory(memory, pane="host", room_kind=kind)


MEMORY: dict[str, Any] = {
    "host": {
        "floor": "3500",
        "rules": ["never below 3500"],
        "public": {"name": "Dev Raman", "rates": {"reel": "4000"}},
    },
    "visitor": {"name": "Mara", "claims": ["from Nike"]},
    "brand_2": {"budget": "9000"},
    "deal": {"deliverables": ["reel"], "fee": "4500"},
    "goals": {
        "new-offer": {"status": "open", "reason": "waiting for the floor", "by": "host"},
        "usage": {"status": "met", "reason": "agreed 90 days", "by": "visitor"},
        "other": {"status": "blocked", "reason": "brand_2 stuff", "by": "brand_2"},
    },
    "plans": {"host": "hold 4000", "visitor": "ask usage"},
    "pendingPrincipalDecisions": {
        "rate": {"side": "host", "question": "Take 4k?", "principalInstruction": "yes"},
        "budget": {"side": "visitor", "question": "Go to 4.5k?", "principalInstruction": None},
        "b2": {"side": "brand_2", "question": "?", "principalInstruction": None},
    },
    "offers": {"current": {"offerId": "off-1"}},
    "rulings": {
        "visitor": [{"decision": "counter", "amount": "4500", "dispatchId": "d-1"}],
        "brand_2": [{"decision": "settle", "amount": "9000", "dispatchId": "d-2"}],
    },
    "sent": {"d-1": "sent"},
    "deliveries": {"d-1": "delivered"},
    "scratch": {"anything": "unknown"},
}


def test_visitor_facing_is_every_pane_but_the_hosts() -> None:
    assert not is_visitor_facing("host")
    assert is_visitor_facing("visitor")
    assert is_visitor_facing("brand_2")


# --- V1: hidden from everyone ---


def test_hidden_from_all_are_plans_and_the_dispatch_record() -> None:
    assert {"plans", "sent", "deliveries"} == HIDDEN_FROM_ALL


@pytest.mark.parametrize(
    ("pane", "kind"), [("host", HOME), ("host", DEAL), ("visitor", DEAL), ("brand_2", DEAL)]
)
def test_no_pane_sees_plans_or_the_dispatch_record(pane: str, kind: RoomKind) -> None:
    # V1: each persona's own plan is re-attached by code alone (memory_records.own_plan).
    view = visible_memory(MEMORY, pane=pane, room_kind=kind)
    assert not set(view) & HIDDEN_FROM_ALL


# --- V2: the host side ---


@pytest.mark.parametrize("kind", [HOME, DEAL])
def test_host_sees_everything_but_plans_dispatch_and_other_sides_decisions(
    kind: RoomKind,
) -> None:
    # V2
    expected = {k: v for k, v in MEMORY.items() if k not in HIDDEN_FROM_ALL}
    expected["pendingPrincipalDecisions"] = {"rate": MEMORY["pendingPrincipalDecisions"]["rate"]}
    assert host_view(MEMORY, kind) == expected


def test_host_sees_no_decision_without_a_side() -> None:
    memory = {"pendingPrincipalDecisions": {"x": {"question": "?"}, "y": "text"}}
    assert host_view(memory) == {}


def test_host_sees_other_branches_goal_reasons_and_all_rulings() -> None:
    # V2: the host side judges with everything in view.
    view = host_view(MEMORY)
    assert view["brand_2"] == MEMORY["brand_2"]
    assert view["goals"] == MEMORY["goals"]
    assert view["rulings"] == MEMORY["rulings"]
    assert view["host"] == MEMORY["host"]


# --- V3-V9: the visitor side ---


def test_visitor_view_of_the_sample() -> None:
    assert visitor_view(MEMORY) == {
        "host": {"public": {"name": "Dev Raman", "rates": {"reel": "4000"}}},
        "visitor": {"name": "Mara", "claims": ["from Nike"]},
        "deal": {"deliverables": ["reel"], "fee": "4500"},
        "offers": {"current": {"offerId": "off-1"}},
        "goals": {
            "new-offer": {"status": "open"},
            "usage": {"status": "met", "reason": "agreed 90 days", "by": "visitor"},
        },
        "pendingPrincipalDecisions": {
            "budget": {"side": "visitor", "question": "Go to 4.5k?", "principalInstruction": None}
        },
        "rulings": {"visitor": [{"decision": "counter", "amount": "4500", "dispatchId": "d-1"}]},
    }


def test_unknown_top_level_keys_are_denied_to_the_visitor() -> None:
    # V3: default deny.
    assert visitor_view({"scratch": {"x": "1"}, "notes": "n", "Host": {"a": "b"}}) == {}


def test_visitor_sees_only_host_public() -> None:
    # V4
    assert visitor_view({"host": {"floor": "1", "public": "hi"}}) == {"host": {"public": "hi"}}


@pytest.mark.parametrize(
    "host", [{"floor": "1"}, {}, "a string host branch", ["public"], {"Public": "x"}]
)
def test_visitor_sees_no_host_key_without_host_public(host: object) -> None:
    # V4: not even an empty host section.
    assert visitor_view({"host": host}) == {}


def test_visitor_sees_its_own_branch_and_not_another_participants() -> None:
    # V5 (seed 002 layer 1).
    memory = {"visitor": {"a": "1"}, "brand_2": {"b": "2"}, "alice": "3"}
    assert visitor_view(memory) == {"visitor": {"a": "1"}}
    assert visible_memory(memory, pane="brand_2", room_kind=DEAL) == {"brand_2": {"b": "2"}}


def test_visitor_sees_the_deal_and_offer_references() -> None:
    # V6
    memory = {"deal": {"fee": "1"}, "offers": {"o": {"offerId": "x"}}}
    assert visitor_view(memory) == memory


def test_visitor_sees_goal_statuses_but_only_its_own_reasons() -> None:
    # V7
    memory = {
        "goals": {
            "new-offer": {"status": "open", "reason": "host private", "by": "host", "note": "n"},
            "b": {"status": "met", "reason": "mine", "by": "visitor"},
            "never-below-4000-floor": {"status": "abandoned", "reason": "no by"},
        }
    }
    # A key the host side's model chose could itself carry a private rule: it never crosses.
    assert visitor_view(memory) == {
        "goals": {
            "new-offer": {"status": "open"},
            "b": {"status": "met", "reason": "mine", "by": "visitor"},
        }
    }


@pytest.mark.parametrize("status", ["secret free text", ["open"], {"x": "open"}, None, "OPEN"])
def test_visitor_sees_no_goal_whose_status_is_not_a_known_status(status: object) -> None:
    # V7: only a known status crosses.
    assert visitor_view({"goals": {"g": {"status": status, "by": "host"}}}) == {}


def test_visitor_sees_no_malformed_goal_entries() -> None:
    assert visitor_view({"goals": {"g": "met"}}) == {}
    assert visitor_view({"goals": "met"}) == {}


def test_visitor_sees_only_decisions_put_to_its_side() -> None:
    # V8
    memory = {
        "pendingPrincipalDecisions": {
            "a": {"side": "host", "question": "host q"},
            "b": {"side": "visitor", "question": "visitor q"},
            "c": {"question": "no side"},
        }
    }
    assert visitor_view(memory) == {
        "pendingPrincipalDecisions": {"b": {"side": "visitor", "question": "visitor q"}}
    }


def test_visitor_sees_only_the_rulings_that_crossed_into_its_pane() -> None:
    # V9
    memory = {"rulings": {"visitor": [{"decision": "settle"}], "brand_2": [{"decision": "ask"}]}}
    assert visitor_view(memory) == {"rulings": {"visitor": [{"decision": "settle"}]}}
    assert visitor_view({"rulings": {"brand_2": []}}) == {}
    assert visitor_view({"rulings": ["x"]}) == {}


# --- V10: panes that see nothing ---


def test_a_visitor_pane_of_a_home_room_sees_nothing() -> None:
    # V10: a home room has only the host's pane.
    assert visible_memory(MEMORY, pane="visitor", room_kind=HOME) == {}


@pytest.mark.parametrize("pane", ["deal", "goals", "plans", "rulings", "Visitor", "", "a.b"])
def test_a_pane_that_is_no_participant_sees_nothing(pane: str) -> None:
    # V10: a pane named like a shared or reserved part would otherwise be its "own branch".
    assert visible_memory(MEMORY, pane=pane, room_kind=DEAL) == {}


# --- copies, never views ---


@pytest.mark.parametrize("pane", ["host", "visitor"])
def test_the_view_shares_nothing_with_memory(pane: str) -> None:
    memory = copy.deepcopy(MEMORY)
    view = visible_memory(memory, pane=pane, room_kind=DEAL)
    view["deal"]["deliverables"].append("story")
    view["goals"]["usage"]["reason"] = "changed"
    assert memory == MEMORY


# --- properties: canaries in every host-private place ---
#
# Private strings contain "zqx"; public strings are drawn from an alphabet without "z", "q"
# and "x", so a "zqx" anywhere in the visitor's view is a leak.

PUBLIC_TEXT = st.text(alphabet="abcdefghijklmnop 0123456789", max_size=6)
PUBLIC_KEYS = st.text(alphabet="abcdefghijklmnop_", min_size=1, max_size=5)
PUBLIC_JSON = st.recursive(
    st.one_of(PUBLIC_TEXT, st.integers(-9, 9), st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(PUBLIC_KEYS, inner, max_size=3)
    ),
    max_leaves=8,
)
_canaries = itertools.count()


def canary() -> str:
    return f"zqx{next(_canaries)}"


def _fill(node: Any) -> Any:
    if isinstance(node, dict):
        return {f"{canary()}{key}": _fill(child) for key, child in node.items()}
    if isinstance(node, list):
        return [_fill(child) for child in node]
    return canary()


PRIVATE_JSON = st.recursive(
    st.just("leaf"),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["k1", "k2", "k3"]), inner, max_size=3),
    ),
    max_leaves=6,
).map(_fill)
"""A subtree whose every key and value is a canary."""


STATUSES = st.sampled_from(["open", "met", "blocked", "abandoned"])
OTHER_PANES = st.sampled_from(["host", "brand_2", "alice", "b"])
OTHER_BRANCHES = st.sampled_from(["brand_2", "alice", "b", "guest_9"])
UNKNOWN_KEYS = st.sampled_from(["scratch", "notes", "Host", "VISITOR", "memo", "x-1", "h"])


@st.composite
def memories(draw: st.DrawFn) -> dict[str, Any]:
    """A memory document with canaries in every place the visitor must not see and public
    material everywhere it must."""
    memory: dict[str, Any] = {}
    host = draw(st.dictionaries(st.sampled_from(["rules", "floor", "k"]), PRIVATE_JSON))
    if draw(st.booleans()):
        host["public"] = draw(PUBLIC_JSON)
    keep_empty_host = draw(st.booleans())
    if host or keep_empty_host:
        memory["host"] = host
    for key in draw(st.sets(OTHER_BRANCHES, max_size=3)):
        memory[key] = draw(PRIVATE_JSON)
    for key in draw(st.sets(UNKNOWN_KEYS, max_size=3)):
        memory[key] = draw(PRIVATE_JSON)
    if draw(st.booleans()):
        memory["visitor"] = draw(st.dictionaries(PUBLIC_KEYS, PUBLIC_JSON, max_size=4))
    if draw(st.booleans()):
        memory["deal"] = draw(st.dictionaries(PUBLIC_KEYS, PUBLIC_JSON, max_size=4))
    if draw(st.booleans()):
        memory["offers"] = draw(
            st.dictionaries(
                PUBLIC_KEYS, st.fixed_dictionaries({"offerId": PUBLIC_TEXT}), max_size=3
            )
        )
    memory["plans"] = {
        pane: canary()
        for pane in draw(st.sets(st.sampled_from(["host", "visitor", "b"]), max_size=3))
    }
    memory["sent"] = {canary(): draw(PRIVATE_JSON)}
    memory["deliveries"] = {canary(): draw(PRIVATE_JSON)}

    goals: dict[str, Any] = {}
    for key in draw(st.sets(PUBLIC_KEYS, max_size=4)):
        if draw(st.booleans()):
            goals[key] = {"status": draw(STATUSES), "reason": draw(PUBLIC_TEXT), "by": "visitor"}
        else:
            goals[key] = {
                "status": draw(STATUSES),
                "reason": canary(),
                "by": draw(OTHER_PANES),
                canary(): canary(),
            }
    memory["goals"] = goals

    decisions: dict[str, Any] = {}
    for key in draw(st.sets(PUBLIC_KEYS, max_size=4)):
        if draw(st.booleans()):
            decisions[key] = {"side": "visitor", "question": draw(PUBLIC_TEXT)}
        else:
            decisions[f"{canary()}{key}"] = {
                "side": draw(OTHER_PANES),
                "question": canary(),
                "principalInstruction": canary(),
            }
    memory["pendingPrincipalDecisions"] = decisions

    rulings: dict[str, Any] = {
        pane: [{"decision": canary(), "amount": canary()}]
        for pane in draw(st.sets(OTHER_PANES, max_size=3))
    }
    if draw(st.booleans()):
        rulings["visitor"] = draw(
            st.lists(st.dictionaries(PUBLIC_KEYS, PUBLIC_TEXT, max_size=4), max_size=3)
        )
    memory["rulings"] = rulings
    return memory


@settings(max_examples=300)
@given(memory=memories())
def test_no_canary_reaches_the_visitor(memory: dict[str, Any]) -> None:
    # V1, V3-V9, seed 002 layers 1-3: nothing host-private, no plan, no other participant's
    # branch, no other side's decision, no host-ruled reason, no other pane's ruling and no
    # unknown part reaches a visitor-facing agent.
    assert "zqx" in json.dumps(memory)  # the test plants something every time
    assert "zqx" not in json.dumps(visitor_view(memory))


@settings(max_examples=150)
@given(memory=memories())
def test_everything_shared_with_the_visitor_survives(memory: dict[str, Any]) -> None:
    # V4, V5, V6, V7, V8, V9: the filter removes only what is private.
    view = visitor_view(memory)
    if "public" in memory.get("host", {}):
        assert view["host"] == {"public": memory["host"]["public"]}
    for part in ("visitor", "deal", "offers"):
        assert view.get(part) == memory.get(part)
    goals = view.get("goals", {})
    for key, entry in memory["goals"].items():
        if entry["by"] == "visitor":
            assert goals[key] == entry
        elif key in SHARED_GOALS:
            assert goals[key] == {"status": entry["status"]}
        else:
            assert key not in goals  # V7: a model-chosen key never crosses
    mine = {k: v for k, v in memory["pendingPrincipalDecisions"].items() if v["side"] == "visitor"}
    assert view.get("pendingPrincipalDecisions", {}) == mine
    if "visitor" in memory["rulings"]:
        assert view["rulings"] == {"visitor": memory["rulings"]["visitor"]}


@settings(max_examples=150)
@given(memory=memories(), pane=st.sampled_from(["host", "visitor", "brand_2"]))
def test_a_view_is_a_sub_document_and_memory_is_never_mutated(
    memory: dict[str, Any], pane: str
) -> None:
    # A view only removes: every value it holds is in memory at the same path.
    before = copy.deepcopy(memory)
    view = visible_memory(memory, pane=pane, room_kind=DEAL)
    assert memory == before
    source = leaves(memory)
    for path, value in leaves(view).items():
        assert source[path] == value


@settings(max_examples=100)
@given(memory=memories(), pane=st.sampled_from(["host", "visitor", "brand_2"]))
def test_a_view_of_a_view_is_the_same_view(memory: dict[str, Any], pane: str) -> None:
    view = visible_memory(memory, pane=pane, room_kind=DEAL)
    assert visible_memory(view, pane=pane, room_kind=DEAL) == view


@settings(max_examples=100)
@given(memory=memories())
def test_the_host_view_removes_only_plans_dispatch_and_other_sides_decisions(
    memory: dict[str, Any],
) -> None:
    # V1, V2
    view = host_view(memory)
    for key, value in memory.items():
        if key in HIDDEN_FROM_ALL or key == "pendingPrincipalDecisions":
            continue
        assert view[key] == value
    mine = {k: v for k, v in memory["pendingPrincipalDecisions"].items() if v["side"] == "host"}
    assert view.get("pendingPrincipalDecisions", {}) == mine
