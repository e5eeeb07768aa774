"""Partner webhooks, the pure rules.

- W1  Events: ``offer.created`` (an offer's first stage), ``offer.stage_changed`` (each later
      stage change), ``payment.captured`` and ``payment.declined``. One logical event per
      stage change, with an id written once in the change's own transaction: retries and
      redeliveries carry the same ``webhook-id``, so partners dedupe on it (at-least-once).
- W2  Retries back off exponentially with "equal" jitter (a delay drawn uniformly between half
      the exponential ceiling and the ceiling), capped per attempt, for a window
      (24 h by default) counted from the first attempt; then the delivery is ``failed``.
- W3  An endpoint whose delivery failed for good, with no success since that delivery was
      first tried, is disabled (its owner is told); re-enabling resumes its pending ones.
- W4  Destinations must be http(s) URLs whose every address is public: loopback, private,
      link-local, multicast, reserved and unspecified addresses are refused, checked when the
      webhook is made and again before every attempt (DNS can change). Loopback alone may be
      allowed (``DEALROOM_WEBHOOK_ALLOW_LOOPBACK``, for tests and local partners).
- W5  A 2xx answer is a delivery; anything else, a timeout or a refused connection is a
      failed attempt.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from urllib.parse import urlsplit


class EventType(StrEnum):
    OFFER_CREATED = "offer.created"
    OFFER_STAGE_CHANGED = "offer.stage_changed"
    PAYMENT_CAPTURED = "payment.captured"
    PAYMENT_DECLINED = "payment.declined"


PAYMENT_ACTOR = "payment"
HELD = "BOOKED_PAYMENT_HELD"
AWAITING_PAYMENT = "BOOKED_AWAITING_PAYMENT"


def parse_events(raw: Iterable[str]) -> list[EventType]:
    """The event types a webhook asks for, validated; ValueError names the first bad one."""
    chosen: list[EventType] = []
    for name in raw:
        try:
            event = EventType(name.strip())
        except ValueError:
            raise ValueError(f"Unknown event {name!r}.") from None
        if event not in chosen:
            chosen.append(event)
    if not chosen:
        raise ValueError("Name at least one event.")
    return chosen


def events_for_stage(
    *, first: bool, stage: str, previous: str | None, actor: str
) -> list[EventType]:
    """W1: the logical events one stored stage change is."""
    events = [EventType.OFFER_CREATED if first else EventType.OFFER_STAGE_CHANGED]
    if actor == PAYMENT_ACTOR and stage == HELD:
        events.append(EventType.PAYMENT_CAPTURED)
    elif actor == PAYMENT_ACTOR and stage == AWAITING_PAYMENT and previous != AWAITING_PAYMENT:
        events.append(EventType.PAYMENT_DECLINED)  # a pending capture came back declined
    return events


MAX_DOUBLINGS = 64
"""The exponent stops growing here: any cap is reached long before."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    base: timedelta
    cap: timedelta
    window: timedelta

    def next_delay(self, attempts: int, rng: random.Random | None = None) -> timedelta:
        """W2: "equal" jitter under an exponential ceiling, ``attempts`` made so far (>= 1):
        uniform between half the ceiling and the ceiling, so a retry never comes at once."""
        doublings = min(max(0, attempts - 1), MAX_DOUBLINGS)
        # in float seconds: base × 2**doublings overflows timedelta long before the cap matters
        ceiling = timedelta(
            seconds=min(self.cap.total_seconds(), self.base.total_seconds() * 2.0**doublings)
        )
        fraction: float = (rng or random).uniform(0.5, 1.0)  # a floor: no retry storm
        return ceiling * fraction

    def gives_up(self, since_first_attempt: timedelta) -> bool:
        return since_first_attempt >= self.window


def delivered(status_code: int | None) -> bool:
    """W5."""
    return status_code is not None and 200 <= status_code < 300


class DestinationError(ValueError):
    pass


def check_url(url: str) -> str:
    """W4, the URL's shape; returns the host to resolve."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DestinationError("The webhook URL must be an http(s) URL with a host.")
    if parts.username or parts.password:
        raise DestinationError("The webhook URL must not carry credentials.")
    if len(url) > 2000:
        raise DestinationError("The webhook URL is too long.")
    return parts.hostname


def check_addresses(addresses: Iterable[str], *, allow_loopback: bool) -> None:
    """W4: every resolved address must be public (loopback only when allowed)."""
    found = False
    for raw in addresses:
        found = True
        address = ipaddress.ip_address(raw.split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if address.is_loopback:
            if allow_loopback:
                continue
            raise DestinationError("Webhooks may not point at loopback addresses.")
        if (
            address.is_private
            or address.is_link_local
            or address.is_multicast
            or address.is_reserved
            or address.is_unspecified
            or not address.is_global
        ):
            raise DestinationError("Webhooks may not point at private or reserved addresses.")
    if not found:
        raise DestinationError("The webhook host does not resolve.")
