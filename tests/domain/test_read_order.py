"""RO1: a pane's lines in the order they were read: each answered post just before its reply."""

from __future__ import annotations

from dealroom.domain.read_order import as_answered, reordered


def test_a_post_answered_after_a_later_line_moves_before_its_reply() -> None:
    ids = ["bid", "ack", "yes", "counter", "reply"]
    order = as_answered(ids, {"yes": "reply"})
    assert reordered(ids, order) == ["bid", "ack", "counter", "yes", "reply"]


def test_posts_answered_in_place_keep_their_place() -> None:
    ids = ["bid", "ack", "yes", "reply"]
    assert as_answered(ids, {"bid": "ack", "yes": "reply"}) == [0, 1, 2, 3]


def test_a_reply_outside_the_window_leaves_the_post_alone() -> None:
    ids = ["yes", "counter"]
    assert as_answered(ids, {"yes": "gone", "gone": "counter"}) == [0, 1]


def test_two_posts_answered_by_one_reply_keep_their_own_order() -> None:
    ids = ["a", "b", "counter", "reply"]
    assert reordered(ids, as_answered(ids, {"b": "reply", "a": "reply"})) == [
        "counter",
        "a",
        "b",
        "reply",
    ]
