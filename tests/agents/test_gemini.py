"""The Gemini engine end to end: the real google-genai client over real HTTP to a local fake
Gemini server (tests/support/fake_gemini.py). What we send is read off the wire; what we get
back is scripted per request."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from dealroom.agents import agreement, distil, offer_gen, persona
from dealroom.agents.models.base import (
    Chunk,
    ModelClient,
    ModelError,
    ModelRequest,
    Usage,
    parse_output,
)
from dealroom.agents.models.gemini import GeminiClient, response_json_schema
from dealroom.agents.render import Line, Party
from dealroom.domain import offer_stage
from dealroom.domain.offer_stage import Stage
from tests.support.fake_gemini import Fail, FakeGemini, Hang, JsonObject, Reply

MODEL = "gemini-2.5-flash"
HOST = Party(key="host", name="Maya Lind")
VISITOR = Party(key="brand", name="Oskar at Fjord Goods")

PERSONA_ANSWER = {
    "reply": "Thanks Oskar. For one sponsored post the fee is 1800 EUR; does that work?",
    "goals": [{"key": "new-offer", "status": "open", "reason": "Fee not agreed yet."}],
    "sends": [
        {
            "to": "host",
            "substance": "Fjord Goods asks for one sponsored post in May.",
            "open_questions": ["Which week in May?"],
            "ruling": {
                "decision": "counter",
                "amount": "1800",
                "currency": "EUR",
                "deliverable": "one sponsored post",
            },
        }
    ],
    "plan": "Hold at 1800 unless the brand adds usage rights.",
}
DISTIL_ANSWER = {
    "changes": [{"op": "set", "path": "brand.budget", "value": "1500 EUR"}],
    "claims": ["Oskar says the contract was sent by email."],
    "principal_decisions": [],
    "frustration": {"level": "low", "evidence": "any update?"},
}


def persona_request(*, stage: Stage = Stage.WRITTEN_AWAITING_BRAND) -> ModelRequest:
    return persona.build(
        persona.PersonaInput(
            room_kind="sponsorship",
            pane=VISITOR.key,
            represents=HOST,
            speaking_with=VISITOR,
            memory={"host": {"public": {"rates": "from 1500 EUR"}}},
            plan="",
            account_facts={"audience": "120k"},
            session=[Line(author="participant", body="Hi, we want one post in May.")],
            trigger=persona.Trigger(kind="message", body="What would one post cost?"),
            send_to=["host"],
            deliveries=[],
            stage=stage,
        ),
        model=MODEL,
    )


def distil_request() -> ModelRequest:
    return distil.build(
        distil.DistilInput(
            room_kind="sponsorship",
            pane=VISITOR.key,
            represents=HOST,
            speaking_with=VISITOR,
            memory={"brand": {}},
            session=[Line(author="participant", body="Our budget is 1500 EUR. Any update?")],
            dispatches=[],
            writable=["brand"],
            stage=Stage.NO_WRITTEN_OFFER,
        ),
        model="gemini-2.5-flash-lite",
    )


def answer(data: object) -> str:
    return json.dumps(data)


async def collect(client: GeminiClient, request: ModelRequest) -> list[Chunk]:
    return [chunk async for chunk in client.stream(request)]


async def test_the_client_is_a_model_client() -> None:
    client: ModelClient = GeminiClient("key")
    assert client.engine == "gemini"
    await client.close()


# --- what we send --------------------------------------------------------------------------


async def test_persona_call_sends_system_prompt_and_the_prompt_with_its_tail_blocks(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    request = persona_request(stage=Stage.WRITTEN_AWAITING_BRAND)
    fake_gemini.script(Reply(answer(PERSONA_ANSWER)))

    await gemini.generate(request)

    [sent] = fake_gemini.requests
    assert sent.action == "generateContent"
    assert sent.model == MODEL
    assert sent.path.endswith(f"/models/{MODEL}:generateContent")
    assert sent.headers["x-goog-api-key"] == "test-key"
    assert sent.system == request.system
    assert offer_stage.vocabulary() in sent.system
    assert all(stage.value in sent.system for stage in Stage)
    assert sent.roles == ["user"]
    assert sent.contents == request.prompt
    blocks = sent.contents.split("\n\n")
    assert blocks[-1] == offer_stage.deal_stage_block(Stage.WRITTEN_AWAITING_BRAND)
    assert blocks[-1].startswith("--- DEAL STAGE")
    assert blocks[-2] == persona.identity_directive(HOST, VISITOR, VISITOR.key)
    assert blocks[-2].startswith("--- REPRESENTATION IDENTITY")
    assert sent.contents.count("--- REPRESENTATION IDENTITY") == 1


async def test_persona_schema_is_json_schema_with_reply_ordered_first(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    fake_gemini.script(Reply(answer(PERSONA_ANSWER)))

    await gemini.generate(persona_request())

    config = fake_gemini.requests[0].generation_config
    assert config["responseMimeType"] == "application/json"
    assert "responseSchema" not in config
    schema = config["responseJsonSchema"]
    # Both the explicit ordering and the key order on the wire put reply first.
    assert schema["propertyOrdering"] == ["reply", "goals", "sends", "plan"]
    assert list(schema["properties"]) == ["reply", "goals", "sends", "plan"]
    assert schema["required"] == ["reply"]
    assert schema["additionalProperties"] is False
    defs = schema["$defs"]
    assert defs["Send"]["propertyOrdering"] == ["to", "substance", "open_questions", "ruling"]
    assert defs["Ruling"]["propertyOrdering"] == ["decision", "amount", "currency", "deliverable"]
    assert defs["Ruling"]["properties"]["decision"]["enum"] == [
        "settle",
        "counter",
        "ask_principal",
        "decline",
    ]
    assert defs["GoalRuling"]["additionalProperties"] is False


async def test_distil_call_sends_its_own_schema_and_ends_with_the_stage_block(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    request = distil_request()
    fake_gemini.script(Reply(answer(DISTIL_ANSWER)))

    generation = await gemini.generate(request)

    [sent] = fake_gemini.requests
    assert sent.model == "gemini-2.5-flash-lite"
    assert sent.system == distil.SYSTEM
    assert sent.contents == request.prompt
    assert sent.contents.split("\n\n")[-1] == offer_stage.deal_stage_block(Stage.NO_WRITTEN_OFFER)
    assert sent.schema["propertyOrdering"] == [
        "changes",
        "claims",
        "principal_decisions",
        "frustration",
    ]
    assert sent.schema["$defs"]["Frustration"]["properties"]["level"]["enum"] == [
        "low",
        "medium",
        "high",
    ]
    assert isinstance(generation.output, distil.DistilOutput)
    assert generation.output.model_dump() == DISTIL_ANSWER


OFFER_GEN_ANSWER: JsonObject = {
    "deliverables": ["sponsored post"],
    "fee_amount": "7500",
    "currency": "USD",
    "dates": ["2027-03-15"],
    "usage_rights": None,
    "exclusivity": None,
    "due_slice_percent": "50",
    "open_questions": ["Usage rights?"],
}


async def test_offer_gen_call_is_visitor_facing_with_its_schema_and_the_stage_tail(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    request = offer_gen.build(
        offer_gen.OfferGenInput(
            represents=Party("host", "Dev Raman"),
            counterparty=Party("visitor", "Mara"),
            memory={"deal": {"dates": {"sponsored_post": "2027-03-15"}}},
            transcript=[
                Line("agent", "Dev Raman can do the sponsored post at $7,500."),
                Line("participant", "Yes, that works"),
            ],
            rulings=[],
            current_terms=None,
            stage=Stage.NO_WRITTEN_OFFER,
        ),
        model="gemini-2.5-flash",
    )
    fake_gemini.script(Reply(answer(OFFER_GEN_ANSWER)))

    generation = await gemini.generate(request)

    [sent] = fake_gemini.requests
    assert request.visitor_facing is True
    assert sent.system == offer_gen.SYSTEM
    assert offer_stage.vocabulary() in sent.system
    assert sent.contents.split("\n\n")[-1] == offer_stage.deal_stage_block(Stage.NO_WRITTEN_OFFER)
    assert sent.schema["propertyOrdering"] == list(OFFER_GEN_ANSWER)
    assert isinstance(generation.output, offer_gen.OfferGenOutput)
    extracted = offer_gen.to_terms(generation.output)
    assert extracted.terms is not None
    assert extracted.terms["fee"] == {"amount": "7500.00", "currency": "USD"}


async def test_agreement_call_carries_only_the_offers_fields(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    terms = {
        "deliverables": ["sponsored post"],
        "fee": {"amount": "7500.00", "currency": "USD"},
        "dates": ["2027-03-15"],
        "usageRights": None,
        "exclusivity": None,
        "dueSlicePercent": "50",
    }
    request = agreement.build(
        agreement.AgreementInput(
            offer_id="o-1", version=1, seller="Dev Raman", buyer="Mara", terms=terms
        ),
        model="gemini-2.5-flash",
    )
    draft = {
        "title": "Draft services agreement",
        "sections": [{"heading": "Fee", "body": "Mara pays Dev Raman $7,500."}],
    }
    fake_gemini.script(Reply(answer(draft)))

    generation = await gemini.generate(request)

    [sent] = fake_gemini.requests
    assert sent.system == agreement.SYSTEM
    assert sent.schema["propertyOrdering"] == ["title", "sections"]
    assert isinstance(generation.output, agreement.AgreementOutput)
    text = agreement.render(generation.output)
    assert agreement.invented_terms(text, terms) == []
    assert agreement.invented_terms(text.replace("7,500", "9,500"), terms) != []


def test_schema_copies_are_independent() -> None:
    first = response_json_schema(persona.PersonaOutput)
    first["properties"].clear()
    assert response_json_schema(persona.PersonaOutput)["propertyOrdering"][0] == "reply"
    assert "reply" in response_json_schema(persona.PersonaOutput)["properties"]


# --- what we get back ----------------------------------------------------------------------


async def test_generate_parses_the_answer_and_maps_usage(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    text = answer(PERSONA_ANSWER)
    fake_gemini.script(Reply(text, usage=(5200, 90, 4096), thoughts=30))

    generation = await gemini.generate(persona_request())

    assert isinstance(generation.output, persona.PersonaOutput)
    assert generation.output.model_dump() == PERSONA_ANSWER
    assert generation.output.sends[0].ruling is not None
    assert generation.output.sends[0].ruling.amount == "1800"
    assert generation.text == text
    assert generation.model == MODEL
    # Thinking tokens are billed as output, so they are counted as output.
    assert generation.usage == Usage(input_tokens=5200, output_tokens=120, cached_tokens=4096)
    assert generation.extra["finish_reason"] == "STOP"


async def test_usage_without_cached_tokens_is_zero(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    fake_gemini.script(Reply(answer({"reply": "Hello."}), usage=(800, 12, 0)))

    generation = await gemini.generate(persona_request())

    assert generation.usage == Usage(input_tokens=800, output_tokens=12, cached_tokens=0)


async def test_stream_yields_chunks_in_order_then_usage(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    request = persona_request()
    text = answer(PERSONA_ANSWER)
    fake_gemini.script(Reply(text, usage=(3000, 140, 2048), chunks=5))

    chunks = await collect(gemini, request)

    [sent] = fake_gemini.requests
    assert sent.action == "streamGenerateContent"
    assert sent.query == {"alt": "sse"}
    assert sent.contents == request.prompt
    assert sent.schema["propertyOrdering"][0] == "reply"
    *pieces, last = chunks
    assert len(pieces) == 5
    assert all(piece.text and piece.usage is None for piece in pieces)
    assert pieces[0].text.startswith('{"reply": "Thanks')
    assert "".join(piece.text for piece in pieces) == text
    assert last == Chunk("", usage=Usage(input_tokens=3000, output_tokens=140, cached_tokens=2048))
    assert parse_output(request, text) == persona.PersonaOutput.model_validate(PERSONA_ANSWER)


async def test_stream_delivers_chunks_as_they_arrive(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    # the server sends its three chunks 1 s apart: a client that buffered the stream would see
    # them all at once; wide margins, so a loaded machine delaying one read cannot fail it
    fake_gemini.script(Reply(answer(PERSONA_ANSWER), chunks=3, chunk_delay=1.0))

    started = time.monotonic()
    arrivals = [time.monotonic() - started async for _ in gemini.stream(persona_request())]

    assert arrivals[-1] >= 2.0
    assert arrivals[0] < arrivals[-1] - 1.0


async def test_a_stream_left_early_can_be_followed_by_another_call(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    fake_gemini.script(
        Reply(answer(PERSONA_ANSWER), chunks=4, chunk_delay=0.05),
        Reply(answer({"reply": "Again."})),
    )

    stream = gemini.stream(persona_request())
    first = await anext(stream)
    await stream.aclose()

    assert first.text.startswith('{"reply"')
    generation = await gemini.generate(persona_request())
    assert generation.text == answer({"reply": "Again."})


# --- retries and errors --------------------------------------------------------------------


async def test_429_is_retried_then_succeeds(gemini: GeminiClient, fake_gemini: FakeGemini) -> None:
    fake_gemini.script(Fail(429, "quota"), Reply(answer({"reply": "Hi."})))

    generation = await gemini.generate(persona_request())

    assert generation.output == persona.PersonaOutput(reply="Hi.")
    assert len(fake_gemini.requests) == 2
    assert fake_gemini.requests[0].body == fake_gemini.requests[1].body


async def test_stream_opening_is_retried_too(gemini: GeminiClient, fake_gemini: FakeGemini) -> None:
    text = answer({"reply": "Hi there."})
    fake_gemini.script(Fail(503), Fail(429), Reply(text, chunks=2))

    chunks = await collect(gemini, persona_request())

    assert "".join(chunk.text for chunk in chunks) == text
    assert [sent.action for sent in fake_gemini.requests] == ["streamGenerateContent"] * 3


async def test_5xx_until_attempts_run_out_is_a_transient_error(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    fake_gemini.script(*[Fail(503, "overloaded")] * 5)

    with pytest.raises(ModelError) as raised:
        await gemini.generate(persona_request())

    assert raised.value.transient is True
    assert raised.value.status == 503
    assert "overloaded" in str(raised.value)
    assert len(fake_gemini.requests) == 4  # attempts=4: the fifth answer is never asked for
    assert fake_gemini.pending == 1


async def test_stream_5xx_until_attempts_run_out_is_a_transient_error(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    fake_gemini.script(Fail(500), Fail(502), Fail(504), Fail(500))

    with pytest.raises(ModelError) as raised:
        await collect(gemini, persona_request())

    assert (raised.value.transient, raised.value.status) == (True, 500)
    assert len(fake_gemini.requests) == 4


@pytest.mark.parametrize("status", [400, 403, 404])
async def test_client_errors_are_not_retried_and_not_transient(
    gemini: GeminiClient, fake_gemini: FakeGemini, status: int
) -> None:
    fake_gemini.script(Fail(status, "schema rejected"), Reply(answer({"reply": "never"})))

    with pytest.raises(ModelError) as raised:
        await gemini.generate(persona_request())

    assert (raised.value.transient, raised.value.status) == (False, status)
    assert "schema rejected" in str(raised.value)
    assert len(fake_gemini.requests) == 1
    assert fake_gemini.pending == 1


async def test_stream_client_error_is_not_retried(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    fake_gemini.script(Fail(400), Reply(answer({"reply": "never"})))

    with pytest.raises(ModelError) as raised:
        await collect(gemini, persona_request())

    assert (raised.value.transient, raised.value.status) == (False, 400)
    assert len(fake_gemini.requests) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Sure! Here is the JSON you asked for.",
        '{"reply": "cut off mid-str',
        '{"reply": "Hi.", "mood": "cheerful"}',  # extra="forbid"
        '{"goals": []}',  # reply is required
        '{"reply": "Hi.", "goals": [{"key": "k", "status": "done"}]}',  # not a GoalStatus
    ],
)
async def test_an_answer_that_does_not_match_the_schema_is_a_transient_error(
    gemini: GeminiClient, fake_gemini: FakeGemini, text: str
) -> None:
    fake_gemini.script(Reply(text))

    with pytest.raises(ModelError) as raised:
        await gemini.generate(persona_request())

    assert raised.value.transient is True
    assert raised.value.status is None
    assert len(fake_gemini.requests) == 1


async def test_a_slow_answer_times_out_as_a_transient_error(fake_gemini: FakeGemini) -> None:
    client = GeminiClient(
        "test-key", base_url=fake_gemini.base_url, timeout_seconds=0.5, attempts=1
    )
    fake_gemini.script(Hang(5))
    try:
        started = time.monotonic()
        with pytest.raises(ModelError) as raised:
            await client.generate(persona_request())
        elapsed = time.monotonic() - started
    finally:
        await client.close()

    assert raised.value.transient is True
    assert raised.value.status is None
    assert "Timeout" in str(raised.value)
    assert elapsed < 4.5  # gave up on the timeout, not when the 5 s hang ended
    assert len(fake_gemini.requests) == 1


async def test_a_stream_that_stalls_times_out_as_a_transient_error(
    fake_gemini: FakeGemini,
) -> None:
    client = GeminiClient(
        "test-key",
        base_url=fake_gemini.base_url,
        timeout_seconds=0.5,
        attempts=3,
        initial_delay=0.01,
        max_delay=0.02,
    )
    fake_gemini.script(Reply(answer(PERSONA_ANSWER), chunks=3, chunk_delay=3))
    received: list[Chunk] = []

    async def consume() -> None:
        async for chunk in client.stream(persona_request()):
            received.append(chunk)

    try:
        with pytest.raises(ModelError) as raised:
            await consume()
    finally:
        await client.close()

    assert raised.value.transient is True
    assert len(received) == 1  # the first chunk came; the stall after it timed out
    # Text was already out: a failed stream is not re-sent, whatever the attempts.
    assert len(fake_gemini.requests) == 1


async def test_a_timeout_is_retried_like_a_5xx(fake_gemini: FakeGemini) -> None:
    client = GeminiClient(
        "test-key",
        base_url=fake_gemini.base_url,
        timeout_seconds=0.3,
        attempts=2,
        initial_delay=0.01,
        max_delay=0.02,
    )
    fake_gemini.script(Hang(5), Reply(answer({"reply": "Made it."})))
    try:
        generation = await client.generate(persona_request())
    finally:
        await client.close()

    assert generation.output == persona.PersonaOutput(reply="Made it.")
    assert len(fake_gemini.requests) == 2


async def test_an_unreachable_server_is_a_transient_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the call: nothing listens there
    client = GeminiClient("test-key", base_url=f"http://127.0.0.1:{port}", attempts=1)
    try:
        with pytest.raises(ModelError) as raised:
            await client.generate(persona_request())
        with pytest.raises(ModelError) as raised_stream:
            await collect(client, persona_request())
    finally:
        await client.close()

    assert raised.value.transient is True
    assert raised_stream.value.transient is True


async def test_an_unscripted_call_fails_loudly(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    with pytest.raises(ModelError, match="no scripted response") as raised:
        await gemini.generate(persona_request())

    assert raised.value.transient is False
    assert len(fake_gemini.requests) == 1


async def test_concurrent_calls_each_get_their_own_answer(
    gemini: GeminiClient, fake_gemini: FakeGemini
) -> None:
    booked_block = offer_stage.deal_stage_block(Stage.BOOKED_AWAITING_PAYMENT)

    def respond(body: JsonObject) -> Reply:
        prompt = body["contents"][0]["parts"][0]["text"]
        return Reply(answer({"reply": "stage:" + ("BOOKED" if booked_block in prompt else "open")}))

    fake_gemini.responder = respond
    booked = persona_request(stage=Stage.BOOKED_AWAITING_PAYMENT)
    written = persona_request(stage=Stage.WRITTEN_AWAITING_BRAND)

    results = await asyncio.gather(gemini.generate(booked), gemini.generate(written))

    assert [result.text for result in results] == [
        answer({"reply": "stage:BOOKED"}),
        answer({"reply": "stage:open"}),
    ]


async def test_a_thinking_budget_is_sent_only_when_configured(fake_gemini: FakeGemini) -> None:
    budgeted = GeminiClient("test-key", base_url=fake_gemini.base_url, thinking_budget=0)
    default = GeminiClient("test-key", base_url=fake_gemini.base_url)
    fake_gemini.script(Reply(answer(PERSONA_ANSWER)), Reply(answer(PERSONA_ANSWER)))
    try:
        await budgeted.generate(persona_request())
        await default.generate(persona_request())
    finally:
        await budgeted.close()
        await default.close()
    first, second = fake_gemini.requests
    # The SDK writes the field in snake case; the API's JSON mapping accepts both spellings.
    assert first.generation_config.get("thinkingConfig") in (
        {"thinkingBudget": 0},
        {"thinking_budget": 0},
    )
    assert "thinkingConfig" not in second.generation_config
