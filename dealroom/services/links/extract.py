"""A fetched page's title and text: trafilatura for HTML (the main text, boilerplate left out,
no JavaScript run), pypdf for PDF, plain text as it is. CPU-bound parsing runs in a thread so
a large page does not stall the event loop."""

from __future__ import annotations

import asyncio
import io
import logging
import re
from dataclasses import dataclass

import trafilatura
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from dealroom.domain.links import Reason
from dealroom.services.links.fetch import Fetched, FetchFailed

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-:.]+)""", re.I)
_PASSWORD_FIELD = re.compile(rb"""<input[^>]+type\s*=\s*["']?password""", re.I)
_LOGIN_WORDS = re.compile(r"\b(?:sign in|log in|login|sign-in|password)\b", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BLANK_LINES = re.compile(r"\n{3,}")
LOGIN_WALL_CHARS = 1500
"""A page with a password field and less text than this is a login wall, not a brief."""

# trafilatura logs every page it finds too short at WARNING; a short page is normal here.
logging.getLogger("trafilatura").setLevel(logging.ERROR)


@dataclass(frozen=True, slots=True)
class Extracted:
    title: str | None
    text: str


async def extract(page: Fetched, *, max_chars: int) -> Extracted:
    """The page's title and text, at most ``max_chars``; :class:`FetchFailed` when it has none
    a person could mean (a login wall, an unreadable PDF, an empty page)."""
    return await asyncio.to_thread(extract_now, page, max_chars=max_chars)


def extract_now(page: Fetched, *, max_chars: int) -> Extracted:
    if page.content_type == "application/pdf":
        found = _pdf(page, max_chars)
    elif page.content_type == "text/html":
        found = _html(page)
    else:
        found = Extracted(None, decode(page.body, page.charset))
    text = _BLANK_LINES.sub("\n\n", _CONTROL.sub("", found.text)).strip()[:max_chars]
    title = _CONTROL.sub("", found.title).strip()[:300] if found.title else None
    if not text:
        raise FetchFailed(Reason.EMPTY, "no text", page.final_url)
    return Extracted(title or None, text)


def decode(body: bytes, charset: str | None) -> str:
    """The header's charset, else a ``<meta charset>``, else UTF-8, else Windows-1252 (which
    decodes any byte): a page in another encoding reads as its author wrote it."""
    candidates = [charset] if charset else []
    if meta := _META_CHARSET.search(body[:4096]):
        candidates.append(meta.group(1).decode("ascii", "replace"))
    candidates.append("utf-8")
    for name in candidates:
        try:
            return body.decode(name)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("cp1252", errors="replace")


def _html(page: Fetched) -> Extracted:
    html = decode(page.body, page.charset)
    text = trafilatura.extract(
        html, url=page.final_url, include_comments=False, favor_recall=True
    ) or trafilatura.html2txt(html)
    if _PASSWORD_FIELD.search(page.body) and (
        len(text) < LOGIN_WALL_CHARS or _LOGIN_WORDS.search(text[:300])
    ):
        raise FetchFailed(Reason.LOGIN, "login form", page.final_url)
    metadata = trafilatura.extract_metadata(html, default_url=page.final_url)
    return Extracted(metadata.title if metadata is not None else None, text)


def _pdf(page: Fetched, max_chars: int) -> Extracted:
    try:
        reader = PdfReader(io.BytesIO(page.body))
        if reader.is_encrypted:
            raise FetchFailed(Reason.LOGIN, "encrypted PDF", page.final_url)
        parts: list[str] = []
        size = 0
        for pdf_page in reader.pages:
            piece = pdf_page.extract_text() or ""
            parts.append(piece)
            size += len(piece)
            if size >= max_chars:
                break
        title = reader.metadata.title if reader.metadata is not None else None
    except FetchFailed:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise FetchFailed(Reason.NOT_A_PAGE, f"PDF: {type(exc).__name__}", page.final_url) from None
    return Extracted(title if isinstance(title, str) else None, "\n".join(parts))
