"""Arvist's and AccUpdate's rules: promote the participant's own standing facts and the closed
deals code derived; name the legacy floor a merged limit replaces."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dealroom.agents.acc_update import AccUpdateOutput
from dealroom.agents.arvist import ArvistOutput, DurableChange
from dealroom.agents.models.offline.common import _at, _list, _map, _str, _strings
from dealroom.domain import durable, limits

TRANSIENT = frozenset({"claims"})
"""What someone said happened elsewhere is about this sitting, never a durable fact."""


def arvist_output(context: Mapping[str, Any]) -> ArvistOutput:
    current = _map(context.get("durable"))
    branch = _map(context.get("branch"))
    changes: list[DurableChange] = []
    held_limits = _map(current.get(limits.LIMITS))
    for slug, entry in _map(branch.get(limits.LIMITS)).items():
        # D8 (memory M12): a limit is set whole, as data, never leaf by leaf
        limit = limits.parse_limit(json.dumps(_map(entry)))
        if limit is not None:
            limit.pop("source", None)  # a message id of the room it was said in
            if _map(held_limits.get(slug)) != limit:
                changes.append(
                    DurableChange(op="set", path=f"{limits.LIMITS}.{slug}", value=json.dumps(limit))
                )
    for path, value in durable.leaves(branch).items():
        if not durable.durable_path_allowed(path) or path.split(".")[0] in TRANSIENT:
            continue
        if path.split(".")[0] == limits.LIMITS:
            continue  # set whole above
        if path.endswith(".source"):
            continue  # a message id of the room it was said in, meaningless in any other
        held = _at(current, path)
        if isinstance(value, str):
            if held != value and not isinstance(held, Mapping):
                changes.append(DurableChange(op="set", path=path, value=value))
        elif isinstance(value, list):
            present = {s.casefold() for s in _strings(held)} | {
                s.casefold() for s in _strings([_map(e).get("text") for e in _list(held)])
            }
            if isinstance(held, Mapping):
                continue
            for entry in value:
                # a private term is {"text", "source"} (domain/limits.py): its text is what
                # lasts; the source message belongs to the room it was said in
                item = entry.get("text") if isinstance(entry, Mapping) else entry
                if isinstance(item, str) and item.casefold() not in present:
                    changes.append(DurableChange(op="append", path=path, value=item))
                    present.add(item.casefold())
    deals = _map(current.get(durable.DEALS))
    for deal in _list(context.get("closed_deals")):
        entry = _map(deal)
        key = _str(entry.get("key"))
        if not key or key in deals:
            continue
        for field in ("fee", "date", "counterparty"):
            text = _str(entry.get(field))
            if text:
                changes.append(DurableChange(op="set", path=f"deals.{key}.{field}", value=text))
        items = [s for s in _list(entry.get("deliverables")) if isinstance(s, str)]
        if items:
            changes.append(
                DurableChange(op="set", path=f"deals.{key}.deliverables", value="; ".join(items))
            )
    return ArvistOutput(changes=changes)


def acc_update_output(context: Mapping[str, Any]) -> AccUpdateOutput:
    """A merged ``limits.<slug>`` makes a legacy ``rates.<slug>.floor`` stale, and a merged
    legacy floor makes nothing stale (the limit, if any, is newer knowledge)."""
    merged = _map(context.get("merged"))
    branch = _map(context.get("branch"))
    stale: list[str] = []
    for path in merged:
        parts = path.split(".")
        if len(parts) >= 2 and parts[0] == "limits":
            legacy = f"rates.{parts[1]}.floor"
            if _at(branch, legacy) is not None and legacy not in merged:
                stale.append(legacy)
    return AccUpdateOutput(stale=sorted(set(stale)))
