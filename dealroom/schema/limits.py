"""Schema-level request bounds: the document pre-check and a depth rule that counts every
field, introspection included (strawberry's QueryDepthLimiter skips ``__`` fields, so a
27-deep ``__type { ofType { ... } }`` passed it)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

from graphql import (
    ASTValidationRule,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationContext,
    ValidationRule,
)
from strawberry.extensions import SchemaExtension

from dealroom.config import Settings
from dealroom.domain.errors import ErrorCode
from dealroom.request_limits import check_document

INTROSPECTION = frozenset({"__schema", "__type"})


def document_error(query: str | None, settings: Settings) -> GraphQLError | None:
    """The coded error refusing ``query`` before it is parsed, or None."""
    if query is None:
        return None
    # A document over the size bound is refused on its length alone, and not kept.
    check = check_document if len(query) > settings.max_query_chars else _checked
    problem = check(
        query,
        max_chars=settings.max_query_chars,
        max_tokens=settings.max_tokens,
        max_literal_chars=settings.max_literal_chars,
    )
    if problem is None:
        return None
    return GraphQLError(problem, extensions={"code": str(ErrorCode.BAD_USER_INPUT)})


@functools.lru_cache(maxsize=256)
def _checked(query: str, *, max_chars: int, max_tokens: int, max_literal_chars: int) -> str | None:
    """``check_document``, once per distinct document: clients send the same few, and the
    scan costs 20-100 us a request (a token at a time) against a lookup. Documents over
    ``max_chars`` never reach it, so what it keeps is bounded (256 documents of at most
    ``max_query_chars`` each)."""
    return check_document(
        query, max_chars=max_chars, max_tokens=max_tokens, max_literal_chars=max_literal_chars
    )


def depth_rule(max_depth: int, introspection_depth: int) -> type[ValidationRule]:
    """A validation rule: an operation whose fields nest more than ``max_depth`` levels
    (counted from 1 at the root fields, leaves included, through fragments) is an error; a
    path entering introspection (``__schema``, ``__type``) is held to ``introspection_depth``
    instead."""

    class DepthLimit(ValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)
            definitions = context.document.definitions
            fragments = {
                d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)
            }
            for definition in definitions:
                if not isinstance(definition, OperationDefinitionNode):
                    continue
                name = definition.name.value if definition.name else "anonymous"
                limits = _Limits(max_depth, introspection_depth, fragments)
                if (limit := limits.exceeded(definition.selection_set, max_depth)) is not None:
                    context.report_error(
                        GraphQLError(
                            f"'{name}' exceeds maximum operation depth of {limit}", [definition]
                        )
                    )

    return DepthLimit


class _Limits:
    def __init__(
        self, depth: int, introspection: int, fragments: dict[str, FragmentDefinitionNode]
    ) -> None:
        self.depth = depth
        self.introspection = introspection
        self.fragments = fragments

    def exceeded(self, selections: SelectionSetNode, limit: int) -> int | None:
        """The limit a path of ``selections`` breaks, or None."""
        return self._walk(selections, limit, 0, frozenset())

    def _walk(
        self, selection_set: SelectionSetNode | None, limit: int, depth: int, seen: frozenset[str]
    ) -> int | None:
        if selection_set is None:
            return None
        for node in selection_set.selections:
            broken: int | None = None
            if isinstance(node, FieldNode):
                # A top-level field is level 1 and a leaf counts as a level: `{ a { b } }` is
                # 2 deep, so a limit of 12 admits 12 levels of fields, not 13.
                inner = self.introspection if node.name.value in INTROSPECTION else limit
                if depth + 1 > inner:
                    return inner
                broken = self._walk(node.selection_set, inner, depth + 1, seen)
            elif isinstance(node, InlineFragmentNode):
                broken = self._walk(node.selection_set, limit, depth, seen)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                fragment = self.fragments.get(name)
                if fragment is not None and name not in seen:
                    broken = self._walk(fragment.selection_set, limit, depth, seen | {name})
            if broken is not None:
                return broken
        return None


class OperationLimits(SchemaExtension):
    """The token bound for the parser and the extra validation rules, set in the parse and
    validate hooks, which end before execution. strawberry's ``MaxTokensLimiter`` and
    ``AddValidationRules`` set them in ``on_operation``, a hook that stays open for the whole
    operation: for a subscription, two generators, their context managers and hooks held for
    the socket's life. Listed first, so the cached parser and the validation cache
    see what it sets."""

    def __init__(self, rules: Sequence[type[ASTValidationRule]], max_tokens: int) -> None:
        self.rules = tuple(rules)
        self.max_tokens = max_tokens

    def on_parse(self) -> Iterator[None]:
        self.execution_context.parse_options["max_tokens"] = self.max_tokens
        yield

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        context.validation_rules = (*context.validation_rules, *self.rules)
        yield
