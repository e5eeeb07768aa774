"""A real SMTP server on a loopback port (aiosmtpd), for the notification tests: it keeps every
message it accepts, and can be told to answer a 4xx or 5xx, to stall past the client's timeout,
or to be down (stopped: connections are refused) and come back on the same port."""

from __future__ import annotations

import asyncio
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

IDENTIFIERS = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # room and notification ids
    r"|(?<=[?&]t=)[A-Za-z0-9_.=-]+",  # the signed unsubscribe token
    re.I,
)
"""What code writes into an email as an identifier: random hex and base64 whose digits can read
as an amount near a private limit, so a canary check over what a person reads leaves them out."""

ORIGINATOR_HEADERS = ("Subject", "From", "To", "Reply-To", "X-Dealroom-Kind")
"""The headers a person reads (not ids, dates, MIME boundaries or the unsubscribe link)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Received:
    sender: str
    recipients: list[str]
    message: EmailMessage

    @property
    def text(self) -> str:
        part = self.message.get_body(("plain",))
        return "" if part is None else str(part.get_content())

    @property
    def html(self) -> str:
        part = self.message.get_body(("html",))
        return "" if part is None else str(part.get_content())

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    def readable(self) -> list[str]:
        """The headers a person reads, the plain part and the HTML part, with the identifiers
        code writes into links taken out (for canary checks)."""
        headers = "\n".join(
            f"{name}: {self.message[name]}" for name in ORIGINATOR_HEADERS if self.message[name]
        )
        return [IDENTIFIERS.sub("<id>", t) for t in (headers, self.text, self.html)]


@dataclass
class Handler:
    received: list[Received] = field(default_factory=list)
    answer: str | None = None
    """A reply to DATA instead of accepting (``"451 4.3.0 try later"``, ``"550 …"``)."""
    rcpt_answer: str | None = None
    stall: float = 0.0
    """Seconds to sit on DATA before answering (past the client's timeout: a timeout)."""
    keep_before_stall: bool = False
    """Keep the message first, then stall: a client gone during the stall has delivered it
    without knowing (the worst moment to kill a sender)."""

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if self.rcpt_answer is not None:
            return self.rcpt_answer
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.stall and not self.keep_before_stall:
            await asyncio.sleep(self.stall)
        if self.answer is not None:
            return self.answer
        raw = envelope.original_content or b""
        parsed = message_from_bytes(raw, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        self.received.append(
            Received(str(envelope.mail_from), [str(r) for r in envelope.rcpt_tos], parsed)
        )
        if self.stall and self.keep_before_stall:
            await asyncio.sleep(self.stall)
        return "250 Message accepted"


class Mailbox:
    """The server and what it received. ``url`` is what ``DEALROOM_SMTP_URL`` takes."""

    def __init__(self) -> None:
        self.port = free_port()
        self.handler = Handler()
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    @property
    def received(self) -> list[Received]:
        return self.handler.received

    def start(self) -> None:
        controller = Controller(self.handler, hostname="127.0.0.1", port=self.port)
        controller.start()
        self._controller = controller

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def to(self, address: str) -> list[Received]:
        return [r for r in self.received if address in r.recipients]

    async def wait_for(self, count: int, timeout: float = 20.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.received)} email(s) received, {count} awaited")
            await asyncio.sleep(0.05)
        return list(self.received)


@contextmanager
def mailbox() -> Iterator[Mailbox]:
    box = Mailbox()
    box.start()
    try:
        yield box
    finally:
        box.stop()
