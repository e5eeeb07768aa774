"""Sending one email over SMTP (aiosmtplib), and reading what the server's answer means.

``DEALROOM_SMTP_URL``: ``smtp://[user:password@]host[:port]`` (STARTTLS when the server offers
it; ``?starttls=require`` insists, ``?starttls=off`` never tries) or ``smtps://…`` (TLS from the
first byte)."""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from enum import StrEnum
from urllib.parse import parse_qs, unquote, urlsplit

import aiosmtplib


class Verdict(StrEnum):
    SENT = "sent"
    RETRY = "retry"
    """A temporary failure: a 4xx, a refused or dropped connection, a timeout."""
    FAILED = "failed"
    """A permanent failure (a 5xx: a bad or bouncing address): never retried."""


@dataclass(frozen=True, slots=True)
class Outcome:
    verdict: Verdict
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class SmtpTarget:
    hostname: str
    port: int
    username: str | None
    password: str | None
    use_tls: bool
    start_tls: bool | None
    """None: STARTTLS when offered."""

    @classmethod
    def parse(cls, url: str) -> SmtpTarget:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("DEALROOM_SMTP_URL must be smtp://host[:port] or smtps://host[:port]")
        implicit = parts.scheme == "smtps"
        choice = (parse_qs(parts.query).get("starttls") or [""])[0].lower()
        start_tls = {"require": True, "off": False}.get(choice)
        return cls(
            hostname=parts.hostname,
            port=parts.port or (465 if implicit else 25),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            use_tls=implicit,
            start_tls=False if implicit else start_tls,
        )


def _coded(code: int, message: str) -> Outcome:
    reason = f"SMTP {code}: {message}"[:500]
    if 500 <= code < 600:
        return Outcome(Verdict.FAILED, reason)
    return Outcome(Verdict.RETRY, reason)


async def send(
    target: SmtpTarget, email: EmailMessage, *, sender: str, to: str, timeout: float
) -> Outcome:
    """One attempt; never raises for an SMTP or network failure."""
    try:
        await aiosmtplib.send(
            email,
            sender=sender,
            recipients=[to],
            hostname=target.hostname,
            port=target.port,
            username=target.username,
            password=target.password,
            use_tls=target.use_tls,
            start_tls=target.start_tls,
            timeout=timeout,
        )
    except aiosmtplib.SMTPRecipientsRefused as exc:
        first = exc.recipients[0] if exc.recipients else None
        if first is None:
            return Outcome(Verdict.RETRY, "SMTP: recipients refused")
        return _coded(first.code, first.message)
    except aiosmtplib.SMTPResponseException as exc:
        return _coded(exc.code, exc.message)
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        return Outcome(Verdict.RETRY, f"{type(exc).__name__}: {exc}"[:500])
    return Outcome(Verdict.SENT)
