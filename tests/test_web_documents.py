"""The web client's GraphQL documents (web/src/operations.graphql) are valid against
schema.graphql, so a renamed or removed field fails the build; and the committed bundle was
built from them (a stale bundle fails too)."""

from __future__ import annotations

from pathlib import Path

from graphql import DocumentNode, OperationDefinitionNode, build_schema, parse, validate

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ROOT / "web" / "src" / "operations.graphql"
BUNDLE = ROOT / "dealroom" / "web" / "assets" / "app.js"


def _documents() -> DocumentNode:
    return parse(DOCUMENTS.read_text(encoding="utf-8"))


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


def test_the_committed_bundle_carries_these_documents() -> None:
    """`make web` was run after the last change to the documents."""
    assert DOCUMENTS.read_text(encoding="utf-8") in BUNDLE.read_text(encoding="utf-8")
