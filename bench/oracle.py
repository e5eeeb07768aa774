"""How much of a host's floor a prober learns from the offline engine's counters.

N fresh deal rooms (``--rooms``, default 50), in process, through the persona's real request
builders, the visibility filter and the room document as the turn pipeline keeps them (the
machinery of ``bench/offline_engine.py`` and ``tests/agents/test_offline_floor.py``). The host
charges ``--ask`` for a reel and never goes below ``--floor``. One account probes, room after
room, three ways in turn, with figures drawn from a fixed seed:

- *stubborn*: one low offer, repeated up to eight times;
- *climber*: a low offer, then up by a fixed step each message until the host's side settles,
  stops answering (it asked its principal) or twelve messages were sent;
- *bisect*: one offer repeated until the counters stop moving, the offer chosen by a binary
  search over the rooms so far on "was it ever settled?".

The prober knows the code and the documented split (``host.negotiation.settle_share`` unset:
half-way), so it solves for the floor the strongest way there is: every candidate floor on a
``--grid`` dollar grid from 30% of the ask up to it is replayed against the same messages, and
only those giving exactly the answers seen (decision and amount, or no answer) survive. Printed:
the bound on the floor after the last room, its width against the floor, and the rooms and
messages it took to reach it (and to reach 5% of the floor, if it ever did). It asserts nothing.

    .venv/bin/python bench/oracle.py [--rooms 50] [--ask 9000] [--floor 6200] [--before REF]

``--before REF`` also measures the engine at git ref REF (unpacked with ``git archive`` into a
temporary directory and run in its own process), or in REF when it is a directory holding a
``dealroom`` package, and prints both.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

Seen = tuple[str, int | None]
"""What one message drew: the ruling's decision and amount, or ("none", None)."""


def _engine() -> Callable[[dict[str, Any], str, Any], tuple[dict[str, Any], Any]]:
    """One persona turn on this process's ``dealroom`` (whichever is on the path)."""
    from dealroom.agents import persona
    from dealroom.agents.models.offline import respond
    from dealroom.agents.persona import PersonaInput, PersonaOutput
    from dealroom.agents.render import Party
    from dealroom.domain import memory_records
    from dealroom.domain.offer_stage import Stage
    from dealroom.domain.seats import RoomKind
    from dealroom.domain.visibility import visible_memory

    host, brand = Party("host", "Maya Lin"), Party("visitor", "Dana Ortiz")

    def turn(room: dict[str, Any], pane: str, trigger: Any) -> tuple[dict[str, Any], Any]:
        request = persona.build(
            PersonaInput(
                room_kind="deal",
                pane=pane,
                represents=host,
                speaking_with=host if pane == "host" else brand,
                memory=visible_memory(room, pane=pane, room_kind=RoomKind.DEAL),
                plan=memory_records.own_plan(room, pane),
                account_facts=None,
                session=[],
                trigger=trigger,
                send_to=["visitor" if pane == "host" else "host"],
                deliveries=[],
                stage=Stage.NO_WRITTEN_OFFER,
            ),
            model="bench",
        )
        output = PersonaOutput.model_validate_json(respond(request))
        room = memory_records.set_plan(room, pane, output.plan)
        room, _ = memory_records.rule_goals(
            room, [(g.key, g.status, g.reason) for g in output.goals], by=pane
        )
        return room, output

    return turn


class Room:
    """One fresh deal room: a host with an ask and a floor for a reel, and a brand."""

    def __init__(self, ask: int, floor: int) -> None:
        from dealroom.agents.persona import Trigger

        self.trigger = Trigger
        self.turn = _engine()
        self.document: dict[str, Any] = {
            "host": {
                "rates": {"reel": {"ask": f"{ask} USD"}},
                "limits": {"reel": {"floor": str(floor), "currency": "USD"}},
            },
            "visitor": {"name": "Dana Ortiz", "company": "Brightwave"},
            "deal": {},
        }
        self.sent = 0
        self.dispatches = 0

    def say(self, amount: int) -> Seen:
        """The brand offers ``amount`` for a reel: what crossed back to its pane."""
        from dealroom.domain import memory_records

        body = f"We'd love a reel for ${amount:,}." if not self.sent else f"How about ${amount:,}?"
        self.sent += 1
        self.document, said = self.turn(self.document, "visitor", self.trigger("message", body))
        for to_host in said.sends:
            trigger = self.trigger(
                "delivery", to_host.substance, "visitor", None, tuple(to_host.open_questions)
            )
            self.document, ruled = self.turn(self.document, "host", trigger)
            for back in ruled.sends:
                if back.ruling is None:
                    continue
                ruling = back.ruling.model_dump()
                self.dispatches += 1
                delivered = self.trigger("delivery", back.substance, "host", ruling, ())
                self.document, _ = self.turn(self.document, "visitor", delivered)
                self.document = memory_records.record_ruling(
                    self.document, "visitor", ruling, f"d{self.dispatches}"
                )
                amount_text = ruling.get("amount")
                return ruling["decision"], int(float(amount_text)) if amount_text else None
        return "none", None


@dataclass
class Probe:
    """One room's messages and what each drew."""

    kind: str
    offers: list[int] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)


def _stubborn(room: Room, offer: int) -> Probe:
    """The same offer until the counters have stood still for three messages."""
    probe = Probe("stubborn")
    for _ in range(8):
        probe.offers.append(offer)
        probe.seen.append(room.say(offer))
        if probe.seen[-1][0] != "counter" or probe.seen[-3:] == [probe.seen[-1]] * 3:
            break
    return probe


def _climber(room: Room, start: int, step: int) -> Probe:
    """Up by ``step`` a message, never to the counter itself (that would only settle)."""
    probe = Probe("climber")
    offer = start
    for _ in range(12):
        probe.offers.append(offer)
        probe.seen.append(room.say(offer))
        decision, counter = probe.seen[-1]
        if decision != "counter" or counter is None:
            break
        offer = min(offer + step, counter - 50)
        if offer <= probe.offers[-1]:
            break  # pressed against the counter: nothing more to learn by climbing
    return probe


def _repeat(room: Room, offer: int) -> Probe:
    probe = Probe("bisect")
    for _ in range(8):
        probe.offers.append(offer)
        probe.seen.append(room.say(offer))
        if probe.seen[-1][0] != "counter" or (
            len(probe.seen) > 1 and probe.seen[-1] == probe.seen[-2]
        ):
            break
    return probe


def replay(probe: Probe, ask: int, floor: int) -> list[Seen]:
    """What the same messages draw from a host with this ``floor``."""
    room = Room(ask, floor)
    seen = []
    for offer in probe.offers:
        seen.append(room.say(offer))
        if seen[-1] != probe.seen[len(seen) - 1]:
            break  # told apart: no need to go on
    return seen


def measure(rooms: int, ask: int, floor: int, grid: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    candidates = list(range(grid * ((ask * 3 // 10) // grid + 1), ask, grid))
    low, high = 500, ask  # the bisect prober's bracket on "ever settled?"
    messages = 0
    history: list[dict[str, Any]] = []
    within_5: dict[str, int] | None = None
    started = time.process_time()
    for number in range(rooms):
        room = Room(ask, floor)
        kind = ("climber", "stubborn", "bisect")[number % 3]
        if kind == "climber":
            probe = _climber(room, rng.randrange(500, ask // 2, 50), rng.randrange(250, 1550, 50))
        elif kind == "stubborn":
            probe = _stubborn(room, rng.randrange(500, ask, 50))
        else:
            middle = (low + high) // 2 // 50 * 50
            probe = _repeat(room, middle)
            if any(decision == "settle" for decision, _amount in probe.seen):
                high = middle
            else:
                low = middle
        messages += len(probe.offers)
        candidates = [c for c in candidates if replay(probe, ask, c) == probe.seen]
        bound = (min(candidates), max(candidates) + grid) if candidates else None
        history.append({"room": number + 1, "messages": messages, "bound": bound})
        if within_5 is None and bound is not None and bound[1] - bound[0] <= floor * 0.05:
            within_5 = {"rooms": number + 1, "messages": messages}
    final = history[-1]["bound"]
    reached = next(h for h in history if h["bound"] == final)
    return {
        "rooms": rooms,
        "messages": messages,
        "bound": final,
        "contains_floor": final is not None and final[0] <= floor < final[1],
        "reached": {"rooms": reached["room"], "messages": reached["messages"]},
        "within_5": within_5,
        "cpu_seconds": time.process_time() - started,
    }


def _describe(found: dict[str, Any], floor: int) -> str:
    bound = found["bound"]
    if bound is None:
        return "  no floor on the grid is consistent with what was seen"
    width = bound[1] - bound[0]
    lines = [
        f"  best bound on the floor: [${bound[0]:,}, ${bound[1]:,}) — ${width:,} wide, "
        f"{100 * width / floor:.1f}% of the floor"
        + ("" if found["contains_floor"] else " (and it misses the floor)"),
        f"  reached after {found['reached']['rooms']} rooms / {found['reached']['messages']} "
        f"messages (of {found['rooms']} rooms / {found['messages']} messages)",
    ]
    within = found["within_5"]
    lines.append(
        f"  floor bounded within 5% after {within['rooms']} rooms / {within['messages']} messages"
        if within
        else "  floor never bounded within 5%"
    )
    return "\n".join(lines)


def _run(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, __file__, "--measure"]
    for name in ("rooms", "ask", "floor", "grid", "seed"):
        command += [f"--{name}", str(getattr(args, name))]
    out = subprocess.run(
        command, env=env, cwd=tree, check=True, capture_output=True, text=True
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--ask", type=int, default=9000)
    parser.add_argument("--floor", type=int, default=6200)
    parser.add_argument("--grid", type=int, default=25, help="the solver's grid, in dollars")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--before", default=None, help="git ref of an engine to compare with")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.rooms, args.ask, args.floor, args.grid, args.seed)))
        return
    print(
        f"floor oracle: {args.rooms} rooms, a reel at ${args.ask:,} with a ${args.floor:,} floor, "
        f"solver grid ${args.grid}, seed {args.seed}"
    )
    if args.before and Path(args.before).is_dir():
        before = _run(Path(args.before).resolve(), args)
    elif args.before:
        archive = subprocess.run(
            ["git", "archive", args.before, "dealroom"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(fileobj=BytesIO(archive)) as tar:
                tar.extractall(tmp, filter="data")
            before = _run(Path(tmp), args)
    if args.before:
        print(f" before ({args.before}):")
        print(_describe(before, args.floor))
    after = _run(ROOT, args)
    print(" this tree:" if args.before else " this engine:")
    print(_describe(after, args.floor))


if __name__ == "__main__":
    main()
