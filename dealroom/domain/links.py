"""Links in chat, the pure rules: which URLs a message holds, which addresses a fetch may
reach, and how an unreadable link is named to a person.

- L1  Only ``http``/``https`` URLs with a host are links; the first ``limit`` distinct ones of a
      message are perceived, the rest are text (1,000 URLs in a message cost no more than 3).
- L2  A fetch may reach only public addresses: loopback, private, link-local (cloud metadata
      at 169.254.169.254 among them), multicast, reserved, unspecified, shared (CGNAT) and
      documentation addresses are refused, in every spelling of IPv4 (decimal, octal, hex,
      short forms), IPv6, and IPv4 carried inside IPv6 (mapped, compatible, 6to4, NAT64,
      Teredo). Loopback alone may be allowed, for tests.
- L3  Only the configured ports (80 and 443 by default) and no credentials in the URL.
- L4  An unreadable link is named to the person in plain words, never as an error code.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_CHARS = 2000

_URL = re.compile(r"https?://[^\s<>\"'`{}|\\^\[\]]+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\"»…"


class LinkStatus(StrEnum):
    READ = "read"
    UNREADABLE = "unreadable"


class Reason(StrEnum):
    """Why a link could not be read (L4)."""

    LOGIN = "login"
    NOT_FOUND = "not_found"
    TOO_LARGE = "too_large"
    NOT_A_PAGE = "not_a_page"
    REFUSED = "refused"
    UNAVAILABLE = "unavailable"
    EMPTY = "empty"


PLAIN_WORDS: dict[Reason, str] = {
    Reason.LOGIN: "it needs a login",
    Reason.NOT_FOUND: "the page was not found",
    Reason.TOO_LARGE: "it is too large to read",
    Reason.NOT_A_PAGE: "it is not a page or document I can read",
    Reason.REFUSED: "it points somewhere I am not allowed to open",
    Reason.UNAVAILABLE: "the site did not answer properly",
    Reason.EMPTY: "there was no readable text on it",
}


class Reader(StrEnum):
    """Which reader produced a perceived link."""

    GEMINI = "gemini_url_context"
    FETCH = "fetch"
    CACHE = "cache"


def find_urls(text: str, *, limit: int) -> list[str]:
    """L1: the first ``limit`` distinct links of ``text``, in order, trailing punctuation
    trimmed (a sentence's full stop is not part of the URL). Malformed ones are skipped."""
    found: list[str] = []
    if limit <= 0 or "://" not in text:
        return found
    for match in _URL.finditer(text):
        url = _trim(match.group(0))
        if url in found or not is_link(url):
            continue
        found.append(url)
        if len(found) >= limit:
            break
    return found


def holds_url(text: str) -> bool:
    """Cheap test: does ``text`` hold anything that looks like a link (before any query)."""
    return "://" in text and _URL.search(text) is not None


def _trim(url: str) -> str:
    while url and url[-1] in _TRAILING:
        # A closing bracket that closes one opened inside the URL stays (wiki-style links).
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


def is_link(url: str) -> bool:
    """L1/L3: an http(s) URL with a host, no credentials, a valid port, not overlong."""
    if len(url) > MAX_URL_CHARS:
        return False
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port that is no number or out of range
    except ValueError:
        return False
    return (
        parts.scheme.lower() in ("http", "https")
        and bool(parts.hostname)
        and parts.username is None
        and parts.password is None
    )


def parse_ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """L2: a host written as an IPv4 number in any form ``inet_aton`` accepts (what resolvers
    and browsers accept too): ``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``."""
    parts = host.rstrip(".").split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers: list[int] = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                number = int(part[2:] or "0", 16)
            elif len(part) > 1 and part.startswith("0"):
                number = int(part, 8)
            else:
                number = int(part, 10) if part.isdigit() else -1
        except ValueError:
            return None
        if number < 0:
            return None
        numbers.append(number)
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (5 - len(numbers)) + last
    return ipaddress.IPv4Address(value)


def host_literal(host: str) -> Address | None:
    """The address a host names by itself, without DNS, or None for a name."""
    bare = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        return parse_ipv4_literal(bare)


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, 6to4, NAT64, Teredo)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    packed = address.packed
    if packed[:12] == bytes(12) and packed[12:] != bytes(4):
        return ipaddress.IPv4Address(packed[12:])  # IPv4-compatible ::a.b.c.d (deprecated)
    if address in _NAT64:
        return ipaddress.IPv4Address(packed[12:])
    return None


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def refusal(address: Address, *, allow_loopback: bool) -> str | None:
    """L2: why ``address`` may not be reached, or None when it is public."""
    inner = embedded_ipv4(address)
    if inner is not None:
        return refusal(inner, allow_loopback=allow_loopback)
    if address.is_loopback:
        return None if allow_loopback else "loopback address"
    if address.is_link_local:
        return "link-local address (cloud metadata lives here)"
    if address.is_private or address.is_unspecified:
        return "private address"
    if address.is_multicast or address.is_reserved:
        return "multicast or reserved address"
    if not address.is_global:
        return "non-public address"
    return None


@dataclass(frozen=True, slots=True)
class Target:
    """A link's URL taken apart for a fetch: scheme, host as written, port."""

    scheme: str
    host: str
    port: int


class Refused(ValueError):
    """L2/L3: the URL or the address it resolves to may not be fetched."""


def target_of(url: str, *, ports: Collection[int] | None) -> Target:
    """L1/L3: the URL's scheme, host and port, or :class:`Refused`."""
    if not is_link(url):
        raise Refused("not an http(s) URL with a host and no credentials")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    if ports is not None and port not in ports:
        raise Refused(f"port {port} is not allowed")
    assert parts.hostname is not None  # is_link
    return Target(scheme, parts.hostname, port)


def check_addresses(addresses: Collection[Address], *, allow_loopback: bool) -> Address:
    """L2 on what a host resolved to: every address must be allowed (a name that resolves to a
    public and a private address is refused, whichever a connection would pick); returns the
    one to connect to."""
    if not addresses:
        raise Refused("the host does not resolve")
    for address in addresses:
        why = refusal(address, allow_loopback=allow_loopback)
        if why is not None:
            raise Refused(why)
    return next(iter(addresses))
