"""How the firewall reads a text before it matches (F7-F9, dealroom.domain.normalise)."""

from __future__ import annotations

import pytest

from dealroom.domain import normalise


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("plain ascii 6137", "plain ascii 6137"),
        ("\uff16\uff11\uff13\uff17", "6137"),
        ("6\u200b1\u200c3\u200d7\u2060", "6137"),
        ("6\u066b137", "6.137"),
        ("6\u066c137", "6,137"),
        ("\u0666\u0661\u0663\u0667", "6137"),
        ("6\u20131\u20143", "6-1-3"),
        ("d\u0435v@zygl\u043erb.c\u043em", "dev@zyglorb.com"),
        ("\uff44\uff45\uff56\uff20\uff58\uff0e\uff43\uff4f", "dev@x.co"),
        ("\U000e0061tag\ufe0f", "tag"),
        ("caf\u00e9", "caf\u00e9"),  # a letter that has no Latin twin is kept
    ],
)
def test_f7_fold(text: str, read: str) -> None:
    assert normalise.fold(text) == read


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("six one three seven", "6 1 3 7"),
        ("Six-One-Three-Seven", "6-1-3-7"),
        ("oh six, nine", "0 6, 9"),
        ("six  thousand\tone - hundred", "six thousand one-hundred"),
        ("one post, then one more", "one post, then one more"),
    ],
)
def test_f8_spell_digits(text: str, read: str) -> None:
    assert normalise.spell_digits(text) == read


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("6-1-3-7", [("6137", True)]),
        ("6, 1, 3, 7", [("6137", True)]),
        ("61 37", [("6137", False)]),
        ("2026-12-06", [("20261206", False)]),
        ("$61.37 and 6,137", []),
        ("QX7-orchid-58213", []),
    ],
)
def test_f8_joined_numbers(text: str, joined: list[tuple[str, bool]]) -> None:
    assert [(run.digits, run.one_by_one) for run in normalise.joined_numbers(text)] == joined


def test_f9_unspell_at_dot() -> None:
    assert normalise.unspell_at_dot("dev [at] x [dot] com").split() == [
        "dev",
        "[",
        "]",
        "x",
        "[",
        "]",
        "com",
    ]
