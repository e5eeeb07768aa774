"""The checked-in SDL matches the code, and every public type and field is described."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLUnionType,
)

from dealroom.config import Settings
from dealroom.schema.build import create_schema

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schema.graphql"
REGENERATE = ".venv/bin/dealroom export-schema --output schema.graphql"
KINDS: list[type[GraphQLNamedType]] = [
    GraphQLObjectType,
    GraphQLInputObjectType,
    GraphQLEnumType,
    GraphQLUnionType,
]


def our_types() -> list[GraphQLNamedType]:
    """Every named type we define: no introspection types, no scalars (built-in or library)."""
    type_map = create_schema()._schema.type_map
    return [
        named
        for name, named in sorted(type_map.items())
        if not name.startswith("__") and not isinstance(named, GraphQLScalarType)
    ]


def described(description: str | None) -> bool:
    return bool(description and description.strip())


def test_schema_graphql_matches_the_code() -> None:
    assert SCHEMA_FILE.exists(), f"schema.graphql is missing; run `{REGENERATE}`"
    expected = create_schema().as_str() + "\n"

    assert SCHEMA_FILE.read_text() == expected, f"schema.graphql is stale; run `{REGENERATE}`"


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__name__)
def test_the_type_walk_sees_types_of_each_kind(kind: type[GraphQLNamedType]) -> None:
    """Guards the checks below against passing on an empty walk."""
    assert any(isinstance(named, kind) for named in our_types())


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__name__)
def test_every_type_has_a_description(kind: type[GraphQLNamedType]) -> None:
    undescribed = [
        named.name
        for named in our_types()
        if isinstance(named, kind) and not described(named.description)
    ]

    assert undescribed == []


def test_every_field_has_a_description() -> None:
    undescribed = [
        f"{named.name}.{field_name}"
        for named in our_types()
        if isinstance(named, GraphQLObjectType | GraphQLInterfaceType)
        for field_name, field in named.fields.items()
        if not described(field.description)
    ]

    assert undescribed == []


def test_every_input_field_has_a_description() -> None:
    undescribed = [
        f"{named.name}.{field_name}"
        for named in our_types()
        if isinstance(named, GraphQLInputObjectType)
        for field_name, field in named.fields.items()
        if not described(field.description)
    ]

    assert undescribed == []


async def test_a_schema_is_built_once_per_limits_and_keeps_its_own_limits() -> None:
    """Servers in one process share a schema when the settings it reads agree (building one
    costs about 35 ms of CPU); a server with other limits gets its own, and each refuses by
    its own limits."""
    base = Settings(max_tokens=50)
    other_database = base.model_copy(update={"database_url": "sqlite+aiosqlite:///other.db"})
    tighter = base.model_copy(update={"max_tokens": 5})
    shared, again, own = create_schema(base), create_schema(other_database), create_schema(tighter)
    assert again is shared
    assert own is not shared
    query = "{ a b c d e f g h }"  # more than 5 tokens, fewer than 50
    [refused] = (await own.execute(query)).errors or []
    assert refused.extensions == {"code": "BAD_USER_INPUT"}
    assert not any(
        (e.extensions or {}).get("code") == "BAD_USER_INPUT" and "token" in e.message.lower()
        for e in (await shared.execute(query)).errors or []
    )
