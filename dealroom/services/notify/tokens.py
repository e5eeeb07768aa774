"""Signed unsubscribe tokens (RFC 8058 one-click, no sign-in needed).

A token names an account, a kind (or ``all``) and an expiry, signed with HMAC-SHA256 under the
account's own secret (``notification_settings.secret``): a forged token, one signed for another
account, or an expired one is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

LIFETIME = timedelta(days=90)
"""Long enough for an old email's link to work; not forever."""
ALL = "all"


class TokenError(ValueError):
    """The token is forged, expired, malformed or for another account."""


@dataclass(frozen=True, slots=True)
class Claim:
    account_id: uuid.UUID
    kind: str
    expires: int


def new_secret() -> str:
    return secrets.token_hex(32)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: str, body: str) -> str:
    return _b64(hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest())


def sign(secret: str, account_id: uuid.UUID, kind: str, now: datetime) -> str:
    expires = int((now + LIFETIME).timestamp())
    body = _b64(f"{account_id}:{kind}:{expires}".encode())
    return f"{body}.{_mac(secret, body)}"


def read(token: str) -> Claim:
    """What the token claims, unverified (to find whose secret verifies it)."""
    try:
        body, _mac_part = token.split(".", 1)
        account, kind, expires = _unb64(body).decode().split(":")
        return Claim(uuid.UUID(account), kind, int(expires))
    except (ValueError, UnicodeDecodeError) as exc:
        raise TokenError("malformed") from exc


def verify(token: str, secret: str, now: datetime) -> Claim:
    claim = read(token)
    body, mac = token.split(".", 1)
    if not hmac.compare_digest(mac, _mac(secret, body)):
        raise TokenError("forged")
    if claim.expires < int(now.timestamp()):
        raise TokenError("expired")
    return claim
