"""A principal's instruction and the terms it covered: given on the terms as they stood, it
lapses when they move (seed 000: a chat yes can be withdrawn when the terms move).

An instruction is ``pendingPrincipalDecisions.<key>.principalInstruction`` (memory's reserved
part, written by code: ``memory_records``). While it stands, the firewall spares its figures
(F4) and the agent may settle on it; once lapsed, neither. Numbered rules, cited by the code
and tests that depend on them:

- PI1 An instruction covers the terms on record when code records it (``covers``): every
      amount and deliverable of the deal on either side, the visitor's (``deal``, each
      visitor's branch) and the host's (the rulings that crossed).
- PI2 It lapses when a term it did not cover comes on record: an amount neither covered nor
      named by the instruction (acting on it, a settle at its figure, is no move), or a new
      deliverable or quantity. Removals are no move (memory keeps the latest rulings only).
- PI3 A lapse is recorded by code in the entry (``lapsed``: the reason, naming the new terms);
      a lapsed instruction spares nothing and covers nothing, whether or not the lapse was
      recorded yet (``standing`` checks the terms itself).
- PI4 An instruction read again (the same message of the principal's, ``source``: the latest
      stating its figures; or, naming none, the same words to the same question) is the one
      already recorded: a writer re-reading the session neither renews its ``covers`` nor
      lifts its lapse. A new message replaces it, covering the terms then on record.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from dealroom.domain.amounts_in_text import money_amounts, stated_amounts
from dealroom.domain.provenance import Said

DECISIONS: Final = "pendingPrincipalDecisions"
INSTRUCTION: Final = "principalInstruction"
COVERS: Final = "covers"
SOURCE: Final = "source"
LAPSED: Final = "lapsed"
DEAL: Final = "deal"
RULINGS: Final = "rulings"
NOT_VISITOR_BRANCHES: Final = frozenset(
    {"host", "goals", "plans", DECISIONS, "offers", "sent", "deliveries", RULINGS, DEAL}
)
"""PI1: top-level parts that are not a visitor's own branch (the host's, and the reserved
parts; ``deal`` and the rulings are read on their own)."""
_BRANCH_KEY: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
_QUANTITY_KEYS: Final = frozenset({"quantity", "count"})


@dataclass(frozen=True, slots=True)
class Terms:
    """The deal's terms on record: amounts (normalised) and deliverables (slugs, with their
    quantity as ``slug x N`` when one is recorded)."""

    amounts: frozenset[Decimal]
    deliverables: frozenset[str]

    def to_json(self) -> dict[str, list[str]]:
        return {
            "amounts": sorted(f"{a:f}" for a in self.amounts),
            "deliverables": sorted(self.deliverables),
        }

    @classmethod
    def of(cls, raw: object) -> Terms | None:
        if not isinstance(raw, Mapping):
            return None
        amounts = set()
        for text in _strings(raw.get("amounts")):
            try:
                amounts.add(Decimal(text).normalize())
            except InvalidOperation:
                continue
        return cls(frozenset(amounts), frozenset(_strings(raw.get("deliverables"))))


def terms_on_record(memory: Mapping[str, Any]) -> Terms:
    """PI1: the amounts and deliverables on record on either side of the deal."""
    amounts: set[Decimal] = set()
    deliverables: set[str] = set()
    for entries in _mapping(memory.get(RULINGS)).values():
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, Mapping):
                continue
            amounts |= _decimal(entry.get("amount"))
            slug = entry.get("deliverable")
            if isinstance(slug, str) and slug:
                deliverables.add(slug)
    proposals = _mapping(_mapping(memory.get(DEAL)).get("proposals"))
    for slug, proposal in proposals.items():
        if str(slug) == "general":
            continue
        deliverables.add(str(slug))
        for key, value in _mapping(proposal).items():
            if key in _QUANTITY_KEYS and isinstance(value, str | int) and str(value) != "1":
                deliverables.add(f"{slug} x{value}")
    sides = [memory.get(DEAL)] + [
        part
        for key, part in memory.items()
        if isinstance(key, str) and _BRANCH_KEY.fullmatch(key) and key not in NOT_VISITOR_BRANCHES
    ]
    for part in sides:
        for text in _all_strings(part):
            amounts |= {a.normalize() for a in money_amounts(text)}
    return Terms(frozenset(amounts), frozenset(deliverables))


def given(entry: Mapping[str, Any], memory: Mapping[str, Any]) -> dict[str, Any]:
    """PI1: ``entry`` (a decision just recorded) with the terms its instruction covers."""
    recorded = dict(entry)
    recorded.pop(LAPSED, None)
    if isinstance(recorded.get(INSTRUCTION), str):
        recorded[COVERS] = terms_on_record(memory).to_json()
    return recorded


def source(instruction: str, said: Sequence[Said]) -> str | None:
    """PI4: the id of the latest of the principal's messages ``said`` that states every figure
    ``instruction`` names; None when it names none (or no message states them)."""
    figures = stated_amounts(instruction)
    if not figures:
        return None
    return next((m.id for m in reversed(said) if figures <= stated_amounts(m.text)), None)


def read_again(
    entry: object, question: str, instruction: str | None, source_id: str | None
) -> bool:
    """PI4: ``instruction`` is the one ``entry`` already records, read again (a writer re-reading
    the session): from the same message when both name one, else the same words answering the
    same question. Its ``covers`` and any lapse stay as recorded."""
    if not isinstance(entry, Mapping) or not isinstance(instruction, str):
        return False
    recorded = entry.get(INSTRUCTION)
    if not isinstance(recorded, str):
        return False
    if source_id is not None and isinstance(entry.get(SOURCE), str):
        return bool(entry[SOURCE] == source_id)
    return _folded(recorded) == _folded(instruction) and _folded(
        str(entry.get("question") or "")
    ) == _folded(question)


def moved(entry: Mapping[str, Any], memory: Mapping[str, Any]) -> str | None:
    """PI2: why the terms ``entry``'s instruction covered have moved (the new terms, in words
    for the principal), or None while they stand. An entry recorded without ``covers`` stands
    (nothing to compare)."""
    instruction = entry.get(INSTRUCTION)
    covered = Terms.of(entry.get(COVERS))
    if not isinstance(instruction, str) or covered is None:
        return None
    now = terms_on_record(memory)
    named = {a.normalize() for a in stated_amounts(instruction)}
    new_amounts = sorted(now.amounts - covered.amounts - named)
    new_deliverables = sorted(now.deliverables - covered.deliverables)
    if not new_amounts and not new_deliverables:
        return None
    parts = [f"{a:,f}" for a in new_amounts] + [d.replace("_", " ") for d in new_deliverables]
    return "the terms moved after it was given: " + ", ".join(parts)


def standing(memory: Mapping[str, Any], side: str = "host") -> Iterator[tuple[str, str]]:
    """PI3: (key, instruction) of each of ``side``'s instructions still in force: not recorded
    as lapsed, and its covered terms not moved."""
    for key, entry in _mapping(memory.get(DECISIONS)).items():
        if not isinstance(entry, Mapping) or entry.get("side") != side:
            continue
        instruction = entry.get(INSTRUCTION)
        if not isinstance(instruction, str) or entry.get(LAPSED):
            continue
        if moved(entry, memory) is None:
            yield str(key), instruction


def lapse(document: Mapping[str, Any]) -> dict[str, Any]:
    """PI2, PI3: ``document`` with each instruction whose terms moved recorded as lapsed, with
    the reason (code's record in memory's reserved part); unchanged when none moved."""
    decisions = _mapping(document.get(DECISIONS))
    reasons = {
        str(key): why
        for key, entry in decisions.items()
        if isinstance(entry, Mapping)
        and not entry.get(LAPSED)
        and (why := moved(entry, document)) is not None
    }
    if not reasons:
        return copy.deepcopy(dict(document))
    doc = copy.deepcopy(dict(document))
    for key, why in reasons.items():
        doc[DECISIONS][key][LAPSED] = {"reason": why}
    return doc


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _decimal(value: object) -> set[Decimal]:
    if not isinstance(value, str | int):
        return set()
    try:
        return {Decimal(str(value)).normalize()}
    except InvalidOperation:
        return set()


def _all_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for child in value.values():
            yield from _all_strings(child)
    elif isinstance(value, list):
        for child in value:
            yield from _all_strings(child)


def _folded(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))
