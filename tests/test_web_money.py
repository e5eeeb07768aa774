"""The web client writes money only as the server's display strings (P10, L3): the offer card
shows ``display`` / ``*Display`` fields, which the server writes in the reader's locale, and
formats no amount itself."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OFFER = ROOT / "web" / "src" / "offer.tsx"

# What a client would use to write an amount itself, or a raw data field put on screen.
_OWN_FORMATTING = re.compile(
    r"Intl\.NumberFormat|toLocaleString\(\s*[^)]|toFixed\(|currencyDisplay|"
    r"\{\s*\w+(?:\.fee)?\.(?:amount|total|due|platformFee|remaining)\s*\}"
)


def own_formatting(source: str) -> list[str]:
    return [m.group(0) for m in _OWN_FORMATTING.finditer(source)]


def test_the_offer_card_shows_the_servers_display_strings() -> None:
    source = OFFER.read_text(encoding="utf-8")
    for field in ("fee.display", "dueDisplay", "platformFeeDisplay", "totalDisplay"):
        assert field in source, field
    assert own_formatting(source) == []
    documents = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "web" / "src").glob("*.graphql")
    )
    for field in ("display", "dueDisplay", "platformFeeDisplay", "totalDisplay"):
        assert re.search(rf"\b{field}\b", documents), field


def test_the_check_finds_a_client_formatting_money_itself() -> None:
    for forged in (
        "<dd>{new Intl.NumberFormat('en-US', {style: 'currency'}).format(n)}</dd>",
        "<dd>{Number(q.total).toFixed(2)}</dd>",
        "<dd>{q.total}</dd>",
        "<dd>{t.fee.amount}</dd>",
    ):
        assert own_formatting(forged), forged
