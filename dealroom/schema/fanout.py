"""Fan-out: an event is executed and serialised once per selection, then written to every
subscriber that asked for that selection.

graphql-core executes a subscription's selection set once per event *per subscriber* (the
event is the root value of a fresh execution), and strawberry's websocket handler encodes each
result to JSON per subscriber. With thousands of readers of the same panes that is most of the
cost of a delivery. Three shared tables take it out, without changing a byte on the wire:

* **projections** (:func:`shared`): a subscription resolver hands its reader-specific view of a
  stored event to :func:`shared` with a key (the event and what the view depends on, e.g. the
  reader's seat). Every subscriber of that channel with that key gets the *same* object.
* **executions** (:class:`FanoutExecutor`): the per-event execution of a shared object is run
  once per (operation, variables used below the subscription's root field); every other
  subscriber with that selection reuses the result (once it has settled, without graphql-core's
  copy of the executor). Anything else (a root value that is not shared, a request with an
  API key, whose ScopeGate checks run inside execution, a result with errors) runs
  graphql-core's normal execution per subscriber.
* **serialisations** (:func:`shared_frame`): the websocket handlers encode a shared result's
  ``data`` once and splice it into each operation's envelope; the bytes are what
  ``encode_json`` of the whole message gives.

The tables are bounded and keyed by object identity (each entry keeps its object alive, so an
id is never reused while it is in the table); an evicted entry only costs a re-execution.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any, Final, Generic, TypeVar
from weakref import ref

from graphql import (
    FieldNode,
    GraphQLResolveInfoHelpers,
    OperationDefinitionNode,
    VariableNode,
    visit,
)
from graphql.language import Visitor
from graphql.pyutils import RefMap
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from dealroom.schema.scope_gate import presents_api_key
from dealroom.services.ops import metrics

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

TABLE_SIZE: Final = 256
"""Entries per table: events fan out to their subscribers within a few loop turns, so this
covers seconds of traffic at the rates one process sustains (~100 events/s). Kept small:
every entry's objects are live, so the young garbage collections walk them (2,048 entries
were about 50,000 objects: a 77 ms young collection, docs/BENCHMARKS.md)."""


class _Bounded(Generic[K, V]):
    """A small LRU map."""

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int) -> None:
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()


class _ByIdentity(Generic[V]):
    """A bounded map keyed by an object's identity; the entry keeps the object alive."""

    __slots__ = ("_table",)

    def __init__(self, size: int) -> None:
        self._table: _Bounded[int, tuple[object, V]] = _Bounded(size)

    def get(self, obj: object) -> V | None:
        entry = self._table.get(id(obj))
        if entry is None or entry[0] is not obj:
            return None
        return entry[1]

    def put(self, obj: object, value: V) -> None:
        self._table.put(id(obj), (obj, value))

    def clear(self) -> None:
        self._table.clear()


_SelectionKey = tuple[int, tuple[tuple[str, str], ...]]
_Result = Any  # graphql-core's ExecutionResult, or a future of it while it is computed

_projections: _Bounded[Hashable, object] = _Bounded(TABLE_SIZE)
_executions: _ByIdentity[dict[_SelectionKey, tuple[OperationDefinitionNode, _Result]]] = (
    _ByIdentity(TABLE_SIZE)
)
_serialised: _ByIdentity[list[str]] = _ByIdentity(TABLE_SIZE)
_below_root: _ByIdentity[frozenset[str]] = _ByIdentity(256)


ENABLED = True
"""Off, every subscriber's event is its own (executed and encoded per subscriber): the
baseline ``bench/ws_memory.py --events`` measures fan-out against, in the same run."""


def shared(key: Hashable, make: Callable[[], T]) -> T:
    """The one object for ``key`` that every subscriber of a channel is handed (``make``
    builds it the first time). ``key`` must hold everything the object depends on; a key
    that cannot be hashed gets an object of its own, executed per subscriber."""
    if not ENABLED:
        return make()
    try:
        found = _projections.get(key)
    except TypeError:
        return make()
    if found is None:
        found = make()
        _projections.put(key, found)
        _executions.put(found, {})
    return found  # type: ignore[return-value]  # stored by this function for this key


class _Helpers:
    """The executor's ``gather`` and ``track``, without keeping it alive (see
    ``FanoutExecutor.__init__``): two bound methods of this, a weak reference and this are
    all a held subscription keeps for them."""

    __slots__ = ("_executor",)

    def __init__(self, executor: FanoutExecutor) -> None:
        self._executor = ref(executor)

    def _alive(self) -> FanoutExecutor:
        executor = self._executor()
        if executor is None:  # a resolver kept its info past the execution
            raise RuntimeError("the GraphQL execution this resolve info belongs to has ended")
        return executor

    def gather(self, values: Sequence[Awaitable[Any]]) -> Awaitable[list[Any]]:
        return self._alive().gather_async_work(values)

    def track(self, values: Sequence[Any]) -> None:
        self._alive().track_async_work(values)


def reset() -> None:
    """Forget every shared entry (tests that count executions start from empty tables)."""
    for table in (_projections, _executions, _serialised, _below_root):
        table.clear()


def _variables_below_root(
    operation: OperationDefinitionNode, fragments: dict[str, Any]
) -> frozenset[str]:
    """The variables an event's execution can depend on: those used by the root field's
    directives and selection set, and by every fragment (not the root field's arguments,
    which only the subscribe step reads)."""
    cached = _below_root.get(operation)
    if cached is not None:
        return cached
    names: set[str] = set()

    class Collect(Visitor):
        def enter_variable(self, node: VariableNode, *_: object) -> None:
            names.add(node.name.value)

    for selection in operation.selection_set.selections:
        if isinstance(selection, FieldNode):
            for directive in selection.directives or ():
                visit(directive, Collect())
            if selection.selection_set is not None:
                visit(selection.selection_set, Collect())
        else:
            visit(selection, Collect())
    for fragment in fragments.values():
        visit(fragment, Collect())
    found = frozenset(names)
    _below_root.put(operation, found)
    return found


class FanoutExecutor(StrawberryGraphQLCoreExecutionContext):
    """strawberry's executor; a subscription event whose root value was made by
    :func:`shared` is executed once per selection and the result reused."""

    per_event = False
    _fanout_key: _SelectionKey | None  # set by _selection_key, once per subscription

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # graphql-core hands every resolve info helpers bound to the executor itself: a
        # reference cycle per execution, holding the request's context, infos and results,
        # that only the garbage collector frees. A subscription's executor lives as long as
        # the subscription, so ``dealroom serve`` freezes it (gc_tuning.freeze_survivors) and
        # the cycle, once the subscription closed, kept its socket, handler and context (71
        # objects) frozen until a full collection over the whole heap (docs/BENCHMARKS.md).
        # Held weakly, nothing of an execution outlives it.
        helpers = _Helpers(self)
        self.async_helpers = GraphQLResolveInfoHelpers(gather=helpers.gather, track=helpers.track)

    def build_per_event_executor(self, payload: Any) -> Any:
        settled = self._settled_result(payload)
        if settled is not None:
            # Another subscriber with this selection executed the event: no copy of this
            # executor (about 20 attributes) is made to hand its result over.
            _REUSED.inc()
            return _Settled(settled)
        executor = super().build_per_event_executor(payload)
        assert isinstance(executor, FanoutExecutor)  # a copy of this one
        executor.per_event = True
        # graphql-core's copy shares the subscription's memo tables, keyed by the identity of
        # field lists each event builds anew: every event added entries that lived as long
        # as the subscription (memory per subscription grew with every event delivered). The
        # event's own tables keep the memo within its execution.
        executor._relevant_sub_fields = {}
        executor._stream_usages = RefMap()
        return executor

    def _selection_key(self) -> _SelectionKey | None:
        """What an event's shared execution for this subscription is filed under (the
        operation and the variables used below its root field); None when its events are
        executed per subscriber (a request with an API key: ScopeGate's checks run inside
        execution). The same for every event of the subscription, so worked out once."""
        try:
            return self._fanout_key
        except AttributeError:
            pass
        key: _SelectionKey | None = None
        if not presents_api_key(self.context_value):
            operation = self.operation
            used = _variables_below_root(operation, self.fragment_definitions)
            coerced = self.variable_values.coerced
            key = (id(operation), tuple(sorted((name, repr(coerced.get(name))) for name in used)))
        self._fanout_key = key
        return key

    def _settled_result(self, payload: Any) -> _Result | None:
        """The finished, shared result of ``payload`` for this subscription's selection, if
        another subscriber's execution has produced one."""
        results = _executions.get(payload)
        if results is None:
            return None
        key = self._selection_key()
        found = results.get(key) if key is not None else None
        if found is None or found[0] is not self.operation or isinstance(found[1], asyncio.Future):
            return None
        return found[1]

    def execute_operation(self, serially: bool | None = None) -> Any:
        root = self.root_value
        results = _executions.get(root) if self.per_event else None
        key = self._selection_key() if results is not None else None
        if results is None or key is None:
            if self.per_event:
                _OWN.inc()
            return super().execute_operation(serially)
        operation = self.operation
        found = results.get(key)
        if found is not None and found[0] is operation:
            _REUSED.inc()
            outcome = found[1]
            return asyncio.shield(outcome) if isinstance(outcome, asyncio.Future) else outcome
        _SHARED.inc()
        outcome = super().execute_operation(serially)
        if self.is_awaitable(outcome):
            future = asyncio.ensure_future(_settle(outcome, results, key, operation))
            results[key] = (operation, future)
            return asyncio.shield(future)
        _keep(outcome, results, key, operation)
        return outcome


class _Settled:
    """What ``build_per_event_executor`` hands graphql-core for an event whose result another
    subscriber's execution has already produced (graphql-core only calls
    ``execute_operation`` on it)."""

    __slots__ = ("_result",)

    def __init__(self, result: _Result) -> None:
        self._result = result

    def execute_operation(self, serially: bool | None = None) -> _Result:
        return self._result


_OWN: Final = metrics.SUBSCRIPTION_EXECUTIONS.labels("own")
_SHARED: Final = metrics.SUBSCRIPTION_EXECUTIONS.labels("shared")
_REUSED: Final = metrics.SUBSCRIPTION_EXECUTIONS.labels("reused")


async def _settle(
    pending: Awaitable[Any],
    results: dict[_SelectionKey, tuple[OperationDefinitionNode, _Result]],
    key: _SelectionKey,
    operation: OperationDefinitionNode,
) -> Any:
    try:
        outcome = await pending
    except BaseException:
        results.pop(key, None)
        raise
    _keep(outcome, results, key, operation)
    return outcome


def _keep(
    outcome: Any,
    results: dict[_SelectionKey, tuple[OperationDefinitionNode, _Result]],
    key: _SelectionKey,
    operation: OperationDefinitionNode,
) -> None:
    """Share a clean result; one with errors is left to each subscriber (error handling
    annotates errors in place)."""
    if getattr(outcome, "errors", None) or not isinstance(getattr(outcome, "data", None), dict):
        results.pop(key, None)
        return
    results[key] = (operation, outcome)
    _serialised.put(outcome.data, [])


def shared_frame(message: dict[str, Any], encode: Callable[[object], str | bytes]) -> str | None:
    """The text of ``message`` (a ``next``/``data`` message whose payload is only a shared
    result's ``data``) with that data encoded once for every subscriber; ``None`` when the
    message is not one (the caller encodes it as usual)."""
    payload = message.get("payload")
    if not isinstance(payload, dict) or len(payload) != 1 or "data" not in payload:
        return None
    data = payload["data"]
    encoded = _serialised.get(data)
    if encoded is None:
        return None
    if not encoded:
        text = encode(data)
        if not isinstance(text, str):
            return None
        encoded.append(text)
        metrics.SUBSCRIPTION_SERIALISATIONS.inc()
    envelope = encode({**message, "payload": {"data": None}})
    if not isinstance(envelope, str) or not envelope.endswith(_NULL_TAIL):
        return None
    return envelope[: -len(_NULL_TAIL)] + encoded[0] + "}}"


_NULL_TAIL: Final = "null}}"
"""How the envelope of a message whose payload (its last key) is ``{"data": None}`` ends."""
