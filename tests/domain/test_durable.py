"""The durable-memory rules D1-D8 (dealroom.domain.durable), pure."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dealroom.domain import durable, pane_words
from dealroom.domain import memory as memdoc
from dealroom.domain.durable import LeafChange, SystemLineKind
from dealroom.domain.provenance import Said
from dealroom.domain.seats import RoomKind, RoomMode

DOC = {
    "rates": {"post": {"ask": "8000 USD", "floor": "6000 USD"}},
    "rules": ["no alcohol"],
    "style": "brief",
}

_key = st.sampled_from(["a", "b", "c"])
_docs = st.recursive(
    st.one_of(st.text(max_size=3), st.lists(st.text(max_size=2), max_size=2)),
    lambda children: st.dictionaries(_key, children, max_size=3),
    max_leaves=8,
).filter(lambda d: isinstance(d, dict))


def test_d1_only_real_changes_are_changes() -> None:
    assert durable.diff(DOC, {**DOC}) == []
    after = {**DOC, "rates": {"post": {"ask": "8000 USD", "floor": "6500 USD"}}}
    assert durable.diff(DOC, after) == [LeafChange("rates.post.floor", "6000 USD", "6500 USD")]
    assert durable.diff(DOC, {**DOC, "rules": ["no alcohol", "no gambling"]}) == [
        LeafChange("rules", ["no alcohol"], ["no alcohol", "no gambling"])
    ]
    gone = {k: v for k, v in DOC.items() if k != "style"}
    assert durable.diff(DOC, gone) == [LeafChange("style", "brief", None)]


@given(_docs, _docs)
def test_d1_applying_a_diff_leaf_by_leaf_gives_the_other_document(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    rebuilt = durable.prune(dict(a))
    for change in durable.diff(a, b):
        durable.set_leaf(rebuilt, change.path, change.new)
    assert durable.leaves(durable.prune(rebuilt)) == durable.leaves(b)


def test_d2_durable_paths() -> None:
    assert durable.durable_path_allowed("rates.post.floor")
    assert durable.durable_path_allowed("deals.x.fee")
    for path in (
        "host.rates",
        "visitor.name",
        "goals.new-offer",
        "plans.host",
        "claims",
        "rules.claims",
        "pendingPrincipalDecisions.x",
        "offers.x",
        "rulings",
    ):
        assert not durable.durable_path_allowed(path), path


def test_d3_related_paths() -> None:
    assert durable.related("rates.post.floor", ["rates.post.floor"])
    assert durable.related("rates.post", ["rates.post.floor"])
    assert durable.related("rates.post.floor.x", ["rates.post.floor"])
    assert not durable.related("rates.postcard", ["rates.post"])


def test_d4_merge_takes_the_account_value_for_changed_leaves_only() -> None:
    branch = {
        "rates": {"post": {"ask": "7000 USD", "floor": "4000 USD"}},
        "notes": "this room only",
    }
    merged, changes = durable.merge(branch, DOC, ["rates.post.floor"])
    assert merged == {
        "rates": {"post": {"ask": "7000 USD", "floor": "6000 USD"}},
        "notes": "this room only",
    }
    assert changes == [LeafChange("rates.post.floor", "4000 USD", "6000 USD")]
    # Never merged before: every durable leaf, account wins, the room's own leaves stay.
    merged, changes = durable.merge(branch, DOC, None)
    assert merged == {**DOC, "notes": "this room only"}
    assert [c.path for c in changes] == ["rates.post.ask", "rates.post.floor", "rules", "style"]
    # A leaf the account removed is removed; a reserved or foreign path is never written.
    merged, changes = durable.merge(
        {"style": "brief"}, {"goals": {"x": "met"}}, ["style", "goals.x"]
    )
    assert merged == {}
    assert changes == [LeafChange("style", "brief", None)]


def test_d5_who_is_merged_and_where_arvist_runs() -> None:
    assert durable.merge_due(RoomKind.DEAL, RoomMode.LIVE, "host")
    assert not durable.merge_due(RoomKind.DEAL, RoomMode.LIVE, "visitor")
    assert durable.merge_due(RoomKind.DEAL, RoomMode.DEMO, "host")
    assert not durable.merge_due(RoomKind.DEAL, RoomMode.SCRIPTED, "host")
    assert durable.merge_due(RoomKind.HOME, RoomMode.LIVE, "host")
    assert durable.arvist_runs(RoomMode.LIVE)
    assert not durable.arvist_runs(RoomMode.DEMO)
    assert not durable.arvist_runs(RoomMode.SCRIPTED)


def test_d6_revert_conflicts_only_when_the_leaf_moved_on() -> None:
    assert not durable.revert_conflicts(DOC, "rates.post.floor", "6000 USD")
    assert durable.revert_conflicts(DOC, "rates.post.floor", "6500 USD")
    assert not durable.revert_conflicts(DOC, "missing", None)
    assert durable.revert_conflicts(DOC, "style", None)


def test_the_merge_line_and_its_kind() -> None:
    changes = [LeafChange(f"rules.r{i}", None, f"rule {i}") for i in range(10)]
    line = durable.merged_line(changes)
    assert line.startswith("Standing knowledge merged from your profile: your rules (r0): rule 0; ")
    assert line.endswith("and 2 more.")
    key = durable.merge_line_key("p1", 4)
    assert durable.system_line_kind(key) is SystemLineKind.MEMORY_MERGED
    assert durable.system_line_kind("run:x:fail:1") is SystemLineKind.NOTICE  # an older key
    run, queued = uuid.uuid4(), datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
    failed = durable.turn_failed_key(run, queued)
    assert durable.system_line_kind(failed) is SystemLineKind.TURN_FAILED
    again = durable.turn_failed_key(run, queued, again=True)
    assert durable.system_line_kind(again) is SystemLineKind.TURN_RETRYING
    assert len(again) <= 64  # messages.client_message_id
    assert durable.system_line_kind(None) is SystemLineKind.NOTICE


def test_the_merge_line_is_in_peoples_words() -> None:
    """PW1: the pane log refuses a line naming a field (``private_terms``): the merge line says
    each leaf in words, and a value quoting a label is said as people say it."""
    changes = [
        LeafChange("private_terms", None, ["no alcohol", "no politics"]),
        LeafChange("limits.sponsored_post.floor", "4000", "6000"),
        LeafChange("public.rateCard", None, "posts from 9500 USD, openQuestions welcome"),
    ]
    line = durable.merged_line(changes)
    assert line == (
        "Standing knowledge merged from your profile: your private terms: no alcohol, "
        "no politics; your limits (sponsored post floor): 6000; what you made public "
        "(rate card): posts from 9500 USD, welcome."
    )
    assert pane_words.labels_in(line) == []
    pane_words.refuse_labels(line)


def test_d7_a_public_leaf_stating_a_private_value_is_dropped_and_named() -> None:
    branch: dict[str, Any] = {
        "limits": {"post": {"floor": "6137", "currency": "USD"}},
        "contact": "dev@studio.example",
        "public": {
            "card": "posts from 9500 USD",
            "notes": {"low": "six thousand one hundred thirty-seven at a push"},
            "mail": ["write to DEV@studio.example"],
            "floor_6137": "ask me",  # a key reaches a visitor's prompt too
        },
    }
    screened, dropped = durable.screen_public(branch)
    assert screened["public"] == {"card": "posts from 9500 USD"}
    assert sorted(dropped) == ["public.floor_6137", "public.mail", "public.notes.low"]
    assert branch["public"]["notes"]  # the input is not touched
    held, dropped = durable.screen_public(
        {"public": {"card": "9,400 USD"}}, withheld=[Decimal(9400)]
    )
    assert dropped == ["public.card"]
    assert "public" not in held
    assert durable.screen_public({"public": {"card": "9400"}}) == ({"public": {"card": "9400"}}, [])


def test_d8_the_curator_is_held_to_the_writers_limit_and_public_rules() -> None:
    document = {"limits": {"post": {"floor": "6137", "currency": "USD"}}}
    applied = durable.curate(
        document,
        [
            memdoc.Change(memdoc.Op.SET, "public.note", "I take 6,137"),
            memdoc.Change(memdoc.Op.SET, "limits.story", "never below 2400"),
            memdoc.Change(memdoc.Op.SET, "limits.reel", '{"floor": "3000", "currency": "usd"}'),
            memdoc.Change(memdoc.Op.APPEND, "private_terms", "no alcohol"),
            memdoc.Change(memdoc.Op.SET, "public.card", "posts from 9500 USD"),
        ],
        # M15: the principal said both public notes may be shared; the firewall still decides
        said=[Said("m-1", "Share this: I take 6,137. Rate card: posts from 9500 USD.")],
    )
    assert applied.document == {
        "limits": {
            "post": {"floor": "6137", "currency": "USD"},
            "reel": {"floor": "3000", "currency": "USD"},
        },
        "private_terms": [{"text": "no alcohol", "source": None}],
        "public": {"card": "posts from 9500 USD"},
    }
    refused = {r.change.path: r.reason for r in applied.rejected}
    assert set(refused) == {"public.note", "limits.story"}
    assert refused["public.note"].startswith(memdoc.PUBLIC_REFUSAL)
    assert document == {"limits": {"post": {"floor": "6137", "currency": "USD"}}}
