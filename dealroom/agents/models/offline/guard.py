"""The Guard's rules offline: the seed's failure shapes, read from the audit context alone.

- A reply that promised a delivery ("I'll take this to them now") whose own turn sent
  nothing: the participant's words before it are delivered to the other side.
- A goal ruled met with no agreement in any transcript or ruling: reopened.
- An agent's own line calling the deal booked or paid when the DEAL STAGE shows no booking:
  corrected in that pane. A line marked as a relay is never the agent's own claim.
Anything else is healthy: empty lists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from dealroom.agents.guard import Finding, GoalFix, GuardOutput, GuardSend
from dealroom.agents.models.offline.common import _list, _map, _str
from dealroom.domain.offer_stage import BOOKED, GLOSSES, Stage

_PROMISE: Final = re.compile(
    r"\b(?:i'll|i will|i am going to|i'm going to|let me)\s+"
    r"(?:take|get|pass|send|bring|relay|forward|put)\b"
    r"|\blet (?:them|him|her) know\b",
    re.I,
)
_AGREED: Final = re.compile(
    r"\b(?:agree[sd]?|agreed|deal|works for (?:me|us)|settled?|go ahead|sounds good|we're in)\b",
    re.I,
)
_BOOKING_CLAIM: Final = re.compile(
    r"(?<!not )\b(?:booked|is paid|been paid|payment (?:is )?(?:held|received|captured))\b",
    re.I,
)
_CORRECTED: Final = re.compile(r"\bnot booked\b", re.I)


def _lines(pane: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [line for line in _list(pane.get("session")) if isinstance(line, Mapping)]


def _other(panes: list[Mapping[str, Any]], key: str, host: str) -> str | None:
    """Who a pane's promise is owed to: the host for a visitor pane, else the first visitor."""
    if key != host:
        return host if any(_str(p.get("key")) == host for p in panes) else None
    return next((_str(p.get("key")) for p in panes if _str(p.get("key")) != host), None)


def _owed(pane: Mapping[str, Any], to: str) -> GuardSend | None:
    reply = _str(pane.get("last_reply"))
    if not reply or not _PROMISE.search(reply) or _list(pane.get("last_reply_sent_to")):
        return None
    lines = _lines(pane)
    said = ""
    for line in lines:
        if _str(line.get("author")) == "participant":
            said = _str(line.get("body"))
        elif _str(line.get("body")) == reply:
            break
    if not said:
        return None
    name = _str(pane.get("name")) or "They"
    return GuardSend(from_pane=_str(pane.get("key")), to=to, substance=f"{name} says: {said}")


def _agreed(context: Mapping[str, Any]) -> bool:
    if _str(_map(context.get("stage")).get("stage")) not in ("", Stage.NO_WRITTEN_OFFER.value):
        return True  # a written offer was drawn from agreed terms
    for rulings in _map(_map(context.get("memory")).get("rulings")).values():
        if any(_str(_map(r).get("decision")) == "settle" for r in _list(rulings)):
            return True
    for dispatch in _list(context.get("dispatches")):
        ruling = _map(_map(dispatch).get("ruling"))
        if _str(ruling.get("decision")) == "settle":
            return True
    return any(
        _AGREED.search(_str(line.get("body")))
        for pane in _list(context.get("panes"))
        for line in _lines(_map(pane))
    )


def _false_booking(pane: Mapping[str, Any], stage: Stage) -> str | None:
    """The agent's own latest booking claim the stage does not back, unless corrected since."""
    if stage in BOOKED:
        return None
    claim: str | None = None
    for line in _lines(pane):
        if _str(line.get("author")) != "agent":
            continue
        body = _str(line.get("body"))
        if line.get("relayed_from"):
            continue  # a relay is someone else's words, delivered: never the agent's claim
        # A quoted text (the held send a principal is asked to confirm) is not the agent's claim.
        if _BOOKING_CLAIM.search(re.sub("\u201c[^\u201d]*\u201d", "", body)):
            claim = body
        elif claim is not None and _CORRECTED.search(body):
            claim = None
    return claim


def guard_output(context: Mapping[str, Any]) -> GuardOutput:
    host = _str(_map(context.get("represents")).get("key")) or "host"
    panes = [_map(p) for p in _list(context.get("panes"))]
    stage_raw = _str(_map(context.get("stage")).get("stage"))
    stage = Stage(stage_raw) if stage_raw in Stage.__members__ else Stage.NO_WRITTEN_OFFER
    out = GuardOutput()
    for pane in panes:
        key = _str(pane.get("key"))
        to = _other(panes, key, host)
        owed = _owed(pane, to) if to is not None else None
        if owed is not None:
            out.findings.append(
                Finding(pane=key, problem="The agent promised a delivery its turn never sent.")
            )
            out.sends.append(owed)
        claim = _false_booking(pane, stage)
        if claim is not None:
            out.findings.append(
                Finding(pane=key, problem=f"Claimed a booking the stage does not show: {claim}")
            )
            out.sends.append(
                GuardSend(
                    from_pane=key,
                    to=key,
                    substance=(
                        f"To correct an earlier message: it is not booked yet — {GLOSSES[stage]}."
                    ),
                )
            )
    goals = _map(context.get("goals"))
    for goal_key, entry in goals.items():
        if _str(_map(entry).get("status")) == "met" and not _agreed(context):
            out.findings.append(
                Finding(pane=host, problem=f"Goal {goal_key} is met but nothing was agreed.")
            )
            out.goals.append(GoalFix(key=str(goal_key), reason="No agreement in any transcript."))
    return out
