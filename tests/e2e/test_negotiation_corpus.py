"""The negotiation corpus: every script in ``tests/data/negotiations/`` played end to end through
the real server on the offline engine — the host teaches its rates in its home room, a guest brand
opens a deal room and posts each line, the host answers in the deal room's own pane where the
script says so — and the written offer must carry exactly the expected terms (or no offer, and a
refusal in the brand's pane; or, for a yes with nothing proposed, no offer and a request for a
proposal).

The corpus is played in ``CHUNKS`` chunks, each a test with its own server, so pytest-xdist
spreads it over its workers. Within a chunk the scripts run concurrently in lock step (every
script posts its k-th line, then the agents settle), so a chunk costs about as many agent
rounds as its longest script.

Checked for every script as well (floor safety): no line the brand's pane shows, no term of
the written offer and no word of its agreement holds a floor the host taught (its rules' and
any it stated in the deal room) in any written form, the schedule's own figures aside,
and the first counter that crossed to the brand is the ask (unless the host named another
figure for this deal).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from dealroom.agents.agreement import schedule
from dealroom.config import Settings
from dealroom.domain import money, pane_words
from dealroom.domain.seats import AuthorKind
from dealroom.domain.terms import format_money
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.graphql import Client, open_room, post, sign_up
from tests.support.offers import OFFER, ROOM_STAGE
from tests.support.turns import HOME, memory, messages_in

pytestmark = pytest.mark.asyncio

CORPUS = Path(__file__).parents[1] / "data" / "negotiations"
REFUSAL = "won't be able to take this one on"
MISSING_TERM_ASK = "are we agreeing on"
"""A yes with nothing on the table is answered by asking the one missing term by name ("which
deliverable are we agreeing on?", "what fee are we agreeing on for the reel?")."""


def load_scripts() -> list[dict[str, Any]]:
    scripts: list[dict[str, Any]] = []
    for path in sorted(CORPUS.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["today"] == "2026-01-01", "dates resolve against the test clock's day"
        scripts += document["scripts"]
    return scripts


SCRIPTS = load_scripts()


def floor_forms(shown: str) -> re.Pattern[str]:
    """Every way the floor amount could be written: ``$6,000``, ``6000``, ``6000.00``, ``6k``."""
    digits = Decimal(re.sub(r"[^\d.]", "", shown))
    whole = int(digits)
    forms = [f"{whole:,}", str(whole), f"{whole}.00"]
    if whole % 1000 == 0:
        forms.append(f"{whole // 1000}k")
    alternatives = "|".join(re.escape(form) for form in forms)
    return re.compile(rf"(?<![\d.,])(?:{alternatives})(?![\d,]|\.\d)", re.IGNORECASE)


class Played:
    def __init__(self, script: dict[str, Any], index: int) -> None:
        self.script = script
        self.handle = f"corpus{index:03d}"
        self.host: Client | None = None
        self.visitor: Client | None = None
        self.home_id = ""
        self.room_id = ""


def _client(server: Server) -> Client:
    """A client app that waits longer than the default for an answer: the corpus keeps the
    server's agents busy on purpose, and a post queues behind their writes (SQLite has one
    writer), which on a machine shared with other test runs can exceed the default 30 s."""
    client = server.client()
    client.http.timeout = httpx.Timeout(180)
    return client


async def _teach(server: Server, played: Played) -> None:
    played.host = _client(server)
    await sign_up(played.host, played.handle, f"Host {played.handle[-3:]}")
    played.home_id = (await played.host.query(HOME))["me"]["homeRoom"]["id"]
    await post(played.host, played.home_id, played.script["rules"])


async def _open(server: Server, played: Played) -> None:
    played.visitor = _client(server)
    # a signed-in brand: a guest's notes and offers wait behind the login gate
    await sign_up(played.visitor, f"{played.handle}b", "Brand")
    played.room_id = (await open_room(played.visitor, played.handle))["room"]["id"]


async def _step(played: Played, index: int) -> None:
    steps = played.script["steps"]
    if index >= len(steps):
        return
    step = steps[index]
    client = played.visitor if "visitor" in step else played.host
    assert client is not None
    await post(client, played.room_id, step.get("visitor") or step["host"])


async def _outcome(db: Db, played: Played) -> dict[str, Any]:
    assert played.visitor is not None
    room = (await played.visitor.query(ROOM_STAGE, {"id": played.room_id}))["room"]
    offer = None
    if room["offer"] is not None:
        offer = (await played.visitor.query(OFFER, {"id": room["offer"]["id"]}))["offer"]
    lines = [
        m.body
        for m in await messages_in(db, played.room_id, "visitor")
        if m.author_kind == AuthorKind.AGENT
    ]
    rulings = (await memory(db, played.room_id)).get("rulings", {}).get("visitor", [])
    return {"offer": offer, "lines": lines, "rulings": rulings}


def check(script: dict[str, Any], outcome: dict[str, Any]) -> list[str]:
    """What differs from the script's expectation (empty when it passed)."""
    expect = script["expect"]
    offer = outcome["offer"]
    problems: list[str] = []
    if expect.get("refusal"):
        if offer is not None:
            problems.append(f"an offer was written: {offer['terms']}")
        if not any(REFUSAL in line for line in outcome["lines"]):
            problems.append(f"no refusal in the brand's pane: {outcome['lines'][-2:]}")
    elif expect.get("asks_for_proposal"):
        # a yes with nothing on the table: no offer, no ruling, the missing term asked by name
        if offer is not None:
            problems.append(f"an offer was written: {offer['terms']}")
        if outcome["rulings"]:
            problems.append(f"the host's side ruled: {outcome['rulings']}")
        if not any(MISSING_TERM_ASK in line for line in outcome["lines"][-1:]):
            problems.append(f"the missing term was not asked: {outcome['lines'][-2:]}")
    else:
        if offer is None:
            return [f"no written offer; the brand's pane ends {outcome['lines'][-3:]}"]
        terms = offer["terms"]
        got = {key: terms[key] for key in expect["offer"]}
        if got != expect["offer"]:
            problems.append(f"terms {got} != {expect['offer']}")
        buyer = expect.get("buyer")
        agreement = (offer.get("agreement") or {}).get("text") or ""
        if buyer is not None and f'{buyer} ("the Brand")' not in agreement:
            problems.append(f"the agreement does not name {buyer}: {agreement[:160]!r}")
    fee_line = expect.get("fee_line")
    if fee_line is not None and not any(fee_line in line for line in outcome["lines"]):
        # P11: the whole price, fee named, told in chat before the written offer is drawn
        problems.append(f"no fee line {fee_line!r} in the brand's pane: {outcome['lines'][-2:]}")
    public = expect.get("public_answer")
    if public is not None:
        # answered from the host's public card, without consulting the host's side
        lines = outcome["lines"]
        answer = lines[public["step"]] if len(lines) > public["step"] else ""
        if public["says"] not in answer or "checking" in answer:
            problems.append(f"no public answer {public['says']!r}: {answer!r}")
    labelled = [line for line in outcome["lines"] if pane_words.labels_in(line)]
    if labelled:
        problems.append(f"a stage label reached the brand's pane (PW1): {labelled[:1]}")
    first = next((r for r in outcome["rulings"] if r.get("decision") == "counter"), None)
    wanted = expect.get("first_counter")
    if wanted is not None and (
        first is None
        or Decimal(first["amount"]) != Decimal(wanted["amount"])
        or first["currency"] != wanted["currency"]
    ):
        problems.append(f"first counter {first} != {wanted}")
    floors = expect.get("floor") or []
    for floor in [floors] if isinstance(floors, str) else floors:
        pattern = floor_forms(floor)
        # What the agents wrote: the pane's lines, the offer's terms and its agreement (the
        # payment quote's and the schedule's figures are code's arithmetic on the fee, and may
        # equal anything).
        terms = (offer or {}).get("terms") or {}
        agreement = ((offer or {}).get("agreement") or {}).get("text") or ""
        lines = [price_masked(line, terms) for line in outcome["lines"]]
        shown = [*lines, json.dumps(terms), schedule_masked(agreement, terms)]
        # account ids (the offer's seller and buyer) are not amounts: "…-9000-…" is no floor
        leaks = [text for text in shown if pattern.search(_UUID.sub("<id>", text))]
        if leaks:
            problems.append(f"the floor {floor} reached the brand: {leaks[:2]}")
    return problems


def schedule_masked(agreement: str, terms: dict[str, Any]) -> str:
    """The agreement's text with the payment schedule's own figures masked: the share due at
    booking and the rest are code's arithmetic on the fee (``agents.agreement.schedule``), so
    they may equal the floor and reveal nothing (the agreement's firewall allows them too).
    Only those figures in the schedule's sentences are masked; the same amount written
    anywhere else in the agreement is still looked for."""
    money = schedule(terms)
    for part in (money.due, money.remaining):
        if part is not None:
            agreement = agreement.replace(f"({format_money(part)}) is due", "(<schedule>) is due")
    return agreement


def price_masked(line: str, terms: dict[str, Any]) -> str:
    """``line`` with the fee line's figures masked: the due slice, the platform fee and the total
    are code's arithmetic on the agreed fee (``money.pay_now_line``), like the schedule's, and
    may equal anything."""
    fee = terms.get("fee") or {}
    if not fee:
        return line
    percent = Decimal(terms.get("dueSlicePercent") or "100")
    said = money.pay_now_line(money.quote(Decimal(fee["amount"]), fee["currency"], percent))
    return line.replace(said, "<price>")


CONCURRENT: Final = 8
"""Requests in flight at once: enough to overlap the agents' work, few enough that no
request waits on the database longer than a client's timeout on a busy machine."""


async def play_corpus(
    server: Server, db: Db, scripts: list[dict[str, Any]], numbers: list[int] | None = None
) -> list[str]:
    """Play every script (``numbers``: each one's number for its host's handle, by default
    its index); one line per failing script."""
    numbers = numbers or list(range(len(scripts)))
    played = [Played(script, n) for n, script in zip(numbers, scripts, strict=True)]
    gate = asyncio.Semaphore(CONCURRENT)

    async def each(act: Callable[[Played], Awaitable[None]]) -> None:
        async def one(p: Played) -> None:
            async with gate:
                await act(p)

        await asyncio.gather(*(one(p) for p in played))

    await each(lambda p: _teach(server, p))
    await server.settle(timeout=600)
    await each(lambda p: _open(server, p))
    for index in range(max(len(s["steps"]) for s in scripts)):
        await each(lambda p, k=index: _step(p, k))  # type: ignore[misc]
        await server.settle(timeout=600)
    outcomes = [await _outcome(db, p) for p in played]
    failures = []
    for p, outcome in zip(played, outcomes, strict=True):
        problems = check(p.script, outcome)
        if problems:
            failures.append(f"{p.script['id']}: {'; '.join(problems)}")
    return failures


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.fixture
def agent_settings(settings: Settings) -> Settings:
    """Every script's room from one loopback address: the per-address throttles are about abuse,
    not about this corpus."""
    return settings.model_copy(
        update={
            "workers": 2,
            "worker_poll_seconds": 0.05,
            "rooms_per_ip_per_hour": 100_000,
            "guest_keys_per_ip_per_hour": 100_000,
        }
    )


CHUNKS: Final = 8
"""The corpus is played in this many chunks, each a test of its own with its own server, so
pytest-xdist spreads it over its workers (played whole, it was one test of about 4 minutes on
one worker while the other ran out of tests). Every script is in exactly one chunk."""


def chunk(number: int) -> list[dict[str, Any]]:
    """Every ``CHUNKS``-th script from ``number``: each chunk gets its share of every file's
    kind of negotiation, and of the long scripts, so the chunks cost about the same."""
    return SCRIPTS[number::CHUNKS]


async def test_the_chunks_hold_the_whole_corpus_once() -> None:
    assert len(SCRIPTS) >= 150
    played = [script["id"] for number in range(CHUNKS) for script in chunk(number)]
    assert sorted(played) == sorted(script["id"] for script in SCRIPTS)
    assert len(set(played)) == len(played)


async def test_the_fee_line_and_public_fact_cases(agent_server: Server, db: Db) -> None:
    """The corpus cases of what people read: the whole price told in chat before the written
    offer (fee_line), and questions the host's public card answers without a send
    (public_facts). Played on their own as well, so a change to either is quick to check."""
    picked = [
        (n, s) for n, s in enumerate(SCRIPTS) if s["id"].startswith(("fee_line", "public_facts"))
    ]
    assert len(picked) == 4
    failures = await play_corpus(
        agent_server, db, [s for _n, s in picked], [1000 + n for n, _s in picked]
    )
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("number", range(CHUNKS), ids=lambda n: f"chunk{n}")
async def test_every_script_writes_exactly_the_expected_terms(
    agent_server: Server, db: Db, number: int
) -> None:
    scripts = chunk(number)
    assert scripts
    # numbered as in the whole corpus: script i is host ``corpus{i}`` in whichever chunk
    numbers = list(range(number, len(SCRIPTS), CHUNKS))
    failures = await play_corpus(agent_server, db, scripts, numbers)
    passed = len(scripts) - len(failures)
    print(f"\nnegotiation corpus chunk {number}/{CHUNKS}: {passed}/{len(scripts)} scripts pass")
    assert not failures, "\n".join(failures)


async def test_the_floor_check_reads_the_agreement_but_not_the_schedules_figures() -> None:
    """The check itself: a floor written in the agreement's prose is a leak; the same figure
    as the schedule's share due at booking ($2,500 with 40% due makes $1,000) is not."""
    terms = {
        "deliverables": ["Instagram story"],
        "fee": {"amount": "2500.00", "currency": "USD"},
        "dueSlicePercent": "40",
    }
    script = {"expect": {"offer": terms, "floor": "$1,000", "buyer": None}}
    due = (
        "40% of the fee ($1,000) is due at booking. The offer does not specify when the "
        "remaining 60% ($1,500) is due."
    )

    def outcome(text: str) -> dict[str, Any]:
        offer = {"terms": terms, "agreement": {"text": text}}
        return {"offer": offer, "lines": [], "rulings": []}

    assert check(script, outcome(due)) == []
    [leak] = check(script, outcome(due + " The talent would not go below $1,000."))
    assert leak.startswith("the floor $1,000 reached the brand")
