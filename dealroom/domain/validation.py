"""Input rules for what users type. Each returns the normalised value or raises BAD_USER_INPUT."""

from __future__ import annotations

import re

from dealroom.domain.errors import bad_input

MAX_BODY = 8000
HANDLE_RE = re.compile(r"[a-z0-9][a-z0-9_-]{1,30}[a-z0-9]")
EMAIL_RE = re.compile(r"[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s]{1,63}")
CLIENT_MESSAGE_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
MIN_PASSWORD = 8
MAX_PASSWORD = 256


def message_body(raw: str) -> str:
    body = raw.strip()
    if not body:
        raise bad_input("A message needs some text.", "body")
    if len(body) > MAX_BODY:
        raise bad_input(f"A message is at most {MAX_BODY} characters.", "body")
    return body


def client_message_id(raw: str) -> str:
    if not CLIENT_MESSAGE_ID_RE.fullmatch(raw):
        raise bad_input(
            "clientMessageId must be 1-64 characters of letters, digits, '.', '_', ':' or '-'.",
            "clientMessageId",
        )
    return raw


def handle(raw: str) -> str:
    value = raw.strip().lower()
    if not HANDLE_RE.fullmatch(value):
        raise bad_input(
            "A handle is 3-32 lowercase letters, digits, '-' or '_', "
            "starting and ending with a letter or digit.",
            "handle",
        )
    return value


def email(raw: str) -> str:
    value = raw.strip().lower()
    if not EMAIL_RE.fullmatch(value):
        raise bad_input("That is not an email address.", "email")
    return value


def password(raw: str) -> str:
    if not MIN_PASSWORD <= len(raw) <= MAX_PASSWORD:
        raise bad_input(f"A password is {MIN_PASSWORD} to {MAX_PASSWORD} characters.", "password")
    return raw


def display_name(raw: str) -> str:
    value = " ".join(raw.split())
    if not 1 <= len(value) <= 80:
        raise bad_input("A display name is 1 to 80 characters.", "displayName")
    return value
