"""The address guard (``domain/links.py`` L2/L3) with its one DNS lookup: a URL is resolved
once, every address it resolves to is checked, and the connection goes to the address that was
checked (the URL's host is replaced by that address; ``Host`` and TLS's SNI keep the name). A
second lookup at connect time is what DNS rebinding exploits: a name that answered a public
address for the check and 127.0.0.1 for the connection."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dealroom.domain import links as rules
from dealroom.domain.links import Address, Refused

__all__ = ["Pinned", "Refused", "pin", "resolve"]


@dataclass(frozen=True, slots=True)
class Pinned:
    """A URL bound to the address the guard checked."""

    url: str
    """As given."""
    host: str
    port: int
    address: Address

    @property
    def connect_url(self) -> str:
        """``url`` with its host replaced by the checked address: httpx connects there and
        makes no lookup of its own."""
        parts = urlsplit(self.url)
        literal = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        netloc = f"{literal}:{parts.port}" if parts.port is not None else literal
        return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))

    @property
    def host_header(self) -> str:
        parts = urlsplit(self.url)
        name = self.host if ":" not in self.host else f"[{self.host}]"
        return f"{name}:{parts.port}" if parts.port is not None else name

    @property
    def extensions(self) -> dict[str, Any]:
        """httpcore's request extensions: TLS verifies the certificate against the name."""
        return {"sni_hostname": self.host}

    def headers(self) -> dict[str, str]:
        return {"Host": self.host_header}


async def resolve(host: str, port: int) -> list[Address]:
    """Every address ``host`` resolves to, by the system resolver, once."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    found: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    return found


async def pin(url: str, *, allow_loopback: bool, ports: Collection[int] | None) -> Pinned:
    """L1-L3: the URL's shape, its host's addresses (a literal in any IPv4 spelling is read as
    the address it names, before DNS), every one allowed; raises :class:`Refused`."""
    target = rules.target_of(url, ports=ports)
    literal = rules.host_literal(target.host)
    addresses = [literal] if literal is not None else await resolve(target.host, target.port)
    address = rules.check_addresses(addresses, allow_loopback=allow_loopback)
    return Pinned(url=url, host=target.host, port=target.port, address=address)
