"""Relay's ``Node`` interface: an object a client can refetch by its id alone
(``Query.node``/``Query.nodes``), which is what normalized caches (Relay, Apollo, urql's
Graphcache) key on.

A node's id is the id the API has always returned: a UUID, unique across every type by
construction, so no type prefix is needed to keep ids apart (docs/DECISIONS.md, "Relay")."""

from __future__ import annotations

import strawberry


@strawberry.interface(
    description="An object with a globally unique id: refetch it with `node(id:)`. Ids are "
    "UUIDs, unique across all types; the same id every other field and argument uses."
)
class Node:
    id: strawberry.ID = strawberry.field(description="The globally unique id.")
