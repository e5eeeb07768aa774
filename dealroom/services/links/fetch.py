"""The fetcher: one URL, read with ``httpx`` through the address guard, within fixed bounds.

Redirects are followed by hand (at most ``max_redirects``), each new location pinned by the
guard again; the body is read raw and decompressed here, so the byte cap counts what the page
decompresses to (a gzip bomb stops at the cap, not in memory); the whole read, redirects
included, has one deadline. No cookies are kept or sent (a fresh client, requests built by
hand), no proxy from the environment, no credentials, no JavaScript."""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Collection
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import urljoin

import httpx

from dealroom.domain.links import Reason, Refused
from dealroom.services.links.guard import pin

USER_AGENT = "dealroom-link-reader/1 (reads the one page a person pasted into a deal room)"
ACCEPTED_TYPES = frozenset({"text/html", "text/plain", "application/pdf"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    allow_loopback: bool = False
    ports: Collection[int] | None = (80, 443)
    max_bytes: int = 5_000_000
    total_seconds: float = 10.0
    max_redirects: int = 5
    accepted: Collection[str] = ACCEPTED_TYPES


@dataclass(frozen=True, slots=True)
class Fetched:
    final_url: str
    content_type: str
    """The media type, lower-cased, without parameters."""
    charset: str | None
    body: bytes
    elapsed_ms: int = 0


@dataclass(slots=True)
class FetchFailed(Exception):
    reason: Reason
    detail: str
    final_url: str | None = None
    elapsed_ms: int = field(default=0)

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}"


def media_type(header: str | None) -> tuple[str, str | None]:
    """``Content-Type`` taken apart: (media type, charset)."""
    if not header:
        return "", None
    message = Message()
    message["content-type"] = header
    charset = message.get_param("charset")
    return message.get_content_type().lower(), charset if isinstance(charset, str) else None


async def fetch(url: str, policy: FetchPolicy) -> Fetched:
    """The page at ``url`` within ``policy``; :class:`FetchFailed` names why not."""
    started = time.perf_counter()
    current = url
    try:
        async with asyncio.timeout(policy.total_seconds):
            return await _fetch(url, policy, started)
    except TimeoutError:
        raise FetchFailed(Reason.UNAVAILABLE, "timed out", current, _since(started)) from None


async def _fetch(url: str, policy: FetchPolicy, started: float) -> Fetched:
    current = url
    async with httpx.AsyncClient(
        trust_env=False, follow_redirects=False, timeout=policy.total_seconds
    ) as http:
        for _hop in range(policy.max_redirects + 1):
            try:
                pinned = await pin(
                    current, allow_loopback=policy.allow_loopback, ports=policy.ports
                )
            except Refused as exc:
                raise FetchFailed(Reason.REFUSED, str(exc), current, _since(started)) from None
            request = httpx.Request(
                "GET",
                pinned.connect_url,
                headers={
                    **pinned.headers(),
                    "User-Agent": USER_AGENT,
                    "Accept": "text/html, text/plain;q=0.9, application/pdf;q=0.9",
                    "Accept-Encoding": "gzip, deflate",
                },
                extensions=pinned.extensions,
            )
            try:
                response = await http.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise FetchFailed(
                    Reason.UNAVAILABLE, type(exc).__name__, current, _since(started)
                ) from None
            try:
                if response.status_code in _REDIRECTS:
                    location = response.headers.get("location")
                    if not location:
                        raise FetchFailed(
                            Reason.UNAVAILABLE, "redirect without a location", current
                        )
                    current = urljoin(current, location)
                    continue
                return await _body(response, current, policy, started)
            finally:
                await response.aclose()
    raise FetchFailed(Reason.UNAVAILABLE, "too many redirects", current, _since(started))


async def _body(response: httpx.Response, url: str, policy: FetchPolicy, started: float) -> Fetched:
    status = response.status_code
    if status in (401, 403, 407):
        raise FetchFailed(Reason.LOGIN, f"HTTP {status}", url, _since(started))
    if status in (404, 410):
        raise FetchFailed(Reason.NOT_FOUND, f"HTTP {status}", url, _since(started))
    if not 200 <= status < 300:
        raise FetchFailed(Reason.UNAVAILABLE, f"HTTP {status}", url, _since(started))
    kind, charset = media_type(response.headers.get("content-type"))
    if kind not in policy.accepted:
        raise FetchFailed(Reason.NOT_A_PAGE, kind or "no content type", url, _since(started))
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > policy.max_bytes:
        raise FetchFailed(Reason.TOO_LARGE, f"{declared} bytes", url, _since(started))
    body = await _read(response, policy.max_bytes, url, started)
    return Fetched(url, kind, charset, body, _since(started))


async def _read(response: httpx.Response, cap: int, url: str, started: float) -> bytes:
    """The body, decompressed here and never past ``cap`` bytes of what it decompresses to."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    decoder: zlib._Decompress | None
    if encoding in ("", "identity"):
        decoder = None
    elif encoding in ("gzip", "x-gzip", "deflate"):
        decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
    else:
        raise FetchFailed(Reason.NOT_A_PAGE, f"content encoding {encoding}", url, _since(started))
    out = bytearray()
    async for raw in response.aiter_raw():
        if decoder is None:
            out += raw
        else:
            try:
                out += decoder.decompress(raw, cap + 1 - len(out))
                while decoder.unconsumed_tail and len(out) <= cap:
                    out += decoder.decompress(decoder.unconsumed_tail, cap + 1 - len(out))
            except zlib.error:
                raise FetchFailed(
                    Reason.UNAVAILABLE, "bad compressed body", url, _since(started)
                ) from None
        if len(out) > cap:
            raise FetchFailed(Reason.TOO_LARGE, f"over {cap} bytes", url, _since(started))
    return bytes(out)


def _since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
