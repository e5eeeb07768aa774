"""Parse caching that keeps parse errors on strawberry's normal error path."""

from __future__ import annotations

from collections.abc import Iterator

from graphql import GraphQLError
from strawberry.extensions import ParserCache


class CachedParser(ParserCache):
    """strawberry's ParserCache parses inside the extension hook, so a syntax or token-limit
    error escapes every extension's post-processing (and so loses its ``extensions.code``).
    On an error we leave the document unset: strawberry then parses it itself and reports the
    error like any other."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        try:
            context.graphql_document = self.cached_parse_document(
                context.query, **context.parse_options
            )
        except GraphQLError:
            context.graphql_document = None
        yield
