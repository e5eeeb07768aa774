"""Offer-Gen: when the ``new-offer`` goal is ruled met, a specialist extracts the agreed terms
into the written offer (seed 000 "Records are made by a specialist, and projected rather than
copied"). Memory keeps only a reference to the offer; the offer's fields come from here.

The offer is shown to the visitor, so Offer-Gen reads only what the visitor's side may see:
the visitor pane's conversation with the host's agent, the rulings that crossed into that
pane and the visitor-visible memory — never the host's private pane. Its output is checked
by :func:`to_terms` before anything is stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.render import Line, Party, document, transcript
from dealroom.domain import money, offer_stage
from dealroom.domain.errors import DomainError

MAX_TEXT: Final = 300
"""Characters kept of any one extracted string; the rest is dropped."""
MAX_ITEMS: Final = 20
"""Items kept of any extracted list; the rest are dropped."""

# The questions code and the offline engine name, worded once so they deduplicate.
OPEN_FEE: Final = "Fee: what amount was agreed?"
OPEN_CURRENCY: Final = "Fee: in which currency?"
OPEN_DELIVERABLES: Final = "Deliverables: what exactly will be delivered?"
OPEN_PAYMENT_SCHEDULE: Final = "Payment schedule: how much of the fee is due at booking?"
OPEN_DATES: Final = "Dates: when will the work be delivered?"
OPEN_USAGE_RIGHTS: Final = "Usage rights: how may the brand use the content, and for how long?"
OPEN_EXCLUSIVITY: Final = "Exclusivity: is there any exclusivity, and for how long?"


class OfferGenOutput(BaseModel):
    """The terms both sides agreed, as written in the conversation. Every field is required
    so the model decides each one; what was not agreed is null or empty and named in
    ``open_questions``."""

    model_config = ConfigDict(extra="forbid")

    deliverables: list[str] = Field(
        description="What the seller will deliver, one item each, e.g. 'sponsored post'."
    )
    fee_amount: str | None = Field(
        description=(
            "The agreed fee in plain decimal digits, e.g. '8000' or '8000.50'; "
            "null if no fee was agreed."
        )
    )
    currency: str | None = Field(
        description="ISO 4217 code of the fee, upper case, e.g. 'USD'; null if not agreed."
    )
    dates: list[str] = Field(
        description=(
            "Agreed dates: ISO dates (YYYY-MM-DD) when the year is known, else the words used."
        )
    )
    usage_rights: str | None = Field(
        description="How the buyer may use the content, in the words agreed; null if not agreed."
    )
    exclusivity: str | None = Field(
        description="Any exclusivity agreed, in the words agreed; null if not agreed."
    )
    due_slice_percent: str | None = Field(
        description=(
            "Percent of the fee due at booking, digits only, e.g. '50'; null if the "
            "payment schedule was not discussed."
        )
    )
    open_questions: list[str] = Field(
        description="Terms the conversation did not settle, each named as a short question."
    )


PROMPT = """You write down the terms of a deal exactly as both sides agreed them in a
conversation between a buyer (the visitor) and the seller's agent. The result becomes a
written offer that both sides read and approve, so it must hold only what was agreed.

Rules:
- Extract only terms both sides agreed in the conversation: a term one side proposed and the
  other accepted, or a ruling that crossed to the buyer and that the buyer accepted. An
  amount that was only proposed, countered or asked about is not agreed.
- Anything not agreed is null (or an empty list) and is named in `open_questions` as a short
  question. Never invent, estimate or fill in a term; never assume a default.
- `fee_amount` is plain decimal digits with no symbol or separators; `currency` is the ISO
  4217 code. `dates` are YYYY-MM-DD when the year is known, else the words used.
- `due_slice_percent` is the percent of the fee due at booking, only if the payment schedule
  was discussed; otherwise null.
- CURRENT WRITTEN TERMS, when shown, are the live written offer being rewritten: keep a term
  from them unless the conversation changed it.
- Never state, infer or mention a deal stage; never call anything booked, approved or paid.
- Reply with JSON matching the schema.
"""

SYSTEM = f"{PROMPT}\n{offer_stage.vocabulary()}"


@dataclass(frozen=True, slots=True)
class OfferGenInput:
    """Everything Offer-Gen may see: the visitor's side of the deal only."""

    represents: Party
    """The host (seller), whom the agent in the visitor's pane represents."""
    counterparty: Party
    """The visitor (buyer)."""
    memory: Mapping[str, Any]
    """Already visibility-filtered for the visitor's pane by the caller."""
    transcript: Sequence[Line]
    """The visitor pane's recent lines (participant and agent)."""
    rulings: Sequence[Mapping[str, Any]]
    """Rulings delivered to the visitor's pane: ``{decision, amount, currency, deliverable}``."""
    current_terms: Mapping[str, Any] | None
    """The live written offer's terms, when rewriting one."""
    stage: offer_stage.Stage
    today: date | None = None
    """The service clock's date: what "in March" or "next Friday" resolve against."""


def build(inputs: OfferGenInput, *, model: str) -> ModelRequest:
    context: dict[str, Any] = {
        "agent": AgentName.OFFER_GEN.value,
        "represents": inputs.represents.to_json(),
        "counterparty": inputs.counterparty.to_json(),
        "memory": dict(inputs.memory),
        "transcript": [line.to_json() for line in inputs.transcript],
        "rulings": [dict(ruling) for ruling in inputs.rulings],
        "current_terms": dict(inputs.current_terms) if inputs.current_terms is not None else None,
        "stage": {"stage": inputs.stage.value, "gloss": offer_stage.GLOSSES[inputs.stage]},
    }
    if inputs.today is not None:
        context["today"] = inputs.today.isoformat()
    seller, buyer = inputs.represents.name, inputs.counterparty.name
    current = (
        document(context["current_terms"])
        if context["current_terms"] is not None
        else "(none: no written offer yet)"
    )
    prompt = "\n\n".join(
        [
            f"SELLER: {seller} (the host). BUYER: {buyer} (the visitor)."
            + (f" TODAY: {inputs.today.isoformat()}." if inputs.today is not None else ""),
            f"CONVERSATION between {buyer} and {seller}'s agent:\n"
            + transcript(inputs.transcript, participant=buyer, agent=f"{seller}'s agent"),
            f"RULINGS DELIVERED TO {buyer}:\n{document(context['rulings'])}",
            f"MEMORY (what {buyer}'s side may know):\n{document(context['memory'])}",
            f"CURRENT WRITTEN TERMS:\n{current}",
            offer_stage.deal_stage_block(inputs.stage),
        ]
    )
    # The offer is shown to the visitor: confidentiality checks treat this call as theirs.
    return ModelRequest(
        agent=AgentName.OFFER_GEN,
        model=model,
        system=SYSTEM,
        prompt=prompt,
        context=context,
        output=OfferGenOutput,
        visitor_facing=True,
    )


# --- the code check: model output → the offers row's terms -----------------------------------


@dataclass(frozen=True, slots=True)
class ExtractedTerms:
    terms: dict[str, Any] | None
    """The offers row's terms (camelCase JSON); None when no fee, currency and deliverable
    could all be found."""
    open_questions: tuple[str, ...]


_CURRENCY = re.compile(r"[A-Z]{3}")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_CENT: Final = Decimal("0.01")


def _text(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()[:MAX_TEXT].strip()
    return text or None


def _texts(values: Iterable[str]) -> list[str]:
    """Stripped, non-empty, deduplicated (case-insensitively, first spelling kept), capped."""
    kept: list[str] = []
    seen: set[str] = set()
    for value in values:
        text = _text(value)
        if text is None or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        kept.append(text)
    return kept[:MAX_ITEMS]


def _number(text: str | None) -> Decimal | None:
    """A finite number as written (commas allowed), or None."""
    if text is None:
        return None
    try:
        value = Decimal(text.strip().replace(",", ""))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _decimal(text: str | None) -> Decimal | None:
    """A finite number with at most two decimals, or None."""
    value = _number(text)
    try:
        return value if value is not None and value == value.quantize(_CENT) else None
    except InvalidOperation:  # too many digits for the context: not a number anyone wrote
        return None


def _fee(text: str | None, currency: str | None) -> Decimal | None:
    """A positive amount exact in the currency's minor unit (two decimals while the currency
    is unknown), or None: a fee of 8000.50 JPY is not one anyone can pay."""
    value = _number(text)
    if value is None or value <= 0 or value >= money.MAX_AMOUNT:
        return None
    try:
        exact = money.quantize(value, currency) if currency else value.quantize(_CENT)
    except (InvalidOperation, DomainError):
        return None
    return value if value == exact else None


def _plain(value: Decimal) -> str:
    """Digits only, no exponent: ``50``, ``33.5``."""
    text = f"{value.quantize(_CENT):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _valid_date(text: str) -> bool:
    if not _ISO_DATE.fullmatch(text):
        return True  # the words used ("early December"): kept as written
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def to_terms(output: OfferGenOutput) -> ExtractedTerms:
    """Validate a model's extraction into the offers row's terms. What fails a check is
    treated as not found and named as an open question, never repaired by a guess."""
    questions: list[str] = []
    deliverables = _texts(output.deliverables)
    if not deliverables:
        questions.append(OPEN_DELIVERABLES)

    currency = (output.currency or "").strip().upper()
    known = _CURRENCY.fullmatch(currency) is not None and money.is_currency(currency)
    fee = _fee(output.fee_amount, currency if known else None)
    if fee is None:
        questions.append(OPEN_FEE)
    if not known:
        questions.append(OPEN_CURRENCY)

    raw_dates = _texts(output.dates)
    dates = [text for text in raw_dates if _valid_date(text)]
    if len(dates) < len(raw_dates):
        questions.append(OPEN_DATES)

    percent = _decimal((output.due_slice_percent or "").strip().removesuffix("%") or None)
    if percent is None or not Decimal(0) < percent <= Decimal(100):
        # Code applies the platform default (100% due at booking) and says so where it does.
        percent = None
        questions.append(OPEN_PAYMENT_SCHEDULE)

    questions = _texts([*questions, *output.open_questions])
    if fee is None or not known or not deliverables:
        return ExtractedTerms(terms=None, open_questions=tuple(questions))
    terms: dict[str, Any] = {
        "deliverables": deliverables,
        "fee": {"amount": money.format_amount(fee, currency), "currency": currency},
        "dates": dates,
        "usageRights": _text(output.usage_rights),
        "exclusivity": _text(output.exclusivity),
        "dueSlicePercent": _plain(percent) if percent is not None else None,
    }
    return ExtractedTerms(terms=terms, open_questions=tuple(questions))
