"""The agreement writer's rules: a fixed template filled from the offer's fields alone, so
the draft states each term exactly as the offer holds it and nothing more."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from dealroom.agents.agreement import (
    NOT_SPECIFIED,
    AgreementOutput,
    AgreementSection,
    schedule,
)
from dealroom.agents.models.offline.common import _map, _str, _strings
from dealroom.domain.terms import format_money

_HUNDRED = Decimal(100)


def _percent(value: Decimal) -> str:
    return f"{value.normalize():f}%"


def _listed(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items) if items else f"{NOT_SPECIFIED}."


def _payment(terms: Mapping[str, Any]) -> str:
    money = schedule(terms)
    if money.percent is None:
        return f"{NOT_SPECIFIED}."
    if money.fee is None or money.due is None:
        return (
            f"{_percent(money.percent)} of the fee is due at booking. "
            f"The fee itself is {NOT_SPECIFIED.lower()}."
        )
    if money.percent == _HUNDRED:
        return f"The whole fee ({format_money(money.fee)}) is due at booking."
    due = f"{_percent(money.percent)} of the fee ({format_money(money.due)}) is due at booking."
    remaining = money.remaining
    rest = _percent(_HUNDRED - money.percent)
    shown = f" ({format_money(remaining)})" if remaining is not None else ""
    return f"{due} The offer does not specify when the remaining {rest}{shown} is due."


def agreement_output(context: Mapping[str, Any]) -> AgreementOutput:
    terms = _map(context.get("terms"))
    seller = _str(context.get("seller")) or "the Talent"
    buyer = _str(context.get("buyer")) or "the Brand"
    version = context.get("version")
    money = schedule(terms)
    fee = (
        f"{buyer} will pay {seller} a fee of {format_money(money.fee)} for the services."
        if money.fee is not None
        else f"{NOT_SPECIFIED}."
    )
    usage = _str(terms.get("usageRights")).strip()
    exclusivity = _str(terms.get("exclusivity")).strip()
    sections = [
        ("Parties", f'{seller} ("the Talent") and {buyer} ("the Brand").'),
        ("Services", _listed(_strings(terms.get("deliverables")))),
        ("Fee", fee),
        ("Payment schedule", _payment(terms)),
        ("Dates", _listed(_strings(terms.get("dates")))),
        ("Usage rights", usage or f"{NOT_SPECIFIED}."),
        ("Exclusivity", exclusivity or f"{NOT_SPECIFIED}."),
        (
            "Draft notice",
            f"This is a draft drawn only from version {version} of the written offer, for "
            "review by a lawyer. It is not legal advice and adds no term the offer does not "
            "hold.",
        ),
    ]
    return AgreementOutput(
        title=f"Draft services agreement between {seller} and {buyer}",
        sections=[AgreementSection(heading=h, body=b) for h, b in sections],
    )
