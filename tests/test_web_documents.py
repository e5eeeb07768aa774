"""The web client's GraphQL documents (every web/src/*.graphql: operations.graphql for the
host and visitor pages, ops.graphql for the operators' pages) are valid against
schema.graphql, so a renamed or removed field fails the build; and the committed bundle was
built from them (a stale bundle fails too)."""

from __future__ import annotations

from pathlib import Path

from graphql import DocumentNode, OperationDefinitionNode, build_schema, parse, validate

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted((ROOT / "web" / "src").glob("*.graphql"))
ASSETS = ROOT / "dealroom" / "web" / "assets"
# Which committed bundle carries which documents: the operators' pages are their own bundle,
# loaded only under /ops (web/src/share.ts).
BUNDLES = {"operations.graphql": ASSETS / "app.js", "ops.graphql": ASSETS / "ops.js"}


def _documents() -> DocumentNode:
    """All the client's files as one document: ops.graphql spreads operations.graphql's
    fragments (the client joins them the same way, src/gql.ts)."""
    return parse("\n".join(d.read_text(encoding="utf-8") for d in DOCUMENTS))


def test_the_client_documents_validate_against_schema_graphql() -> None:
    schema = build_schema((ROOT / "schema.graphql").read_text(encoding="utf-8"))

    errors = validate(schema, _documents())

    assert not errors, "\n".join(str(e) for e in errors)


def test_a_renamed_field_fails_validation() -> None:
    """The check above is able to fail: the same documents against a schema where one field
    the client reads was renamed."""
    sdl = (ROOT / "schema.graphql").read_text(encoding="utf-8")
    renamed = sdl.replace("  viewerActions: [OfferAction!]!", "  actions: [OfferAction!]!")
    assert renamed != sdl

    errors = validate(build_schema(renamed), _documents())

    assert any("viewerActions" in str(e) for e in errors)


def test_the_client_uses_the_live_streams() -> None:
    names = {
        d.name.value
        for d in _documents().definitions
        if isinstance(d, OperationDefinitionNode) and d.name is not None
    }

    assert {"PaneEvents", "OfferStage", "OpenVisitorRoom", "PostMessage", "PayOffer"} <= names


def test_the_operator_pages_use_the_ops_api() -> None:
    """The ops pages' documents are found (ops.graphql) and name the ops fields they need."""
    assert [d.name for d in DOCUMENTS] == ["operations.graphql", "ops.graphql"]
    names = {
        d.name.value
        for d in _documents().definitions
        if isinstance(d, OperationDefinitionNode) and d.name is not None
    }

    assert {
        "OpsRooms",
        "OpsRoom",
        "SetRoomModels",
        "OverrideGoal",
        "TakeOverPane",
        "ReleasePane",
        "OperatorPost",
        "AgentPrompts",
    } <= names


def test_a_renamed_ops_field_fails_validation() -> None:
    sdl = (ROOT / "schema.graphql").read_text(encoding="utf-8")
    renamed = sdl.replace("  flagCount: Int!", "  flags_count: Int!")
    assert renamed != sdl

    errors = validate(build_schema(renamed), _documents())

    assert any("flagCount" in str(e) for e in errors)


def test_the_committed_bundle_carries_these_documents() -> None:
    """`make web` was run after the last change to the documents."""
    assert sorted(BUNDLES) == [d.name for d in DOCUMENTS]
    for document in DOCUMENTS:
        bundle = BUNDLES[document.name].read_text(encoding="utf-8")
        assert document.read_text(encoding="utf-8") in bundle, document.name
    # Hosts and visitors never download the operators' pages.
    assert "opsRooms" not in BUNDLES["operations.graphql"].read_text(encoding="utf-8")
