"""The agreement writer: turns a written offer into a lawyer-reviewable English draft (seed
000 "Records are made by a specialist, and projected rather than copied").

It receives only the offer's commercial fields and the parties — never the transcript or
memory — so the draft cannot re-interpret the chat, and stays current by the offer's
fingerprint rather than by reading the room again. :func:`invented_terms` is the code check
that the draft adds no amount, percentage or date the offer did not already hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import document
from dealroom.domain import firewall
from dealroom.domain.terms import (
    DateMention,
    Money,
    find_amount_mentions,
    find_dates,
    format_money,
)

NOT_SPECIFIED: Final = "Not specified in the offer"


class AgreementSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    heading: str = Field(description="The section's heading, e.g. 'Fee', without a number.")
    body: str = Field(description="The section's text, in plain English.")


class AgreementOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(description="The draft's title.")
    sections: list[AgreementSection] = Field(
        description=(
            "In order: parties, services, fee, payment schedule, dates, usage rights, "
            "exclusivity, then a note that this is a draft for lawyer review."
        )
    )


PROMPT = f"""You draft a short services agreement in plain English from a written offer between
a seller (the talent) and a buyer (the brand). A lawyer will review the draft; it is a draft,
not legal advice, and says so in a last section.

Rules:
- Use only the offer's fields shown below. Never add a term the offer does not hold: no
  amount, percentage, date, deadline, penalty, jurisdiction or obligation of your own.
- Sections, in order: Parties; Services (the deliverables); Fee; Payment schedule
  (`dueSlicePercent` is the percent of the fee due at booking; when it is below 100 the offer
  does not say when the rest is due, so say that); Dates; Usage rights; Exclusivity; Draft
  notice.
- Where a field is missing or null, write "{NOT_SPECIFIED}" for it.
- Write each amount exactly as AMOUNTS writes it (the one money format people read in chat
  and on the offer card). Do not mention any platform or service fee: that is
  between the brand and the platform, not part of this agreement.
- Do not describe where the deal stands, and never call it booked, approved or paid.
- Reply with JSON matching the schema.
"""

SYSTEM = PROMPT


@dataclass(frozen=True, slots=True)
class AgreementInput:
    """Everything the agreement writer may see: the offer, never the room."""

    offer_id: str
    version: int
    seller: str
    """Display name of the host (talent)."""
    buyer: str
    """Display name of the visitor (brand)."""
    terms: Mapping[str, Any]
    """The offer's terms (see ``offer_gen.to_terms``)."""


def _amounts(terms: Mapping[str, Any]) -> str:
    """The offer's figures as people read them (P10 in ``domain/money.py``)."""
    money = schedule(terms)
    named = [("fee", money.fee), ("due at booking", money.due), ("the rest", money.remaining)]
    shown = [f"{name} {format_money(m)}" for name, m in named if m is not None]
    return "; ".join(shown) or NOT_SPECIFIED


def build(inputs: AgreementInput, *, model: str) -> ModelRequest:
    context: dict[str, Any] = {
        "agent": AgentName.AGREEMENT.value,
        "offer_id": inputs.offer_id,
        "version": inputs.version,
        "seller": inputs.seller,
        "buyer": inputs.buyer,
        "terms": dict(inputs.terms),
    }
    prompt = "\n\n".join(
        [
            f"OFFER {inputs.offer_id}, VERSION {inputs.version}.",
            f"SELLER (talent): {inputs.seller}. BUYER (brand): {inputs.buyer}.",
            f"OFFER FIELDS:\n{document(context['terms'])}",
            f"AMOUNTS: {_amounts(inputs.terms)}",
        ]
    )
    # Not visitor-facing in the confidentiality sense: its only input is the offer, which
    # both sides already see.
    return ModelRequest(
        agent=AgentName.AGREEMENT,
        model=model,
        system=SYSTEM,
        prompt=prompt,
        context=context,
        output=AgreementOutput,
        visitor_facing=False,
    )


def render(output: AgreementOutput) -> str:
    """The draft as plain text: the title, a blank line, then numbered sections."""
    sections = [
        f"{number}. {section.heading.strip()}\n{section.body.strip()}"
        for number, section in enumerate(output.sections, start=1)
    ]
    return "\n\n".join([output.title.strip(), *sections])


# --- the code check: nothing invented --------------------------------------------------------

_PERCENT = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)\s?(?:%|per\s?cent\b)", re.IGNORECASE)
_PERCENT_AFTER = re.compile(r"\s?(?:%|per\s?cent\b)", re.IGNORECASE)
_CENT: Final = Decimal("0.01")
_HUNDRED: Final = Decimal(100)
_IDENTIFIER = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE
)
"""An id the draft may quote (its offer's, which its prompt opens with): its digits are not an
amount, or "OFFER 955574bc-…" would read as $955,574 and refuse a sound draft."""


def _without_ids(text: str) -> str:
    """``text`` with each id blanked, every other character where it was."""
    return _IDENTIFIER.sub(lambda found: " " * len(found.group()), text)


@dataclass(frozen=True, slots=True)
class Schedule:
    """The money of an offer as a draft may state it."""

    fee: Money | None
    percent: Decimal | None
    """Percent of the fee due at booking; None when the offer does not say."""

    @property
    def due(self) -> Money | None:
        """The due slice: ``fee × percent / 100`` rounded half up to the cent (the whole fee
        when the percent is not given)."""
        if self.fee is None:
            return None
        if self.percent is None:
            return self.fee
        exact = self.fee.amount * self.percent / _HUNDRED
        return Money(exact.quantize(_CENT, rounding=ROUND_HALF_UP), self.fee.currency)

    @property
    def remaining(self) -> Money | None:
        """What of the fee is not due at booking (``fee - due``); None when nothing is."""
        due = self.due
        if self.fee is None or due is None or due.amount >= self.fee.amount:
            return None
        return Money(self.fee.amount - due.amount, self.fee.currency)


def _number(value: object) -> Decimal | None:
    if not isinstance(value, str | int):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def schedule(terms: Mapping[str, Any]) -> Schedule:
    fee_field = terms.get("fee")
    fee: Money | None = None
    if isinstance(fee_field, Mapping):
        amount = _number(fee_field.get("amount"))
        currency = fee_field.get("currency")
        if amount is not None and amount > 0 and isinstance(currency, str) and currency:
            fee = Money(amount, currency.upper())
    percent = _number(terms.get("dueSlicePercent"))
    if percent is not None and not Decimal(0) < percent <= _HUNDRED:
        percent = None
    return Schedule(fee, percent)


def _offer_texts(terms: Mapping[str, Any]) -> Iterator[str]:
    """The offer's own words (deliverables, dates, usage rights, exclusivity): a figure the
    offer itself writes there is the offer's, not an invention."""
    for key in ("deliverables", "dates"):
        value = terms.get(key)
        if isinstance(value, list | tuple):
            yield from (item for item in value if isinstance(item, str))
    for key in ("usageRights", "exclusivity"):
        value = terms.get(key)
        if isinstance(value, str):
            yield value


def _percents(text: str) -> list[Decimal]:
    return [Decimal(match.group(1)) for match in _PERCENT.finditer(text)]


def _date_matches(written: DateMention, offered: DateMention) -> bool:
    """The same day; a year the offer gives may be left out, but never one it does not."""
    if (written.month, written.day) != (offered.month, offered.day):
        return False
    return written.year is None or written.year == offered.year


def invented_terms(text: str, terms: Mapping[str, Any]) -> list[str]:
    """Every amount, percentage and date in ``text`` that the offer does not hold, described
    for a person; ``[]`` when the draft is clean. The platform fee is not part of the
    agreement, so a 20% in the draft is an invention unless the offer's own schedule has it."""
    money = schedule(terms)
    currency = money.fee.currency if money.fee is not None else "USD"
    own = list(_offer_texts(terms))
    allowed_amounts = {
        (m.amount, m.currency) for m in (money.fee, money.due, money.remaining) if m is not None
    }
    if money.fee is not None and money.percent is not None:
        exact = money.fee.amount * money.percent / _HUNDRED
        allowed_amounts |= {(exact, currency), (money.fee.amount - exact, currency)}
    for words in own:
        allowed_amounts |= {
            (m.money.amount, m.money.currency)
            for m in find_amount_mentions(words, default_currency=currency)
        }
    allowed_percents = {_HUNDRED}
    if money.percent is not None:
        allowed_percents |= {money.percent, _HUNDRED - money.percent}
    for words in own:
        allowed_percents.update(_percents(words))
    offered_dates = [found for words in own for found in find_dates(words)]

    text = _without_ids(text)  # quoting the offer's id does not price anything
    invented: list[str] = []
    for mention in find_amount_mentions(text, default_currency=currency):
        if _PERCENT_AFTER.match(text, mention.end):
            continue  # "fee of 100%" is a percentage, checked below
        found = mention.money
        if (found.amount, found.currency) not in allowed_amounts:
            written = text[mention.start : mention.end].strip()
            shown = format_money(found)
            read = written if written == shown else f"{written} (read as {shown})"
            invented.append(f"amount {read} is not the offer's fee or a slice of it")
    for percent in _percents(text):
        if percent not in allowed_percents:
            invented.append(f"percentage {percent.normalize():f}% is not in the offer's schedule")
    for day in find_dates(text):
        if not any(_date_matches(day, offered) for offered in offered_dates):
            invented.append(f"date {day.label()} is not one of the offer's dates")
    return invented


def private_values(
    memory: Mapping[str, Any],
    text: str,
    terms: Mapping[str, Any],
    band_percent: Decimal | None = None,
) -> list[firewall.Match]:
    """The host's private values (firewall F1-F5) a draft of the offer with ``terms`` states;
    empty when it may be stored and shown to the brand. The figures the principal instructed
    in this room (F4) are allowed, and so are the payment schedule's figures: the share due at
    booking and the rest are code's arithmetic on the fee, which was screened when the offer
    was drawn, so a schedule figure that happens to equal a floor reveals nothing."""
    money = schedule(terms)
    derived = {m.amount for m in (money.due, money.remaining) if m is not None}
    allowed = firewall.instructed_amounts(memory) | derived
    return firewall.check(memory, text, allowed_amounts=allowed, band_percent=band_percent)
