"""The offline engine at two revisions, in one run: CPU per turn, and what a floor prober learns
over fresh rooms.

"Before" is the engine at ``--before`` (default: where this branch left main), unpacked with
``git archive`` into a temporary directory; "after" is this tree. Each is measured in its own
Python process (so each imports only its own ``dealroom``), on the same workload:

- **CPU per turn**: process CPU time of ``respond()`` over a fixed set of persona requests
  (visitor messages in everyday phrasing and host-side rulings), each built by the agents'
  own builders from a room document; and Offer-Gen requests over the same conversations.
- **Prober**: a binary search for the least the host takes, over fresh rooms (a fresh room document
  each), with the host's ask $8,000 and floor $6,000. *One-shot*: one proposal per room, reading
  "was I countered at the ask?" (a floor oracle). *Persistent*: the same proposal up to six times
  per room until the host side settles or stops conceding. Reported: rooms and messages until the
  bracket is within 5% of the floor, or where the search converges when it never gets there.

    .venv/bin/python bench/offline_engine.py [--before REF] [--repeat N]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ASK, FLOOR = 8000, 6000

ROOM: dict[str, Any] = {
    "host": {
        "rates": {"sponsored_post": {"ask": "8000 USD", "floor": "6000 USD"}},
        "rules": ["never work with alcohol brands"],
        "exclusions": ["alcohol"],
        "public": {"rate_card": ["sponsored_post from 5000 USD"]},
    },
    "visitor": {"name": "Dana Ortiz", "company": "Brightwave"},
    "deal": {},
}
VISITOR_LINES = [
    "Hi! We're Brightwave and we'd love a sponsored post, live mid-March.",
    "We can pay $5,000 for a sponsored post.",
    "Could you do $6,500?",
    "Two sponsored posts for $14,000, 50% at booking, rest on delivery?",
    "What's your rate for a sponsored Instagram post?",
    "Sounds good!",
    "Agreed",
    "Could we do $7,700 for the sponsored post on 15 March 2026?",
]
HOST_PROPOSALS = [
    "Dana Ortiz proposes a sponsored post for $5,000.",
    "Dana Ortiz proposes a sponsored post for $6,500 on March 15.",
    "Dana Ortiz proposes 2 sponsored posts for $14,000.",
    "Dana Ortiz agrees to the sponsored post at $8,000.",
]


def _engine() -> Any:
    """This process's engine and builders (whichever ``dealroom`` is on the path)."""
    from dealroom.agents import offer_gen, persona
    from dealroom.agents.models.offline import respond
    from dealroom.agents.persona import PersonaInput, PersonaOutput, Trigger
    from dealroom.agents.render import Line, Party
    from dealroom.domain.offer_stage import Stage
    from dealroom.domain.seats import RoomKind
    from dealroom.domain.visibility import visible_memory

    try:  # the code-written parts (plans, goals, rulings) moved out of domain.memory
        memdoc = importlib.import_module("dealroom.domain.memory_records")
    except ModuleNotFoundError:  # a ``--before`` tree from before that split
        memdoc = importlib.import_module("dealroom.domain.memory")

    return (
        offer_gen,
        persona,
        respond,
        PersonaInput,
        PersonaOutput,
        Trigger,
        Line,
        Party,
        memdoc,
        Stage,
        RoomKind,
        visible_memory,
    )


def measure(repeat: int) -> dict[str, Any]:
    (
        offer_gen,
        persona,
        respond,
        PersonaInput,
        PersonaOutput,
        Trigger,
        Line,
        Party,
        memdoc,
        Stage,
        RoomKind,
        visible_memory,
    ) = _engine()
    host, visitor = Party("host", "Maya Lin"), Party("visitor", "Dana Ortiz")

    def request(pane: str, trigger: Any, room: dict[str, Any], plan: str = "") -> Any:
        return persona.build(
            PersonaInput(
                room_kind="deal",
                pane=pane,
                represents=host,
                speaking_with=host if pane == "host" else visitor,
                memory=visible_memory(room, pane=pane, room_kind=RoomKind.DEAL),
                plan=plan,
                account_facts=None,
                session=[],
                trigger=trigger,
                send_to=["visitor" if pane == "host" else "host"],
                deliveries=[],
                stage=Stage.NO_WRITTEN_OFFER,
            ),
            model="bench",
        )

    def workload(tag: str) -> list[Any]:
        """The requests, each line ending in ``tag`` (distinct tags defeat any cache)."""
        lines = [f"{line}{tag}" for line in VISITOR_LINES]
        built = [request("visitor", Trigger("message", line), ROOM) for line in lines]
        built += [
            request("host", Trigger("delivery", f"{body}{tag}", "visitor", None, ()), ROOM)
            for body in HOST_PROPOSALS
        ]
        transcript = [Line("participant", line) for line in lines]
        transcript.insert(3, Line("agent", "Maya Lin can do the sponsored post at $8,000."))
        built.append(
            offer_gen.build(
                offer_gen.OfferGenInput(
                    represents=host,
                    counterparty=visitor,
                    memory=visible_memory(ROOM, pane="visitor", room_kind=RoomKind.DEAL),
                    transcript=transcript,
                    rulings=[{"decision": "counter", "amount": "8000", "currency": "USD"}],
                    current_terms=None,
                    stage=Stage.NO_WRITTEN_OFFER,
                ),
                model="bench",
            )
        )
        return built

    def cpu_per_turn(batches: list[list[Any]]) -> float:
        started = time.process_time()
        for batch in batches:
            for item in batch:
                respond(item)
        return (time.process_time() - started) / sum(len(batch) for batch in batches)

    for item in workload(""):  # lazy imports and compiled patterns, as a running server has
        respond(item)
    same = workload("")
    warm = cpu_per_turn([same] * repeat)  # the same lines again: a session re-read each turn
    cold = cpu_per_turn([workload(f" Ref {k}.") for k in range(repeat)])  # every line new
    turns = repeat * len(same)

    def say(room: dict[str, Any], body: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The brand posts ``body``: the visitor turn, the host ruling, its delivery."""
        ruling_back = None

        def turn(room: dict[str, Any], pane: str, trigger: Any) -> tuple[dict[str, Any], Any]:
            plan = memdoc.own_plan(room, pane)
            output = PersonaOutput.model_validate_json(respond(request(pane, trigger, room, plan)))
            room = memdoc.set_plan(room, pane, output.plan)
            room, _ = memdoc.rule_goals(
                room, [(g.key, g.status, g.reason) for g in output.goals], by=pane
            )
            return room, output

        room, said = turn(room, "visitor", Trigger("message", body))
        for send in said.sends:
            trigger = Trigger(
                "delivery", send.substance, "visitor", None, tuple(send.open_questions)
            )
            room, ruled = turn(room, "host", trigger)
            for back in ruled.sends:
                if back.ruling is None:
                    continue
                ruling_back = back.ruling.model_dump()
                room = memdoc.record_ruling(room, "visitor", ruling_back, f"d{len(str(room))}")
        return room, ruling_back

    def one_shot(amount: int) -> tuple[bool, int]:
        """Below the floor?: countered at the ask counts as 'below'."""
        _room, ruling = say(
            json.loads(json.dumps(ROOM)), f"We can pay ${amount:,} for a sponsored post."
        )
        assert ruling is not None
        return ruling["decision"] == "counter" and ruling["amount"] == str(ASK), 1

    def persistent(amount: int) -> tuple[bool, int]:
        """Below what the host takes?: it never settled at this amount."""
        room = json.loads(json.dumps(ROOM))
        last = None
        for sent in range(1, 7):
            room, ruling = say(room, f"We can pay ${amount:,} for a sponsored post.")
            assert ruling is not None
            if ruling["decision"] == "settle":
                return False, sent
            if ruling["amount"] == last:
                return True, sent
            last = ruling["amount"]
        return True, 6

    def search(prober: Any) -> dict[str, Any]:
        low, high, rooms, messages = 1000, ASK, 0, 0
        bounded = None
        while high - low > 10 and rooms < 40:
            middle = (low + high) // 2
            below, sent = prober(middle)
            rooms, messages = rooms + 1, messages + sent
            if below:
                low = middle
            else:
                high = middle
            if bounded is None and low <= FLOOR <= high and (high - low) <= FLOOR * 0.05:
                bounded = {"rooms": rooms, "messages": messages}
        return {"converges_on": high, "rooms": rooms, "messages": messages, "bounded": bounded}

    return {
        "cpu_warm_ms": warm * 1000,
        "cpu_cold_ms": cold * 1000,
        "turns": turns,
        "one_shot": search(one_shot),
        "persistent": search(persistent),
    }


def _run(pythonpath: Path, repeat: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    out = subprocess.run(
        [sys.executable, __file__, "--measure", "--repeat", str(repeat)],
        env=env,
        cwd=pythonpath,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _base() -> str:
    found = subprocess.run(
        ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True
    )
    return found.stdout.strip() or "HEAD~1"


def _describe(name: str, found: dict[str, Any]) -> str:
    bounded = found["bounded"]
    how = (
        f"floor bounded within 5% after {bounded['rooms']} rooms / {bounded['messages']} messages"
        if bounded
        else "floor never bounded within 5%"
    )
    return (
        f"  {name:<11} converges on ${found['converges_on']:,} after {found['rooms']} rooms / "
        f"{found['messages']} messages; {how}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default=None, help="git ref of the engine to compare with")
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.repeat)))
        return
    before_ref = args.before or _base()
    archive = subprocess.run(
        ["git", "archive", before_ref, "dealroom"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        before = _run(Path(tmp), args.repeat)
    after = _run(ROOT, args.repeat)
    print(f"offline engine, before = {before_ref[:10]}, after = this tree ({os.cpu_count()} cores)")
    for key, what in (("cpu_cold_ms", "every line new"), ("cpu_warm_ms", "lines re-read")):
        print(
            f"CPU per turn ({what}): before {before[key]:.3f} ms, after {after[key]:.3f} ms, "
            f"ratio after/before {after[key] / before[key]:.2f} ({after['turns']} turns each)"
        )
    print(f"floor prober (ask ${ASK:,}, floor ${FLOOR:,}), binary search over fresh rooms:")
    for name, found in (("before", before), ("after", after)):
        print(f" {name}:")
        print(_describe("one-shot", found["one_shot"]))
        print(_describe("persistent", found["persistent"]))


if __name__ == "__main__":
    main()
