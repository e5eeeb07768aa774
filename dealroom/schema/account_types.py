"""GraphQL type of an account's public profile: what anyone may see, wherever an account is
named (a room's participants, an offer's parties, who is signed in)."""

from __future__ import annotations

import strawberry

from dealroom.persistence import models
from dealroom.schema.node import Node
from dealroom.schema.paging import PageInfo


@strawberry.type(description="An account's public profile: what anyone may see.")
class Account(Node):
    id: strawberry.ID = strawberry.field(description="The account id.")
    handle: str = strawberry.field(description="The handle in the account's link, /z/<handle>.")
    display_name: str = strawberry.field(description="The name shown to others.")
    avatar_url: str | None = strawberry.field(description="Avatar image URL, if any.")

    @strawberry.field(description="The account's public link path, where visitors start a deal.")
    def link(self) -> str:
        return f"/z/{self.handle}"

    @classmethod
    def from_row(cls, row: models.Account) -> Account:
        return cls(
            id=strawberry.ID(str(row.id)),
            handle=row.handle,
            display_name=row.display_name,
            avatar_url=row.avatar_url,
        )


@strawberry.type(description="An edge to an account's public profile.")
class AccountEdge:
    cursor: str = strawberry.field(description="Pass as `after` for the page after it.")
    node: Account = strawberry.field(description="The account.")


@strawberry.type(description="A page of accounts.")
class AccountConnection:
    edges: list[AccountEdge] = strawberry.field(description="The accounts.")
    page_info: PageInfo = strawberry.field(description="Relay page info.")
