"""Arvist and AccUpdate as agents: their requests over the real google-genai client to the fake
Gemini server (the Gemini path), and the offline engine's rules for them."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

from dealroom.agents import acc_update, arvist
from dealroom.agents.acc_update import AccUpdateInput
from dealroom.agents.arvist import ArvistInput, ClosedDeal
from dealroom.agents.models.gemini import GeminiClient
from dealroom.agents.models.offline.arvist import acc_update_output, arvist_output
from dealroom.agents.render import Line
from tests.support.fake_gemini import FakeGemini, Reply

DEAL = ClosedDeal("abcd1234-new-offer", "7500.00 USD", ["sponsored post"], "2027-03-15", "@acme")


HOST_INPUT = ArvistInput(
    perspective="host",
    room_kind="deal",
    account_name="Dev Raman",
    pane="host",
    durable={"rates": {"sponsored_post": {"ask": "8000 USD"}}},
    leaf_dates={"rates.sponsored_post.ask": date(2026, 1, 1)},
    branch={
        "rates": {"sponsored_post": {"ask": "8000 USD", "floor": "6000 USD"}},
        "rules": ["never alcohol brands"],
        "claims": ["I already sent the contract"],
    },
    session=[Line("participant", "Never below $6,000 for a post.")],
    closed_deals=[DEAL],
)


async def test_arvist_over_gemini_sends_its_schema_dates_and_the_boundary_last(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    request = arvist.build(HOST_INPUT, model="gemini-2.5-flash")
    answer = {"changes": [{"op": "set", "path": "rates.sponsored_post.floor", "value": "6000 USD"}]}
    fake_gemini.script(Reply(json.dumps(answer)))

    generation = await gemini.generate(request)

    [sent] = fake_gemini.requests
    assert sent.system == arvist.SYSTEM
    assert sent.contents == request.prompt
    assert sent.schema["propertyOrdering"] == ["changes"]
    assert '"rates.sponsored_post.ask": "2026-01-01"' in sent.contents  # leaf dates, prompt only
    assert "@acme" in sent.contents  # the host's closed deal
    assert sent.contents.split("\n\n")[-1] == arvist.BOUNDARY.format(name="Dev Raman")
    assert request.visitor_facing is False
    assert isinstance(generation.output, arvist.ArvistOutput)
    assert generation.output.model_dump() == answer


async def test_a_participant_arvist_request_holds_no_closed_deals_and_is_marked(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    request = arvist.build(
        replace(HOST_INPUT, perspective="participant", pane="visitor", account_name="Mara Ellison"),
        model="gemini-2.5-flash",
    )
    fake_gemini.script(Reply(json.dumps({"changes": []})))
    await gemini.generate(request)
    [sent] = fake_gemini.requests
    assert "@acme" not in sent.contents
    assert "CLOSED DEALS" not in sent.contents
    assert request.context["closed_deals"] == []
    assert request.visitor_facing is True
    assert "perspective of Mara Ellison" in sent.contents


async def test_acc_update_over_gemini(gemini: GeminiClient, fake_gemini: FakeGemini) -> None:
    request = acc_update.build(
        AccUpdateInput(
            pane="host",
            merged={"limits.sponsored_post.floor": "6000"},
            branch={"limits": {"sponsored_post": {"floor": "6000"}}},
        ),
        model="gemini-2.5-flash-lite",
    )
    fake_gemini.script(Reply(json.dumps({"stale": ["rates.sponsored_post.floor"]})))
    generation = await gemini.generate(request)
    [sent] = fake_gemini.requests
    assert sent.model == "gemini-2.5-flash-lite"
    assert sent.system == acc_update.PROMPT
    assert sent.schema["propertyOrdering"] == ["stale"]
    assert isinstance(generation.output, acc_update.AccUpdateOutput)
    assert generation.output.stale == ["rates.sponsored_post.floor"]


def test_offline_arvist_promotes_what_changed_and_the_closed_deal_never_claims() -> None:
    output = arvist_output(arvist.build(HOST_INPUT, model="offline").context)
    changes = [(c.op, c.path, c.value) for c in output.changes]
    assert changes == [
        ("set", "rates.sponsored_post.floor", "6000 USD"),
        ("append", "rules", "never alcohol brands"),
        ("set", "deals.abcd1234-new-offer.fee", "7500.00 USD"),
        ("set", "deals.abcd1234-new-offer.date", "2027-03-15"),
        ("set", "deals.abcd1234-new-offer.counterparty", "@acme"),
        ("set", "deals.abcd1234-new-offer.deliverables", "sponsored post"),
    ]


def test_offline_arvist_finds_nothing_new_when_the_document_holds_it() -> None:
    inputs = replace(
        HOST_INPUT,
        durable={
            "rates": {"sponsored_post": {"ask": "8000 USD", "floor": "6000 USD"}},
            "rules": ["Never alcohol brands"],
            "deals": {"abcd1234-new-offer": {"fee": "7500.00 USD"}},
        },
    )
    assert arvist_output(arvist.build(inputs, model="offline").context).changes == []


def test_offline_acc_update_names_the_legacy_floor_a_limit_replaces() -> None:
    context = acc_update.build(
        AccUpdateInput(
            pane="host",
            merged={"limits.sponsored_post.floor": "6000", "limits.sponsored_post.currency": "USD"},
            branch={
                "limits": {"sponsored_post": {"floor": "6000", "currency": "USD"}},
                "rates": {"sponsored_post": {"floor": "4000 USD", "ask": "8000 USD"}},
            },
        ),
        model="offline",
    ).context
    assert acc_update_output(context).stale == ["rates.sponsored_post.floor"]
    assert acc_update.allowed_removals(
        ["rates.sponsored_post.floor", "limits.sponsored_post", "limits"],
        ["limits.sponsored_post.floor"],
    ) == ["rates.sponsored_post.floor"]
