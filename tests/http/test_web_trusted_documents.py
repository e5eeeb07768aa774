"""The web client's documents, listed at build time (``web/trusted-documents.mjs`` writes
``dealroom/web/trusted-documents.json``), run on a server in trusted-documents mode; anything
else does not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.persisted_queries import load_trusted_documents
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.http.conftest import JS, Node
from tests.support.clock import ManualClock
from tests.support.graphql import subscribe

ROOT = JS.parent.parent
MANIFEST = ROOT / "dealroom" / "web" / "trusted-documents.json"


async def test_the_committed_list_is_what_the_client_sends_today(node: Node) -> None:
    """Rebuilt from web/src with the client's own gql.ts; stale, run `make web`."""
    esbuild = str(JS / "node_modules" / "esbuild" / "lib" / "main.js")
    code, out, err = await node.run(
        str(ROOT / "web" / "trusted-documents.mjs"), "--stdout", env={"ESBUILD": esbuild}
    )

    assert code == 0, err
    assert json.loads(out) == json.loads(MANIFEST.read_text()), "run `make web`"


@pytest.fixture
async def trusted(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    changed = settings.model_copy(update={"trusted_documents": MANIFEST})
    async with serving(changed, engine, broker, clock) as running:
        yield running


async def test_every_listed_document_passes_the_gate_and_nothing_else_does(trusted: Server) -> None:
    documents = load_trusted_documents(Path(MANIFEST))
    client = trusted.client()
    manifest = json.loads(MANIFEST.read_text())["operations"]
    assert len(documents) == len(manifest) > 20

    for operation in manifest:
        if operation["type"] == "subscription":
            async with subscribe(trusted.ws_url, operation["body"], {}) as subscription:
                payload = await subscription.next()
            codes = [e["extensions"]["code"] for e in payload.get("errors", [])]
        else:
            body = await client.raw(operation["body"])  # mostly refused later: no variables
            codes = [e["extensions"]["code"] for e in body.get("errors", [])]
        assert "PERSISTED_QUERY_NOT_IN_LIST" not in codes, operation["name"]

    assert await client.error_codes("{ __typename }") == ["PERSISTED_QUERY_NOT_IN_LIST"]
