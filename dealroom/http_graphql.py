"""GraphQL over HTTP, as the GraphQL-over-HTTP specification words it: ``GET`` and ``POST``
on ``/graphql``, answered in ``application/graphql-response+json`` or ``application/json`` as
the ``Accept`` header asks, with the spec's status codes and a coded error for every refusal.

Status policy (README "For client developers"):

* a request the server cannot read as a GraphQL request (method, media types, JSON, the
  parameters' types, a stalled or oversized body) is a 4xx whatever was accepted, with one
  coded error and no ``data``;
* a *request error* (the document does not parse or validate, variables do not coerce, a
  persisted query is unknown or not allowed) is 400 with ``application/graphql-response+json``
  and 200 with ``application/json`` (legacy clients read the body whatever the status), with no
  ``data``;
* once execution starts, 200 with ``data`` (field errors beside it).

A request may name its document by hash (``persisted_queries``). Websockets are not served
here (``app.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import strawberry
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import Receive, Scope, Send
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError
from strawberry.types.graphql import OperationType

from dealroom.domain.errors import ErrorCode
from dealroom.persisted_queries import PersistedQueries, RequestError
from dealroom.request_limits import JsonTooDeep, RequestRejected, decode_json
from dealroom.schema.context import AppState, Context
from dealroom.services.ops import metrics

GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"
ACCEPTED = f"{GRAPHQL_RESPONSE}; charset=utf-8, {JSON}; charset=utf-8"

# --- content negotiation ------------------------------------------------------------------------


def negotiate(accept: str | None) -> str | None:
    """The response media type for an ``Accept`` header: the first acceptable entry of the
    highest quality; no header means ``application/json`` (the spec's legacy default)."""
    if accept is None or not accept.strip():
        return JSON
    ranked: list[tuple[float, int, str]] = []
    for index, entry in enumerate(accept.split(",")):
        media, *params = (part.strip().lower() for part in entry.split(";"))
        quality = 1.0
        charset_ok = True
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
            elif name.strip() == "charset":
                charset_ok = value.strip().strip('"') in {"utf-8", "utf8"}
        if quality <= 0 or not charset_ok:
            continue
        if media == GRAPHQL_RESPONSE:
            ranked.append((-quality, index, GRAPHQL_RESPONSE))
        elif media in {JSON, "application/*", "*/*"}:
            ranked.append((-quality, index, JSON))
    return min(ranked)[2] if ranked else None


# --- the endpoint -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphQLParams:
    query: str | None
    variables: dict[str, Any] | None
    operation_name: str | None
    extensions: dict[str, Any] | None


class GraphQLHttp:
    """The ASGI endpoint for HTTP requests to ``/graphql``. Each request's unit of work is
    closed when the request ends, so no connection outlives its use."""

    def __init__(
        self,
        state: AppState,
        schema: strawberry.Schema,
        persisted: PersistedQueries,
        graphiql: Response | None,
    ) -> None:
        self.state = state
        self.schema = schema
        self.persisted = persisted
        self.graphiql = graphiql

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        context: Context | None = None
        try:
            media = negotiate(request.headers.get("accept"))
            try:
                if (page := self._page(request)) is not None:
                    response = page
                else:
                    if media is None:
                        raise RequestRejected(
                            406,
                            ErrorCode.NOT_ACCEPTABLE,
                            f"This endpoint answers {GRAPHQL_RESPONSE} or {JSON}.",
                            {"accept": ACCEPTED},
                        )
                    params = await self._params(request)
                    sub_response = Response()
                    context = Context(self.state, request, sub_response)
                    response = await self._execute(request, params, context, sub_response, media)
            except RequestRejected as refusal:
                metrics.ERRORS.labels(str(refusal.code)).inc()  # the schema never saw these
                response = _refusal(refusal, media or JSON)
            await response(scope, receive, send)
        finally:
            if context is not None and "unit" in vars(context):  # only if it used the database
                await context.unit.close()

    def _page(self, request: Request) -> Response | None:
        """GraphiQL for a browser's plain GET (``DEALROOM_GRAPHIQL``; off: 404)."""
        if request.method != "GET" or "query" in request.query_params:
            return None
        if "text/html" not in request.headers.get("accept", ""):
            return None
        if self.graphiql is None:
            return HTMLResponse("Not Found", status_code=404)
        return self.graphiql

    async def _params(self, request: Request) -> GraphQLParams:
        if request.method == "GET":
            raw: object = {
                key: self._json_param(key, value) if key in {"variables", "extensions"} else value
                for key, value in request.query_params.items()
            }
        elif request.method == "POST":
            raw = await self._body(request)
        else:
            raise RequestRejected(
                405,
                ErrorCode.METHOD_NOT_ALLOWED,
                "GraphQL is served over GET and POST.",
                {"allow": "GET, POST"},
            )
        if isinstance(raw, list):
            raise RequestRejected(
                400, ErrorCode.BAD_REQUEST, "Batched requests are not supported: send one each."
            )
        if not isinstance(raw, dict):
            raise RequestRejected(400, ErrorCode.BAD_REQUEST, "The request must be a JSON object.")
        query, variables = raw.get("query"), raw.get("variables")
        name, extensions = raw.get("operationName"), raw.get("extensions")
        for key, value, kind in (
            ("query", query, str),
            ("operationName", name, str),
            ("variables", variables, dict),
            ("extensions", extensions, dict),
        ):
            if value is not None and not isinstance(value, kind):
                wanted = "a string" if kind is str else "an object"
                raise RequestRejected(
                    400, ErrorCode.BAD_REQUEST, f"`{key}` must be {wanted} or null, if given."
                )
        if query is None and not (extensions or {}).get("persistedQuery"):
            raise RequestRejected(
                400, ErrorCode.BAD_REQUEST, "No GraphQL query found in the request."
            )
        return GraphQLParams(query, variables, name, extensions)

    async def _body(self, request: Request) -> object:
        media, _, params = request.headers.get("content-type", "").partition(";")
        charset = re.search(r"charset\s*=\s*\"?([\w-]+)", params, re.IGNORECASE)
        if media.strip().lower() != JSON or (
            charset is not None and charset.group(1).lower() not in {"utf-8", "utf8"}
        ):
            raise RequestRejected(
                415,
                ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                "POST bodies must be application/json (UTF-8).",
                {"accept-post": JSON},
            )
        body = await request.body()
        if not body.strip():
            raise RequestRejected(400, ErrorCode.BAD_REQUEST, "The request body is empty.")
        return self._decode(body, "The request body")

    def _json_param(self, key: str, value: str) -> object:
        return self._decode(value.encode(), f"The `{key}` parameter") if value else None

    def _decode(self, data: bytes, what: str) -> object:
        settings = self.state.settings
        try:
            return decode_json(data, settings.max_json_depth, settings.max_json_items)
        except JsonTooDeep as exc:
            raise RequestRejected(400, ErrorCode.BAD_USER_INPUT, f"The request {exc.msg}.") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RequestRejected(400, ErrorCode.BAD_REQUEST, f"{what} is not valid JSON.") from exc

    async def _execute(
        self,
        request: Request,
        params: GraphQLParams,
        context: Context,
        sub_response: Response,
        media: str,
    ) -> Response:
        # Mutations never run over GET: a link or a prefetch must not change anything.
        allowed = {OperationType.QUERY}
        if request.method == "POST":
            allowed.add(OperationType.MUTATION)
        try:
            document = self.persisted.document(params.query, params.extensions)
            result = await self.schema.execute(
                document,
                variable_values=params.variables,
                context_value=context,
                operation_name=params.operation_name,
                allowed_operation_types=allowed,
                operation_extensions=params.extensions,
            )
        except RequestError as error:
            metrics.ERRORS.labels(str(error.code)).inc()
            result = PreExecutionError(data=None, errors=[error.error])
        except InvalidOperationTypeError as exc:
            if exc.operation_type is OperationType.MUTATION:
                raise RequestRejected(
                    405,
                    ErrorCode.METHOD_NOT_ALLOWED,
                    "Mutations are sent with POST.",
                    {"allow": "POST"},
                ) from exc
            message = (
                "Subscriptions are served over a websocket at /graphql."
                if exc.operation_type is OperationType.SUBSCRIPTION
                else exc.as_http_error_reason(request.method)
            )
            result = PreExecutionError(
                data=None,
                errors=[GraphQLError(message, extensions={"code": str(ErrorCode.BAD_USER_INPUT)})],
            )
        except CannotGetOperationTypeError as exc:
            unknown = GraphQLError(
                exc.as_http_error_reason(), extensions={"code": str(ErrorCode.BAD_USER_INPUT)}
            )
            result = PreExecutionError(data=None, errors=[unknown])
        except MissingQueryError as exc:
            raise RequestRejected(
                400, ErrorCode.BAD_REQUEST, "No GraphQL query found in the request."
            ) from exc
        return _response(result, media, sub_response)


def is_request_error(result: ExecutionResult) -> bool:
    """Errors raised before execution began (parse, validation, variable coercion, the
    document bounds): no field ran, so there is no ``data`` to give. Field errors carry a
    ``path``; these never do."""
    if isinstance(result, PreExecutionError):
        return True
    return (
        result.data is None
        and bool(result.errors)
        and all(error.path is None for error in result.errors or ())
    )


def _response(result: ExecutionResult, media: str, sub_response: Response) -> Response:
    request_error = is_request_error(result)
    body: dict[str, Any] = {} if request_error else {"data": result.data}
    if result.errors:
        body["errors"] = [error.formatted for error in result.errors]
    if result.extensions:
        body["extensions"] = result.extensions
    status = 200
    if request_error and media == GRAPHQL_RESPONSE:
        internal = any(
            (error.extensions or {}).get("code") == ErrorCode.INTERNAL
            for error in result.errors or ()
        )
        status = 500 if internal else 400
    response = Response(
        json.dumps(body, separators=(",", ":")).encode(),
        status_code=status,
        media_type=f"{media}; charset=utf-8",
    )
    # Cookies a resolver set (sign-in, guest key, act-as).
    response.headers.raw.extend(
        (name, value) for name, value in sub_response.headers.raw if name == b"set-cookie"
    )
    return response


def _refusal(refusal: RequestRejected, media: str) -> Response:
    error = {"message": refusal.message, "extensions": {"code": str(refusal.code)}}
    return Response(
        json.dumps({"errors": [error]}, separators=(",", ":")).encode(),
        status_code=refusal.status,
        media_type=f"{media}; charset=utf-8",
        headers=refusal.headers,
    )
