"""What is being bought, read the way people write it (pure, no I/O).

A deliverable is a canonical **kind** (``sponsored_post``, ``reel``, ``video`` …), an optional
**platform** (``instagram``, ``tiktok`` …) and a **quantity**. People write "a sponsored IG
post", "2 Instagram reels", "three stories", "one TikTok", "a sponserd post on instagarm":
number words are read with ``text2num`` and misspelt platform and format words are matched
to the vocabulary with ``rapidfuzz`` (docs/DECISIONS.md "Libraries", terms reader).

A host's rates are keyed by slug: the kind, with the platform in front when one was named
(``sponsored_post``, ``instagram_reel``). ``rate_slug`` matches a deliverable to them by kind
with the platform as a refinement:

- DV1 Same kind and platform wins; then a rate for the kind on no platform (a rate for
      "sponsored post" covers "sponsored Instagram post").
- DV2 A deliverable naming no platform takes the kind's one rate on a platform, when there
      is exactly one.
- DV3 A rate on another platform never covers it ("Instagram reel" does not cover "TikTok
      reel"), and another kind never does ("Instagram reel" does not cover "TikTok video"),
      except the plain/sponsored forms of one format (``post`` ~ ``sponsored_post``).
- DV4 Two slugs are *told apart* only when both read as kinds of the vocabulary and those
      kinds differ (the plain/sponsored forms are one), or both name a platform and the
      platforms differ. A slug the vocabulary does not read (``standard``, a model's own
      wording) is told apart from nothing (``told_apart``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from rapidfuzz import fuzz, process
from text_to_num import alpha2digit

PLATFORMS: Final = {
    "instagram": "instagram",
    "ig": "instagram",
    "insta": "instagram",
    "tiktok": "tiktok",
    "youtube": "youtube",
    "yt": "youtube",
    "linkedin": "linkedin",
    "twitter": "twitter",
    "facebook": "facebook",
    "fb": "facebook",
    "twitch": "twitch",
    "snapchat": "snapchat",
}
"""Platform words (lower case) to the platform's canonical name."""

_NOUNS: Final = {
    "post": "post",
    "posts": "post",
    "reel": "reel",
    "reels": "reel",
    "story": "story",
    "stories": "story",
    "video": "video",
    "videos": "video",
    "vid": "video",
    "vids": "video",
    "short": "short",
    "shorts": "short",
    "tweet": "tweet",
    "tweets": "tweet",
    "keynote": "keynote",
    "keynotes": "keynote",
    "workshop": "workshop",
    "workshops": "workshop",
    "newsletter": "newsletter",
    "newsletters": "newsletter",
    "livestream": "livestream",
    "livestreams": "livestream",
    "tiktoks": "video",
}
"""Format nouns to kinds (before modifiers such as *sponsored* or *blog*)."""

_PHRASES: Final = (
    (("blog", "post"), "blog_post"),
    (("blog", "posts"), "blog_post"),
    (("podcast", "ad"), "podcast_ad"),
    (("podcast", "ads"), "podcast_ad"),
    (("podcast", "spot"), "podcast_ad"),
    (("podcast", "spots"), "podcast_ad"),
    (("podcast", "read"), "podcast_ad"),
    (("podcast", "reads"), "podcast_ad"),
    (("podcast", "mention"), "podcast_ad"),
    (("podcast", "mentions"), "podcast_ad"),
    (("live", "stream"), "livestream"),
)
_SPONSORED: Final = frozenset({"sponsored", "paid", "branded"})
_SPONSORABLE: Final = {"post": "sponsored_post", "video": "sponsored_video"}
_SIBLINGS: Final = {
    "sponsored_post": "post",
    "post": "sponsored_post",
    "sponsored_video": "video",
    "video": "sponsored_video",
}
"""The plain and sponsored form of one format: the same thing to a host (DV3)."""

_PHRASE_ENDS: Final = frozenset({*(words[-1] for words, _kind in _PHRASES), *_NOUNS, "tiktok"})
KINDS: Final = tuple(
    dict.fromkeys([*_NOUNS.values(), *(kind for _words, kind in _PHRASES), "sponsored_post"])
)
_VOCABULARY: Final = tuple(
    sorted(
        {w for w in (*PLATFORMS, *_NOUNS, *_SPONSORED, "blog", "podcast") if len(w) >= 5}
        | {"sponsored", "dedicated"}
    )
)
_TOKEN = re.compile(r"[a-z0-9]+")
_ONE: Final = frozenset({"a", "an", "one", "1"})
_COUNTS: Final = {"a": 1, "an": 1, "single": 1, "couple": 2, "pair": 2, "both": 2}


@dataclass(frozen=True, slots=True)
class Deliverable:
    """One deliverable as written: ``Deliverable("reel", "instagram", 2)``."""

    kind: str
    platform: str | None = None
    quantity: int = 1

    @property
    def slug(self) -> str:
        """The rate key: the kind, with the platform in front when named."""
        return f"{self.platform}_{self.kind}" if self.platform else self.kind

    def label(self) -> str:
        """How it reads in a sentence and a written offer: ``2 Instagram reels``."""
        words = self.kind.replace("_", " ")
        if self.platform is not None:
            platform = {"tiktok": "TikTok", "youtube": "YouTube", "linkedin": "LinkedIn"}.get(
                self.platform, self.platform.capitalize()
            )
            head, _, tail = words.rpartition(" ")
            words = f"{head} {platform} {tail}" if head else f"{platform} {tail}"
        if self.quantity == 1:
            return words
        plural = words[:-1] + "ies" if words.endswith("y") else words + "s"
        return f"{self.quantity} {plural}"


@lru_cache(maxsize=4096)
def _spelt(word: str) -> str:
    """A vocabulary word for a misspelling of one (``instagarm`` → ``instagram``)."""
    if len(word) < 5 or word in _VOCABULARY:
        return word
    found = process.extractOne(word, _VOCABULARY, scorer=fuzz.ratio, score_cutoff=80)
    return str(found[0]) if found is not None else word


def _tokens(text: str) -> list[str]:
    text = text.lower().replace("tik tok", "tiktok").replace("you tube", "youtube")
    text = re.sub(r"\b(\d+)\s*x\b|\bx\s*(\d+)\b", lambda m: f"{m.group(1) or m.group(2)} ", text)
    if re.search(r"[a-z]", text):
        text = alpha2digit(text, "en", threshold=0)
    return [_spelt(word) for word in _TOKEN.findall(text)]


def _platform_after(tokens: list[str], index: int) -> str | None:
    """``… on Instagram`` / ``… for TikTok`` right after the noun."""
    rest = tokens[index + 1 : index + 4]
    if len(rest) >= 2 and rest[0] in ("on", "for", "via", "in") and rest[1] in PLATFORMS:
        return PLATFORMS[rest[1]]
    if len(rest) >= 3 and rest[0] in ("on", "for") and rest[1] in ("my", "your", "their", "the"):
        return PLATFORMS.get(rest[2])
    return None


def _kind_at(tokens: list[str], index: int) -> tuple[str, int] | None:
    """The kind whose phrase ends at ``index`` and how many tokens it takes."""
    if tokens[index] not in _PHRASE_ENDS:
        return None
    for words, kind in _PHRASES:
        size = len(words)
        if tuple(tokens[max(0, index - size + 1) : index + 1]) == words:
            return kind, size
    noun = tokens[index]
    if noun in _NOUNS:
        return _NOUNS[noun], 1
    following = tokens[index + 1] if index + 1 < len(tokens) else ""
    if noun == "tiktok" and following not in _NOUNS and index > 0 and tokens[index - 1] in _ONE:
        return "video", 0  # "a TikTok" is a TikTok video; the platform is read below
    return None


def read_deliverables(text: str) -> list[Deliverable]:
    """Every deliverable ``text`` names, in order, with platform and quantity."""
    return list(_read(text))


@lru_cache(maxsize=4096)
def _read(text: str) -> tuple[Deliverable, ...]:
    """``read_deliverables``, cached: a turn reads the same lines many times."""
    tokens = _tokens(text)
    found: list[Deliverable] = []
    for index in range(len(tokens)):
        hit = _kind_at(tokens, index)
        if hit is None:
            continue
        kind, size = hit
        if size == 1 and index > 0 and tokens[index - 1] in ("blog", "podcast"):
            continue  # read as the two-word phrase
        start = index - max(size, 1) + 1
        platform = "tiktok" if tokens[index] in ("tiktok", "tiktoks") else None
        quantity = 0
        sponsored = False
        cursor = start - 1
        while cursor >= 0 and start - cursor <= 4:
            word = tokens[cursor]
            if word in PLATFORMS and platform is None:
                platform = PLATFORMS[word]
            elif word in _SPONSORED:
                sponsored = True
            elif word.isdigit() and 0 < int(word) <= 50:
                quantity = int(word)
                break
            elif word in _COUNTS:
                quantity = _COUNTS[word]
                break
            elif word not in ("dedicated", "of", "more", "separate", "additional", "extra"):
                break
            cursor -= 1
        if sponsored and kind in _SPONSORABLE:
            kind = _SPONSORABLE[kind]
        platform = platform or _platform_after(tokens, index)
        found.append(Deliverable(kind, platform, quantity or 1))
    return tuple(found)


def parse_slug(slug: str) -> Deliverable:
    """A rate key back to kind and platform (``instagram_reel`` → reel on instagram)."""
    head, _, tail = slug.partition("_")
    if head in PLATFORMS.values() and tail:
        return Deliverable(tail, head)
    return Deliverable(slug)


def rate_slug(wanted: Deliverable, slugs: Iterable[str]) -> str | None:
    """The host's rate key covering ``wanted`` (DV1–DV3), or None."""
    rates = [(slug, parse_slug(slug)) for slug in slugs]
    for kind in (wanted.kind, _SIBLINGS.get(wanted.kind)):
        if kind is None:
            continue
        same = [(slug, rate) for slug, rate in rates if rate.kind == kind]
        exact = [slug for slug, rate in same if rate.platform == wanted.platform]
        if exact:
            return exact[0]
        anywhere = [slug for slug, rate in same if rate.platform is None]
        if anywhere:
            return anywhere[0]
        if wanted.platform is None and len(same) == 1:
            return same[0][0]
    return None


def told_apart(slug: str, other: str) -> bool:
    """DV4: whether ``slug`` and ``other`` certainly name different deliverables."""
    one, two = parse_slug(slug), parse_slug(other)
    if one.kind not in KINDS or two.kind not in KINDS:
        return False
    if one.kind != two.kind and _SIBLINGS.get(one.kind) != two.kind:
        return True
    return one.platform is not None and two.platform is not None and one.platform != two.platform
