"""Services and the parts of durable memory (seed 002 layer 4: "Writes into durable memory are
partitioned into shared vs services.<room.service>").

A host offers services (a sponsored post, a keynote); a deal room is about one of them or, when
the link named none, about none. The account's durable document has two kinds of part:

- ``shared``: the document's top level (every section but ``services``), which holds for every
  service. A document written before services existed is all shared.
- ``services.<key>``: what holds for one service only, in the same shape as the shared part
  (``services.speaking_gig.limits.keynote`` is ``limits.keynote`` in a speaking-gig room).

Numbered rules, cited by the code and tests that depend on them:

- S1  A deal room's view of durable memory is the shared part with its service's part laid over
      it (the service's leaf wins); a room with no service sees the shared part only. No other
      service's part ever reaches the room: not at the seed, not at a merge, not in Arvist's
      input. A home room is the host's own and sees the whole document.
- S2  A durable path reaches a room's view as the path in that view (``services.<its key>.x``
      is ``x``; another service's path reaches nothing).
- S3  Arvist names a change in the room's view and says which part it belongs to; code routes
      it: ``service`` to ``services.<room's key>`` (to the shared part in a room with no
      service), ``shared`` to the top level. A model never names ``services`` itself.
- S4  A service's key is its name in lower case with every run of other characters one ``_``
      (``Speaking gig`` is ``speaking_gig``): it is a path segment and the last part of the
      link ``/z/<handle>/<key>``, so it is public; the parts themselves are as private as the
      rest of durable memory.
- S5  A shared leaf filed under another of the host's services by key (``limits.sponsored_post``
      when the host also sells a sponsored post) is about that service: a room about a different
      service does not see it, at the seed, at a merge or in Arvist's input. A floor told in the
      home room (which is about no service) is shared, so this is what keeps it out of a
      speaking-gig room; a room about no service, or about that service, still sees it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final

from dealroom.domain import durable, provenance
from dealroom.domain import memory as memdoc
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.seats import RoomKind

SERVICES: Final = "services"
"""The section of the durable document that holds the per-service parts."""

KEY_MAX: Final = 40
NAME_MAX: Final = 120
MAX_SERVICES: Final = 20

_NOT_KEY = re.compile(r"[^a-z0-9]+")


class Part(StrEnum):
    """Which part of durable memory an Arvist change belongs to (S3)."""

    SHARED = "shared"
    SERVICE = "service"


def service_key(name: str) -> str:
    """S4: the key of a service named ``name`` (also how a link's last segment is read)."""
    key = _NOT_KEY.sub("_", name.strip().lower()).strip("_")[:KEY_MAX].strip("_")
    if not key:
        raise DomainError(
            ErrorCode.BAD_USER_INPUT,
            "A service needs a name with a letter or a digit in it.",
            field="services",
        )
    return key


def clean_names(names: Sequence[str]) -> list[tuple[str, str]]:
    """The host's list of services as ``(key, name)``, in order; refused when two names share a
    key, a name is too long, or there are too many."""
    if len(names) > MAX_SERVICES:
        raise DomainError(
            ErrorCode.BAD_USER_INPUT,
            f"At most {MAX_SERVICES} services.",
            field="services",
        )
    cleaned: list[tuple[str, str]] = []
    seen: set[str] = set()
    for raw in names:
        name = " ".join(raw.split())
        if len(name) > NAME_MAX:
            raise DomainError(
                ErrorCode.BAD_USER_INPUT,
                f"A service's name is at most {NAME_MAX} characters.",
                field="services",
            )
        key = service_key(name)
        if key in seen:
            raise DomainError(
                ErrorCode.BAD_USER_INPUT,
                f"Two services would share the link /{key}.",
                field="services",
            )
        seen.add(key)
        cleaned.append((key, name))
    return cleaned


def _deep_over(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in over.items():
        held = base.get(name)
        if isinstance(value, Mapping) and isinstance(held, dict):
            _deep_over(held, value)
        else:
            base[name] = copy.deepcopy(value)
    return base


def shared_part(
    document: Mapping[str, Any], others: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The top level but ``services``; without what is filed under ``others`` by key (S5)."""
    shared: dict[str, Any] = {}
    for name, value in document.items():
        if name == SERVICES:
            continue
        if others and isinstance(value, Mapping) and not others.isdisjoint(value):
            value = {k: v for k, v in value.items() if k not in others}
            if not value:
                continue  # the section held only other services' leaves
        shared[name] = copy.deepcopy(value)
    return shared


def _others(service: str | None, services: Collection[str]) -> frozenset[str]:
    """S5: the host's services a room about ``service`` is not about (none for no service)."""
    return frozenset() if service is None else frozenset(services) - {service}


def service_part(document: Mapping[str, Any], service: str | None) -> dict[str, Any]:
    parts = document.get(SERVICES)
    if service is None or not isinstance(parts, Mapping):
        return {}
    part = parts.get(service)
    return copy.deepcopy(dict(part)) if isinstance(part, Mapping) else {}


def view(
    document: Mapping[str, Any], service: str | None, services: Collection[str] = ()
) -> dict[str, Any]:
    """S1, S5: what a deal room about ``service`` sees of the durable ``document``;
    ``services``: the keys of every service the host offers."""
    shared = shared_part(document, _others(service, services))
    return _deep_over(shared, service_part(document, service))


def room_view(
    document: Mapping[str, Any],
    kind: RoomKind,
    service: str | None,
    services: Collection[str] = (),
) -> dict[str, Any]:
    """S1: the home room sees every part; a deal room its view."""
    if kind == RoomKind.HOME:
        return copy.deepcopy(dict(document))
    return view(document, service, services)


def view_path(path: str, service: str | None, services: Collection[str] = ()) -> str | None:
    """S2, S5: a durable path as it reads in a deal room about ``service`` (None: not in it)."""
    head, _, rest = path.partition(".")
    if head != SERVICES:
        key = rest.partition(".")[0]
        return None if rest and key in _others(service, services) else path
    key, _, inner = rest.partition(".")
    if service is None or key != service or not inner:
        return None
    return inner


def view_paths(
    paths: Iterable[str], service: str | None, services: Collection[str] = ()
) -> list[str]:
    return sorted({v for p in paths if (v := view_path(p, service, services)) is not None})


def room_paths(
    paths: Iterable[str], kind: RoomKind, service: str | None, services: Collection[str] = ()
) -> list[str]:
    """:func:`view_path` for every path, or the paths themselves in a home room (S1)."""
    if kind == RoomKind.HOME:
        return sorted(set(paths))
    return view_paths(paths, service, services)


def view_dates(
    dates: Mapping[str, Any], service: str | None, services: Collection[str] = ()
) -> dict[str, Any]:
    """The leaf dates of a view (S2); a service's date wins over the shared leaf's."""
    found: dict[str, Any] = {}
    for path, day in sorted(dates.items(), key=lambda item: item[0].startswith(SERVICES)):
        seen = view_path(path, service, services)
        if seen is not None:
            found[seen] = day
    return found


def model_may_name(path: str) -> bool:
    """S3: a model names its change in the room's view, never a part."""
    return path.split(".", 1)[0] != SERVICES


def target(part: Part, service: str | None) -> str | None:
    """S3: the service whose part a change goes to (None: the shared part)."""
    return service if part is Part.SERVICE else None


def routed(path: str, to: str | None) -> str:
    return path if to is None else f"{SERVICES}.{to}.{path}"


@dataclass(frozen=True, slots=True)
class Curated:
    document: dict[str, Any]
    rejected: tuple[memdoc.Rejected, ...]


def curate(
    document: Mapping[str, Any],
    changes: Sequence[tuple[Part, memdoc.Change]],
    *,
    service: str | None,
    room_branch: Mapping[str, Any] | None,
    said: Sequence[provenance.Said] = (),
    band_percent: Decimal | None = None,
    services: Collection[str] = (),
) -> Curated:
    """S3 with D8 and D10: each part's changes are checked against the room's view (what the
    room's writer is held to) and what they changed in that view is written to their part. With
    ``room_branch`` (a host's run), the room's floors the view lacks go to the room's own part."""
    result: dict[str, Any] = copy.deepcopy(dict(document))
    rejected: list[memdoc.Rejected] = []

    def write(delta: Sequence[durable.LeafChange], to: str | None) -> None:
        for change in delta:
            durable.set_leaf(result, routed(change.path, to), change.new)

    for part in (Part.SHARED, Part.SERVICE):
        mine = [change for chosen, change in changes if chosen is part]
        if not mine:
            continue
        seen = view(result, service, services)
        applied = durable.curate(seen, mine, said=said, band_percent=band_percent)
        rejected.extend(applied.rejected)
        write(durable.diff(seen, applied.document), target(part, service))
    if room_branch is not None:  # D10
        seen = view(result, service, services)
        write(durable.diff(seen, durable.keep_limits(seen, room_branch)), service)
    return Curated(durable.prune(result), tuple(rejected))
