"""Rendering a notification email from the templates beside this module: a plain-text and an
HTML part, a deep link to the room, the reason it was sent and a one-click unsubscribe
(``List-Unsubscribe`` + ``List-Unsubscribe-Post``, RFC 8058). The ``Message-ID`` is derived from
the notification's id, so a resend after a crash is recognisably the same email."""

from __future__ import annotations

import html
import uuid
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import format_datetime
from functools import cache
from importlib import resources
from string import Template
from urllib.parse import quote, urlsplit

from dealroom.persistence.models import Notification


@cache
def _template(name: str) -> Template:
    text = resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")
    return Template(text)


def message_id(notification_id: uuid.UUID, public_url: str) -> str:
    """The email's ``Message-ID``: one per notification, whatever attempt carries it."""
    domain = urlsplit(public_url).hostname or "dealroom.invalid"
    return f"<{notification_id}@{domain}>"


def absolute(public_url: str, path: str) -> str:
    return public_url.rstrip("/") + path


def loggable(link: str) -> str:
    """A link as a log line may show it: an invitation's token admits whoever holds it."""
    head, marker, _token = link.partition("/invite/")
    return f"{head}{marker}…" if marker else link


def unsubscribe_url(public_url: str, token: str) -> str:
    return absolute(public_url, f"/notifications/unsubscribe?t={quote(token)}")


@dataclass(frozen=True, slots=True)
class Rendered:
    subject: str
    text: str
    html: str


def render(
    carrier: Notification,
    carried: list[Notification],
    *,
    name: str | None,
    public_url: str,
    unsubscribe: str | None,
) -> Rendered:
    """The email of ``carrier`` and the notifications that joined it (oldest first). Without
    a name it greets no one by name; without an unsubscribe link (an address with no account:
    one invitation, no list) it offers none."""
    digest = carrier.kind == "digest"
    items = carried if digest else [carrier, *carried]
    rooms = {n.room_id for n in items}
    several_rooms = len(rooms) > 1 or digest
    if digest or len(items) == 1:
        subject = carrier.title
    elif several_rooms:
        subject = f"{len(items)} updates from your deal rooms"
    else:
        subject = f"{carrier.title} (and {len(items) - 1} more)"
    text_items, html_items = [], []
    for item in items:
        link = absolute(public_url, item.link)
        text_items.append(
            _template("item.txt").substitute(
                title=item.title,
                body=item.body,
                open=f"\nOpen: {link}" if several_rooms else "",
            )
        )
        html_items.append(
            _template("item.html").substitute(
                title=html.escape(item.title),
                body=html.escape(item.body),
                open=f'<br><a href="{html.escape(link)}">Open</a>' if several_rooms else "",
            )
        )
    link = absolute(public_url, carrier.link)
    text = _template("email.txt").substitute(
        greeting=f"Hello {name}," if name else "Hello,",
        items="\n".join(text_items).strip(),
        link=link,
        reason=carrier.reason,
        stop=f"\nStop these emails: {unsubscribe}" if unsubscribe else "",
    )
    page = _template("email.html").substitute(
        greeting=html.escape(f"Hello {name}," if name else "Hello,"),
        items="\n".join(html_items),
        link=html.escape(link),
        reason=html.escape(carrier.reason),
        stop=f'<br>\n<a href="{html.escape(unsubscribe)}">Stop these emails</a>'
        if unsubscribe
        else "",
    )
    return Rendered(subject=" ".join(subject.split())[:200], text=text, html=page)


def message(
    carrier: Notification,
    rendered: Rendered,
    *,
    mail_from: str,
    to: str,
    public_url: str,
    unsubscribe: str | None,
) -> EmailMessage:
    email = EmailMessage()
    email["Message-ID"] = message_id(carrier.id, public_url)
    email["From"] = mail_from
    email["To"] = to
    email["Subject"] = rendered.subject
    email["Date"] = format_datetime(carrier.created_at)
    if unsubscribe is not None:
        email["List-Unsubscribe"] = f"<{unsubscribe}>"
        email["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    email["Auto-Submitted"] = "auto-generated"
    email["X-Dealroom-Kind"] = carrier.kind
    email.set_content(rendered.text)
    email.add_alternative(rendered.html, subtype="html")
    return email
