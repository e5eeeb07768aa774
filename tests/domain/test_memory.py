"""Room memory changes and code-written parts (rules M1-M10 of dealroom.domain.memory)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.memory import (
    MAX_DOCUMENT_BYTES,
    MAX_VALUE_CHARS,
    RESERVED,
    Applied,
    Change,
    GoalStatus,
    Op,
    apply_changes,
    document_size,
    is_participant_key,
    parse_path,
    writable_prefixes,
)
from dealroom.domain.memory_records import (
    own_plan,
    record_claims,
    record_principal_decision,
    record_ruling,
    rule_goals,
    set_plan,
)
from dealroom.domain.memory_sections import section_paths, select_paths
from dealroom.domain.provenance import Said
from dealroom.domain.seats import RoomKind
from tests.support.documents import Path, leaves

DEAL = RoomKind.DEAL
HOME = RoomKind.HOME


def code(document: Mapping[str, Any], *changes: Change) -> Applied:
    return apply_changes(document, changes, allowed=None)


def writer(document: Mapping[str, Any], *changes: Change, allowed: tuple[str, ...]) -> Applied:
    return apply_changes(document, changes, allowed=allowed)


def set_(path: str, value: str | None = "v") -> Change:
    return Change(Op.SET, path, value)


def append(path: str, value: str | None = "v") -> Change:
    return Change(Op.APPEND, path, value)


def remove(path: str) -> Change:
    return Change(Op.REMOVE, path)


def bad_input(error: pytest.ExceptionInfo[DomainError]) -> bool:
    return error.value.code is ErrorCode.BAD_USER_INPUT


# --- Op and the reserved parts ---


def test_op_values_are_the_wire_names() -> None:
    assert [op.value for op in Op] == ["set", "append", "remove"]


def test_goal_statuses_are_the_four_of_the_architecture() -> None:
    assert {status.value for status in GoalStatus} == {"open", "met", "blocked", "abandoned"}


def test_reserved_parts_include_the_dispatch_record() -> None:
    # M2: memory may never claim a delivery, so "sent" and "deliveries" are code-only too.
    assert {
        "goals",
        "plans",
        "pendingPrincipalDecisions",
        "offers",
        "rulings",
        "sent",
        "deliveries",
    } == RESERVED


@pytest.mark.parametrize("key", ["host", "visitor", "brand_2", "a"])
def test_participant_keys_are_lowercase_identifiers(key: str) -> None:
    assert is_participant_key(key)


@pytest.mark.parametrize(
    "key", ["deal", "goals", "plans", "sent", "deliveries", "Visitor", "2nd", "a-b", "", "a.b"]
)
def test_reserved_parts_deal_and_odd_keys_are_not_participant_keys(key: str) -> None:
    assert not is_participant_key(key)


# --- M1: paths ---


@pytest.mark.parametrize(
    "path",
    ["a", "host.public.rate", "a-b.c_d.E9", ".".join(["s"] * 8), "x" * 64, "a." + "y" * 64],
)
def test_valid_paths_parse(path: str) -> None:
    # M1: 1-8 dotted segments of [A-Za-z0-9_-]{1,64}.
    assert parse_path(path) == tuple(path.split("."))


@pytest.mark.parametrize(
    "path",
    [
        "",
        ".",
        "a..b",
        ".a",
        "a.",
        "a b",
        "a/b",
        "é",
        "a.$",
        ".".join(["s"] * 9),
        "x" * 65,
        "a." + "y" * 65,
    ],
)
def test_invalid_paths_are_rejected_even_for_code(path: str) -> None:
    # M1: a change that names no valid path cannot touch anything.
    assert parse_path(path) is None
    result = code({"a": {"b": "kept"}}, set_(path), remove(path), append(path))
    assert result.document == {"a": {"b": "kept"}}
    assert result.applied == ()
    assert len(result.rejected) == 3
    assert all("not a memory path" in rejected.reason for rejected in result.rejected)


# --- M3: writable prefixes ---


@pytest.mark.parametrize(
    ("pane", "kind", "prefixes"),
    [
        ("host", HOME, ("host",)),
        ("host", DEAL, ("host",)),
        ("visitor", DEAL, ("visitor", "deal")),
        ("visitor_2", DEAL, ("visitor_2",)),  # a teammate: its own branch, never the lead's deal
        ("host_2", DEAL, ("host",)),  # the host's team writes the host's branch
        ("visitor", HOME, ()),
        ("goals", DEAL, ()),
        ("plans", DEAL, ()),
        ("deal", DEAL, ()),
        ("Visitor", DEAL, ()),
        ("", DEAL, ()),
    ],
)
def test_writable_prefixes(pane: str, kind: RoomKind, prefixes: tuple[str, ...]) -> None:
    # M3: host side writes the host branch; the visitor lead's pane its own branch and the deal;
    # a pane that is no participant (or a visitor pane of a home room) writes nothing.
    assert writable_prefixes(pane, kind) == prefixes


def test_host_writer_may_write_under_the_host_branch_including_public() -> None:
    allowed = writable_prefixes("host", DEAL)
    result = apply_changes(
        {},
        [set_("host.floor", "5000"), set_("host.public.name", "Dev")],
        allowed=allowed,
        said=[Said("m-1", "I'm Dev, you can share my name.")],  # M15
    )
    assert result.document == {"host": {"floor": "5000", "public": {"name": "Dev"}}}


def test_host_writer_may_not_write_the_deal_or_a_visitor_branch() -> None:
    # M3: the shared deal is written only from visitor panes.
    result = writer({}, set_("deal.fee"), set_("visitor.name"), allowed=("host",))
    assert result.document == {}
    assert len(result.rejected) == 2


def test_visitor_writer_writes_its_branch_and_the_deal() -> None:
    allowed = writable_prefixes("visitor", DEAL)
    result = writer(
        {}, set_("visitor.name", "Mara"), append("deal.deliverables", "reel"), allowed=allowed
    )
    assert result.document == {"visitor": {"name": "Mara"}, "deal": {"deliverables": ["reel"]}}


def test_visitor_writer_may_not_write_the_host_branch_or_its_public_part() -> None:
    allowed = writable_prefixes("visitor", DEAL)
    doc = {"host": {"floor": "5000", "public": {"name": "Dev"}}}
    result = writer(
        doc,
        set_("host.floor", "1"),
        set_("host.public.name", "Mara"),
        remove("host.floor"),
        allowed=allowed,
    )
    assert result.document == doc
    assert result.applied == ()


# --- M2: reserved parts ---


@pytest.mark.parametrize("part", sorted(RESERVED))
def test_writer_may_never_write_a_reserved_part_even_if_allowed_names_it(part: str) -> None:
    # M2: reserved parts are code-only, whatever prefixes a caller passes.
    result = writer(
        {}, set_(f"{part}.x"), append(f"{part}.y"), remove(f"{part}.z"), allowed=(part,)
    )
    assert result.document == {}
    assert result.applied == ()
    assert all("written by code only" in rejected.reason for rejected in result.rejected)


@pytest.mark.parametrize("part", sorted(RESERVED))
def test_code_may_write_reserved_parts(part: str) -> None:
    # M2: allowed=None is code writing.
    assert code({}, set_(f"{part}.x", "1")).document == {part: {"x": "1"}}


def test_writer_may_not_claim_a_delivery() -> None:
    # M2 (ARCHITECTURE "The turn" 5): memory may never claim a delivery the dispatch
    # record does not show.
    allowed = writable_prefixes("visitor", DEAL)
    result = writer({}, set_("deliveries.d1", "delivered"), set_("sent.d1", "yes"), allowed=allowed)
    assert result.document == {}


# --- M4: strictly under a prefix ---


@pytest.mark.parametrize("change", [set_("host"), append("host"), remove("host")])
def test_writer_may_not_replace_or_remove_a_whole_branch(change: Change) -> None:
    # M4: the writer writes host.x, never host itself.
    doc = {"host": {"floor": "5000"}}
    result = writer(doc, change, allowed=("host",))
    assert result.document == doc
    assert "outside the branches" in result.rejected[0].reason


def test_a_prefix_is_a_whole_segment_not_a_string_prefix() -> None:
    # M4: "hostile.x" is not under "host".
    result = writer({}, set_("hostile.x"), set_("host-x.y"), allowed=("host",))
    assert result.document == {}


def test_a_dotted_prefix_allows_only_what_is_under_it() -> None:
    allowed = ("a.b",)
    result = writer({}, set_("a.b.c"), set_("a.b"), set_("a.c"), allowed=allowed)
    assert result.document == {"a": {"b": {"c": "v"}}}
    assert [rejected.change.path for rejected in result.rejected] == ["a.b", "a.c"]


def test_malformed_prefixes_allow_nothing() -> None:
    result = writer({}, set_("a.b"), allowed=("", "a..", "a."))
    assert result.document == {}


def test_code_may_replace_a_whole_top_level_part() -> None:
    assert code({"deal": {"x": "1"}}, set_("deal", "reset")).document == {"deal": "reset"}


# --- M5: values ---


@pytest.mark.parametrize("op", [Op.SET, Op.APPEND])
def test_set_and_append_need_a_value(op: Op) -> None:
    result = code({}, Change(op, "a.b"))
    assert result.document == {}
    assert "needs a value" in result.rejected[0].reason


def test_a_value_of_the_maximum_length_is_accepted() -> None:
    value = "x" * MAX_VALUE_CHARS
    assert code({}, set_("a", value)).document == {"a": value}


@pytest.mark.parametrize("op", [Op.SET, Op.APPEND])
def test_a_value_over_the_maximum_length_is_rejected(op: Op) -> None:
    result = code({}, Change(op, "a", "x" * (MAX_VALUE_CHARS + 1)))
    assert result.document == {}
    assert "longer than" in result.rejected[0].reason


def test_remove_needs_no_value() -> None:
    assert code({"a": "1", "b": "2"}, remove("a")).document == {"b": "2"}


def test_an_empty_string_is_a_value() -> None:
    assert code({}, set_("a", "")).document == {"a": ""}


# --- M6: set ---


def test_set_creates_missing_sections() -> None:
    assert code({}, set_("a.b.c", "1")).document == {"a": {"b": {"c": "1"}}}


def test_set_keeps_siblings() -> None:
    doc = {"a": {"b": "1", "c": {"d": "2"}}}
    assert code(doc, set_("a.c.e", "3")).document == {"a": {"b": "1", "c": {"d": "2", "e": "3"}}}


def test_set_overwrites_a_value() -> None:
    assert code({"a": {"b": "1"}}, set_("a.b", "2")).document == {"a": {"b": "2"}}


def test_set_replaces_the_section_it_names() -> None:
    # The change names a.b, so everything under a.b is its to replace.
    assert code({"a": {"b": {"c": "1"}}}, set_("a.b", "2")).document == {"a": {"b": "2"}}


@pytest.mark.parametrize("blocker", ["text", 3, None, ["x"], True])
def test_set_through_a_value_is_rejected_and_the_rest_still_apply(blocker: object) -> None:
    # M6, M10: a value in the way rejects that change only.
    doc = {"a": {"b": blocker}}
    result = code(doc, set_("a.b.c", "1"), set_("a.d", "2"))
    assert result.document == {"a": {"b": blocker, "d": "2"}}
    assert [rejected.change.path for rejected in result.rejected] == ["a.b.c"]
    assert "a.b holds a value" in result.rejected[0].reason
    assert result.applied == (set_("a.d", "2"),)


# --- M7: append ---


def test_append_to_a_missing_target_makes_a_list() -> None:
    assert code({}, append("a.b", "1")).document == {"a": {"b": ["1"]}}


def test_append_to_a_list_appends() -> None:
    assert code({"a": ["1"]}, append("a", "2"), append("a", "3")).document == {"a": ["1", "2", "3"]}


@pytest.mark.parametrize("old", ["1", 7, None, False])
def test_append_to_a_single_value_makes_a_pair(old: object) -> None:
    assert code({"a": old}, append("a", "2")).document == {"a": [old, "2"]}


def test_append_to_a_section_is_rejected() -> None:
    doc = {"a": {"b": "1"}}
    result = code(doc, append("a", "2"))
    assert result.document == doc
    assert "is a section" in result.rejected[0].reason


def test_append_through_a_value_is_rejected() -> None:
    assert code({"a": "x"}, append("a.b", "1")).document == {"a": "x"}


# --- M8: remove ---


def test_remove_deletes_a_value() -> None:
    assert code({"a": {"b": "1", "c": "2"}}, remove("a.b")).document == {"a": {"c": "2"}}


def test_remove_deletes_a_whole_section() -> None:
    assert code({"a": {"b": {"c": "1"}}, "d": "2"}, remove("a.b")).document == {"a": {}, "d": "2"}


@pytest.mark.parametrize("path", ["missing", "a.missing", "a.b.c.d", "x.y"])
def test_remove_of_nothing_is_a_no_op_not_a_rejection(path: str) -> None:
    # M8: "a.b.c.d" runs through the value at a.b: still nothing to remove.
    doc = {"a": {"b": "1"}}
    result = code(doc, remove(path))
    assert result.document == doc
    assert result.applied == (remove(path),)
    assert result.rejected == ()


# --- M9: the document limit ---


def near_limit(room_left: int) -> dict[str, Any]:
    """A document ``room_left`` bytes under the limit."""
    base = document_size({"host": {"filler": ""}})
    return {"host": {"filler": "x" * (MAX_DOCUMENT_BYTES - base - room_left)}}


def test_a_change_that_fills_the_document_exactly_is_applied() -> None:
    grown = ', "k": "a"'
    doc = near_limit(len(grown))
    result = code(doc, set_("host.k", "a"))
    assert result.rejected == ()
    assert document_size(result.document) == MAX_DOCUMENT_BYTES


def test_a_change_that_would_exceed_the_limit_is_rejected() -> None:
    # M9
    doc = near_limit(len(', "k": "a"'))
    result = code(doc, set_("host.k", "ab"))
    assert result.document == doc
    assert "would exceed" in result.rejected[0].reason


def test_a_rejected_set_leaves_no_created_sections_behind() -> None:
    # M9, M10: the sections the set created are reverted with it.
    doc = near_limit(10)
    result = code(doc, set_("deal.a.b.c", "x" * 100))
    assert result.document == doc


def test_a_rejected_append_leaves_the_list_as_it_was() -> None:
    doc = near_limit(10 + len(', "list": ["1"]'))
    doc["host"]["list"] = ["1"]
    assert document_size(doc) == MAX_DOCUMENT_BYTES - 10
    result = code(doc, append("host.list", "x" * 20))
    assert result.document == doc


def test_remove_is_allowed_over_the_limit() -> None:
    # M9: remove only shrinks the document.
    doc = near_limit(0)
    doc["host"]["extra"] = "1"
    assert document_size(doc) > MAX_DOCUMENT_BYTES
    assert code(doc, remove("host.extra")).document == near_limit(0)


def test_later_changes_apply_after_one_hits_the_limit() -> None:
    doc = near_limit(30)
    result = code(doc, set_("host.big", "x" * 100), set_("host.k", "a"))
    assert [change.path for change in result.applied] == ["host.k"]


# --- M10: a new document, changes in order ---


def test_changes_apply_in_order() -> None:
    result = code({}, set_("a", "1"), remove("a"), set_("a", "2"), append("a", "3"))
    assert result.document == {"a": ["2", "3"]}


def test_the_input_is_never_mutated() -> None:
    doc: dict[str, Any] = {"a": {"b": ["1"]}, "c": "2"}
    before = copy.deepcopy(doc)
    result = code(doc, append("a.b", "x"), set_("a.d", "y"), remove("c"))
    assert doc == before
    assert result.document["a"]["b"] is not doc["a"]["b"]


def test_an_unknown_op_is_rejected() -> None:
    result = code({}, Change("rewrite", "a", "1"))  # type: ignore[arg-type]  # wire garbage
    assert result.document == {}
    assert "unknown op" in result.rejected[0].reason


# --- property: a targeted change touches only what it names ---

KEYS = st.sampled_from(["a", "b", "c", "host", "visitor", "deal", "public", "goals", "x-1"])
SCALARS = st.one_of(
    st.text(max_size=4),
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    st.lists(st.text(max_size=3), max_size=3),
)
JSON = st.recursive(SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=4), max_leaves=16)
DOCUMENTS = st.dictionaries(KEYS, JSON, max_size=5)
PATHS = st.lists(KEYS, min_size=1, max_size=4).map(".".join)
CHANGES = st.builds(
    Change,
    op=st.sampled_from(Op),
    path=PATHS,
    value=st.one_of(st.none(), st.text(max_size=4)),
)


def related(path: Path, target: Path) -> bool:
    """``path`` is under ``target`` or on the way to it."""
    shorter = min(len(path), len(target))
    return path[:shorter] == target[:shorter]


@settings(max_examples=200)
@given(document=DOCUMENTS, change=CHANGES)
def test_a_change_touches_nothing_it_does_not_name(
    document: dict[str, Any], change: Change
) -> None:
    # ARCHITECTURE "Room memory": a change that names no path cannot touch it (M6-M8).
    before = copy.deepcopy(document)
    result = code(document, change)
    assert document == before  # M10
    target = tuple(change.path.split("."))
    untouched_before = {p: v for p, v in leaves(before).items() if not related(p, target)}
    untouched_after = {p: v for p, v in leaves(result.document).items() if not related(p, target)}
    assert untouched_after == untouched_before
    if result.rejected:
        assert result.document == before


@settings(max_examples=100)
@given(document=DOCUMENTS, changes=st.lists(CHANGES, max_size=6))
def test_every_change_is_either_applied_or_rejected(
    document: dict[str, Any], changes: list[Change]
) -> None:
    result = apply_changes(document, changes, allowed=None)
    assert len(result.applied) + len(result.rejected) == len(changes)


WRITER_KEYS = st.sampled_from(
    ["visitor", "deal", "host", "public", "brand_2", "a", "x-1", *sorted(RESERVED)]
)
WRITER_PATHS = st.lists(WRITER_KEYS, min_size=1, max_size=4).map(".".join)
WRITER_CHANGES = st.builds(
    Change, op=st.sampled_from(Op), path=WRITER_PATHS, value=st.text(max_size=4)
)
PROTECTED = ["host", "brand_2", *sorted(RESERVED)]


@settings(max_examples=200)
@given(
    document=st.dictionaries(WRITER_KEYS, JSON, max_size=6),
    changes=st.lists(WRITER_CHANGES, max_size=8),
)
def test_the_visitor_writer_never_writes_outside_its_branch_and_the_deal(
    document: dict[str, Any], changes: list[Change]
) -> None:
    # M2, M3, M4: a visitor-side Distil can never write into host, plans, goals, rulings,
    # sent, deliveries, pendingPrincipalDecisions, offers, or another participant's branch.
    result = apply_changes(document, changes, allowed=writable_prefixes("visitor", DEAL))
    for part in PROTECTED:
        assert result.document.get(part) == document.get(part)
    for change in result.applied:
        assert change.path.startswith(("visitor.", "deal."))
    assert set(result.document) <= set(document) | {"visitor", "deal"}


# --- code-written parts ---


def test_set_plan_records_the_panes_plan_and_own_plan_reads_it_back() -> None:
    doc = set_plan({}, "visitor", "ask about usage rights")
    doc = set_plan(doc, "host", "hold the floor")
    assert doc == {"plans": {"visitor": "ask about usage rights", "host": "hold the floor"}}
    assert own_plan(doc, "visitor") == "ask about usage rights"
    assert own_plan(doc, "host") == "hold the floor"


def test_set_plan_replaces_the_previous_plan() -> None:
    assert own_plan(set_plan(set_plan({}, "host", "one"), "host", "two"), "host") == "two"


@pytest.mark.parametrize("doc", [{}, {"plans": "text"}, {"plans": {"host": {"x": "1"}}}])
def test_own_plan_is_empty_when_there_is_none(doc: dict[str, Any]) -> None:
    assert own_plan(doc, "host") == ""


@pytest.mark.parametrize("pane", ["deal", "goals", "a.b", ""])
def test_set_plan_refuses_a_pane_that_is_no_participant(pane: str) -> None:
    with pytest.raises(DomainError) as error:
        set_plan({}, pane, "x")
    assert bad_input(error)


def test_set_plan_refuses_an_overlong_plan() -> None:
    with pytest.raises(DomainError) as error:
        set_plan({}, "host", "x" * (MAX_VALUE_CHARS + 1))
    assert bad_input(error)


def test_set_plan_does_not_mutate_its_input() -> None:
    doc: dict[str, Any] = {"plans": {"host": "old"}}
    set_plan(doc, "host", "new")
    assert doc == {"plans": {"host": "old"}}


def test_rule_goals_records_status_reason_and_who_ruled() -> None:
    doc, skipped = rule_goals({}, [("new-offer", "met", "terms agreed")], "visitor")
    assert doc == {
        "goals": {"new-offer": {"status": "met", "reason": "terms agreed", "by": "visitor"}}
    }
    assert skipped == ()


def test_rule_goals_replaces_the_whole_entry() -> None:
    # A host's reason must not linger under a visitor-side ruling (visibility V7).
    doc = {"goals": {"g": {"status": "open", "reason": "private floor", "by": "host", "x": "1"}}}
    ruled, _ = rule_goals(doc, [("g", "blocked", "")], "visitor")
    assert ruled["goals"]["g"] == {"status": "blocked", "reason": "", "by": "visitor"}


def test_rule_goals_skips_and_reports_bad_rulings() -> None:
    doc, skipped = rule_goals(
        {"goals": {"keep": {"status": "open"}}},
        [
            ("a", "done", "unknown status"),
            ("b.c", "met", "bad key"),
            ("d", "met", "x" * (MAX_VALUE_CHARS + 1)),
            ("e", "abandoned", "fine"),
        ],
        "host",
    )
    assert skipped == ("a", "b.c", "d")
    assert doc["goals"] == {
        "keep": {"status": "open"},
        "e": {"status": "abandoned", "reason": "fine", "by": "host"},
    }


def test_rule_goals_refuses_a_ruler_that_is_no_participant() -> None:
    with pytest.raises(DomainError) as error:
        rule_goals({}, [("g", "met", "")], "goals")
    assert bad_input(error)


def test_record_principal_decision_records_side_question_and_instruction() -> None:
    doc = record_principal_decision({}, "rate", "host", "Take 4k?", None)
    doc = record_principal_decision(doc, "rate", "host", "Take 4k?", "Yes, take 4k")
    assert doc == {
        "pendingPrincipalDecisions": {
            "rate": {
                "side": "host",
                "question": "Take 4k?",
                "principalInstruction": "Yes, take 4k",
                # instructions PI1: the terms it covers (none on record yet)
                "covers": {"amounts": [], "deliverables": []},
            }
        }
    }


@pytest.mark.parametrize(("key", "side"), [("a.b", "host"), ("", "host"), ("k", "deal")])
def test_record_principal_decision_refuses_bad_keys_and_sides(key: str, side: str) -> None:
    with pytest.raises(DomainError) as error:
        record_principal_decision({}, key, side, "q", None)
    assert bad_input(error)


def test_record_claims_appends_each_claim_once() -> None:
    doc = record_claims({"visitor": {"name": "Mara"}}, "visitor", ["from Nike", "budget 5k"])
    doc = record_claims(doc, "visitor", ["budget 5k", " from Nike ", "", "  ", "new", "new"])
    assert doc == {"visitor": {"name": "Mara", "claims": ["from Nike", "budget 5k", "new"]}}


def test_record_claims_keeps_a_single_existing_claim() -> None:
    doc = record_claims({"visitor": {"claims": "old"}}, "visitor", ["old", "new"])
    assert doc == {"visitor": {"claims": ["old", "new"]}}


def test_record_claims_refuses_a_branch_that_is_not_a_section() -> None:
    with pytest.raises(DomainError) as error:
        record_claims({"visitor": "text"}, "visitor", ["x"])
    assert bad_input(error)


def test_record_claims_refuses_a_pane_that_is_no_participant() -> None:
    with pytest.raises(DomainError) as error:
        record_claims({}, "deal", ["x"])
    assert bad_input(error)


def test_record_ruling_keeps_only_the_ruling_fields() -> None:
    # Only the ruling crosses (ARCHITECTURE "Room memory"): a reason stays behind.
    ruling = {
        "decision": "counter",
        "amount": "4500",
        "currency": "USD",
        "deliverable": "1 reel",
        "reason": "my floor is 4000",
    }
    doc = record_ruling({}, "visitor", ruling, "d-1")
    assert doc == {
        "rulings": {
            "visitor": [
                {
                    "decision": "counter",
                    "amount": "4500",
                    "currency": "USD",
                    "deliverable": "1 reel",
                    "dispatchId": "d-1",
                }
            ]
        }
    }


def test_record_ruling_fills_missing_fields_with_null_and_appends_in_order() -> None:
    doc = record_ruling({}, "visitor", {"decision": "ask"}, "d-1")
    doc = record_ruling(doc, "visitor", {"decision": "settle"}, "d-2")
    assert [r["dispatchId"] for r in doc["rulings"]["visitor"]] == ["d-1", "d-2"]
    assert doc["rulings"]["visitor"][0] == {
        "decision": "ask",
        "amount": None,
        "currency": None,
        "deliverable": None,
        "dispatchId": "d-1",
    }


def test_record_ruling_is_idempotent_on_the_dispatch() -> None:
    doc = record_ruling({}, "visitor", {"decision": "settle"}, "d-1")
    assert record_ruling(doc, "visitor", {"decision": "settle"}, "d-1") == doc


# --- section_paths and select_paths (the context filter) ---

SAMPLE: dict[str, Any] = {
    "host": {"public": {"name": "Dev", "rates": {"reel": "4000"}}, "floor": "3500"},
    "deal": {"deliverables": ["reel"], "fee": "4500"},
    "visitor": {"name": "Mara", "odd key": "x"},
    "goals": {},
}


def test_section_paths_lists_sections_and_values_to_depth_three() -> None:
    assert section_paths(SAMPLE) == [
        "deal",
        "deal.deliverables",
        "deal.fee",
        "goals",
        "host",
        "host.floor",
        "host.public",
        "host.public.name",
        "host.public.rates",
        "visitor",
        "visitor.name",
    ]


def test_section_paths_honours_the_depth() -> None:
    assert section_paths(SAMPLE, max_depth=1) == ["deal", "goals", "host", "visitor"]
    assert section_paths(SAMPLE, max_depth=0) == []
    assert "host.public.rates.reel" in section_paths(SAMPLE, max_depth=4)


def test_select_paths_keeps_whole_subtrees_of_what_it_names() -> None:
    selected = select_paths(SAMPLE, ["host.public", "deal.fee"])
    assert selected == {"host": {"public": SAMPLE["host"]["public"]}, "deal": {"fee": "4500"}}


def test_select_paths_adds_always_and_ignores_unknown_paths() -> None:
    selected = select_paths(
        SAMPLE, ["nope", "host.nope", "deal.fee.x", "bad path", ""], always=["visitor"]
    )
    assert selected == {"visitor": SAMPLE["visitor"]}


def test_select_paths_of_overlapping_paths_keeps_the_larger() -> None:
    assert select_paths(SAMPLE, ["host.public.name", "host.public"]) == {
        "host": {"public": SAMPLE["host"]["public"]}
    }
    assert select_paths(SAMPLE, ["host.public", "host.public.name"]) == {
        "host": {"public": SAMPLE["host"]["public"]}
    }


def test_select_paths_copies() -> None:
    selected = select_paths(SAMPLE, ["deal"])
    selected["deal"]["deliverables"].append("story")
    assert SAMPLE["deal"]["deliverables"] == ["reel"]


@settings(max_examples=150)
@given(
    document=DOCUMENTS,
    paths=st.lists(st.one_of(PATHS, st.text(max_size=6)), max_size=6),
    always=st.lists(PATHS, max_size=2),
)
def test_select_paths_never_fabricates_memory(
    document: dict[str, Any], paths: list[str], always: list[str]
) -> None:
    # A filter narrows; every value it returns is in the document at the same path.
    before = copy.deepcopy(document)
    selected = select_paths(document, paths, always=always)
    assert document == before
    source = leaves(document)
    for path, value in leaves(selected).items():
        assert path in source
        assert source[path] == value


@settings(max_examples=100)
@given(document=DOCUMENTS)
def test_selecting_every_top_level_section_returns_the_document(document: dict[str, Any]) -> None:
    assert select_paths(document, section_paths(document, max_depth=1)) == document


def test_m11_memory_keeps_the_latest_rulings_of_a_pane() -> None:
    doc: dict[str, object] = {}
    for n in range(8):
        doc = record_ruling(doc, "visitor", {"decision": "counter", "amount": str(n)}, f"d-{n}")
    kept = doc["rulings"]["visitor"]  # type: ignore[index]  # a document is free-form JSON
    assert [r["dispatchId"] for r in kept] == ["d-3", "d-4", "d-5", "d-6", "d-7"]


# M14: a writer that reads the host's private branch (the Guard) has every write a visitor-side
# pane can see screened, not only host.public: deal and the visitor's branch included.
GUARDED_DOC: dict[str, Any] = {
    "host": {"limits": {"reel": {"floor": "6137", "currency": "USD"}}},
    "deal": {},
}
GUARD_PREFIXES = ("host", "visitor", "deal")


@pytest.mark.parametrize(
    "change",
    [
        set_("deal.note", "they will not go under 6137"),
        set_("deal.note", "budget near $6,137.01"),
        set_("visitor.hint", "six one three seven"),
    ],
)
def test_a_writer_that_sees_private_values_cannot_put_them_where_a_visitor_reads(
    change: Change,
) -> None:
    result = apply_changes(GUARDED_DOC, [change], allowed=GUARD_PREFIXES, sees_private=True)
    assert result.document == GUARDED_DOC
    assert [r.change for r in result.rejected] == [change]


def test_a_writer_that_sees_private_values_still_writes_the_host_branch_and_clean_deal_facts() -> (
    None
):
    result = apply_changes(
        GUARDED_DOC,
        [set_("host.note", "floor 6137 stands"), set_("deal.deliverable", "one reel")],
        allowed=GUARD_PREFIXES,
        sees_private=True,
        visible=[Said("", "Just one reel, please.")],  # M17: the visitor's side said it
    )
    assert result.document["host"]["note"] == "floor 6137 stands"
    assert result.document["deal"] == {"deliverable": "one reel"}


def test_the_visitor_side_records_its_own_figure_even_when_it_equals_a_floor() -> None:
    # The visitor-side writer never saw the floor: the figure is the visitor's own word.
    result = writer(
        GUARDED_DOC, set_("deal.budget", "6137"), allowed=writable_prefixes("visitor", DEAL)
    )
    assert result.document["deal"] == {"budget": "6137"}


def test_a_refused_deal_write_says_a_visitor_would_read_it() -> None:
    result = apply_changes(
        GUARDED_DOC, [set_("deal.note", "6137")], allowed=GUARD_PREFIXES, sees_private=True
    )
    assert result.rejected[0].reason.startswith("a visitor-side pane would read private values")
