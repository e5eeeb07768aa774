"""What every agent's rules share: reading the filtered context and memory, words, money,
and the few readings both persona and distil make (house currency, probes, exclusions)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from dealroom.agents.persona import Decision, Ruling
from dealroom.domain.deliverables import Deliverable, parse_slug
from dealroom.domain.terms import Money, format_money, parse_money

# --- reading the context ----------------------------------------------------------------------


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _at(document: Mapping[str, Any], path: str) -> object:
    node: object = document
    for segment in path.split("."):
        if not isinstance(node, Mapping) or segment not in node:
            return None
        node = node[segment]
    return node


def _leaves(node: object, prefix: str = "") -> list[tuple[str, str]]:
    """Every text value under ``node`` as ``(dotted path, text)``, in document order."""
    if isinstance(node, Mapping):
        found: list[tuple[str, str]] = []
        for key, child in node.items():
            found += _leaves(child, f"{prefix}.{key}" if prefix else str(key))
        return found
    if isinstance(node, list | tuple):
        found = []
        for item in node:
            found += _leaves(item, prefix)
        return found
    if node is None:
        return []
    return [(prefix, str(node))]


def _strings(value: object) -> list[str]:
    """A memory value that may be one string or a list of them."""
    if isinstance(value, str):
        return [value]
    return [item for item in _list(value) if isinstance(item, str)]


_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS: Final = frozenset(
    "what when where which with from that this your have about there their "  # noqa: SIM905 (a word list reads best as text)
    "they them would could should will tell know please just like want "
    "does into than then also been were much many some more most very here "
    "only over such".split()
)


def _words(text: str) -> set[str]:
    """Words of at least four letters, lower-cased, minus the commonest function words."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOPWORDS}


def _related(a: str, b: str) -> bool:
    """``rate`` ~ ``rates``: one word is the other with an ending."""
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def _overlaps(words: Iterable[str], others: Iterable[str]) -> bool:
    others = list(others)
    return any(_related(a, b) for a in words for b in others)


def _humanise(text: str) -> str:
    """Memory text as a person reads it: ``sponsored_post from 5000 USD`` → ``sponsored post
    from $5,000``."""

    def money(match: re.Match[str]) -> str:
        found = parse_money(match.group(0))
        return format_money(found) if found else match.group(0)

    text = re.sub(r"\b\d+(?:\.\d+)? [A-Z]{3}\b", money, text)
    return re.sub(r"\b([a-z]+)_([a-z_]+)\b", lambda m: m.group(0).replace("_", " "), text)


def _label(slug: str, quantity: int = 1) -> str:
    """A rate key as people say it: ``instagram_reel`` x2 → ``2 Instagram reels``."""
    read = parse_slug(slug)
    return Deliverable(read.kind, read.platform, max(quantity, 1)).label()


def _a(slug: str | None, quantity: int = 1) -> str:
    if slug is None:
        return "this work"
    label = _label(slug, quantity)
    if quantity > 1:
        return label
    return f"{'an' if label[0].lower() in 'aeiou' else 'a'} {label}"


def _the(slug: str | None, quantity: int = 1) -> str:
    return f"the {_label(slug, quantity)}" if slug else "this work"


def _money_from(amount: object, currency: object) -> Money | None:
    text = _str(amount).replace(",", "").strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return parse_money(text)
    if value <= 0:
        return None
    if value == value.to_integral_value():
        value = value.quantize(Decimal(1))
    return Money(value, (_str(currency) or "USD").upper())


def _ruling(decision: Decision, money: Money | None, slug: str | None) -> Ruling:
    return Ruling(
        decision=decision,
        amount=money.digits() if money else None,
        currency=money.currency if money else None,
        deliverable=slug,
    )


# --- shared by persona and distil -------------------------------------------------------------


def _house_currency(memory: Mapping[str, Any]) -> str:
    """The currency the host's terms are in, for amounts written without one (``8k``)."""
    for section in ("host", "rulings"):
        for _path, text in _leaves(memory.get(section)):
            money = parse_money(text) if re.search(r"[A-Z]{3}|[$£€]", text) else None
            if money is not None:
                return money.currency
    return "USD"


# Extraction and role-play attempts: answered only from host.public, whatever else they hold.
_PROBE = re.compile(
    r"\b(?:ignore|disregard|forget|bypass|abandon|erase|pretend|role-?play|act as|you are now|"
    r"jailbreak|instructions?|prompts?|system|directives?|commands?|rules?|floor|lowest|minimum|"
    r"bottom line|least you|reveal|secrets?|verbatim|repeat\w*|recit\w*|reiterat\w*|"
    r"replay\w*|rehash\w*|echo\w*|parrot\w*|transcri\w*|sentences?|phrases?|statements?|"
    r"wording|scenario|dialogue|discourse|chat history|summari[sz]e|recap\w*|recount|playback|"
    r"rollback|replicate|duplicate|reproduce|narrate|elucidate|enumerate|redeliver|"
    r"read (?:back|out|again)|lines you|text you|words you|word for word|copy and paste|"
    r"output it|previous information)\b|\b(?:assistant|user|system):",
    re.IGNORECASE,
)


def _is_probe(text: str) -> bool:
    return bool(_PROBE.search(text))


_EXCLUSION_RULE = re.compile(
    r"\b(?:never|don'?t|do not|won'?t|will not|no longer|not)\s+(?:ever\s+)?"
    r"(?:work|partner|collaborate|do deals)\s+with\s+(?:any\s+)?([a-z][a-z-]+)",
    re.I,
)

_NOT_CATEGORIES: Final = frozenset(
    "brand company client people anyone anybody anything someone less agency "  # noqa: SIM905 (a word list reads best as text)
    "them you the a an".split()
)
"""Words that follow "work with" without naming a category (``brands that…``)."""


def _category(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 5:
        word = word[:-3] + "y"
    elif word.endswith("s") and len(word) > 4 and not word.endswith("ss"):
        word = word[:-1]
    return "" if word in _NOT_CATEGORIES else word
