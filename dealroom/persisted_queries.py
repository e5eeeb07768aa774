"""Documents named by their sha256 hash: Apollo's automatic persisted queries
(``PersistedQueries``, over HTTP) and trusted documents (``DEALROOM_TRUSTED_DOCUMENTS``: the
only documents a deployment runs, checked over HTTP and websockets by ``schema.build``)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphql import GraphQLError

from dealroom.domain.errors import ErrorCode
from dealroom.request_limits import RequestRejected

SHA256 = re.compile(r"[0-9a-f]{64}")


def sha256_hex(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


def load_trusted_documents(path: Path) -> dict[str, str | None]:
    """The trusted-documents file: a JSON list of hashes, an object of hash -> document (or
    null), or Apollo's persisted-query manifest (``{"operations": [{"body": ...}]}``). A
    document's hash is computed here, so a listed text can never run under another hash."""
    raw = json.loads(path.read_text())
    listed: dict[str, str | None] = {}
    if isinstance(raw, dict) and isinstance(raw.get("operations"), list):
        for operation in raw["operations"]:
            listed[sha256_hex(operation["body"])] = operation["body"]
    elif isinstance(raw, dict):
        for digest, body in raw.items():
            if body is not None and sha256_hex(body) != digest.lower():
                raise ValueError(f"{path}: the document listed under {digest} has another hash")
            listed[digest.lower()] = body
    elif isinstance(raw, list):
        listed = {str(digest).lower(): None for digest in raw}
    else:
        raise ValueError(f"{path}: expected a list of hashes or an object of hash -> document")
    bad = [digest for digest in listed if not SHA256.fullmatch(digest)]
    if bad:
        raise ValueError(f"{path}: not sha256 hashes: {', '.join(bad[:3])}")
    return listed


NOT_FOUND_MESSAGE = "PersistedQueryNotFound"
"""The message Apollo Client's and urql's persisted-query links look for, verbatim."""
NOT_SUPPORTED_MESSAGE = "PersistedQueryNotSupported"


class RequestError(Exception):
    """A request error (spec wording): answered as a GraphQL response without ``data``."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.error = GraphQLError(message, extensions={"code": str(code)})


class PersistedQueries:
    """Apollo's automatic persisted queries: a request may name its document by sha256
    (``extensions.persistedQuery.sha256Hash``); an unknown hash is ``PersistedQueryNotFound``,
    and the client then sends the document with its hash, which is checked and remembered.

    The memory is this process's, bounded (least recently used documents go first, each no
    longer than ``max_chars``): several processes each learn a document once.

    Trusted documents (``trusted``, loaded from ``DEALROOM_TRUSTED_DOCUMENTS``): only those
    hashes run, sent by hash or in full; the rest is ``PERSISTED_QUERY_NOT_IN_LIST``. Listed
    documents whose text the file carries run by hash from the first request."""

    def __init__(
        self, size: int, max_chars: int, trusted: Mapping[str, str | None] | None = None
    ) -> None:
        self.size = size
        self.max_chars = max_chars
        self.trusted = dict(trusted) if trusted is not None else None
        self._documents: OrderedDict[str, str] = OrderedDict()

    def document(self, query: str | None, extensions: Mapping[str, Any] | None) -> str | None:
        """The document to run, or a RequestError/RequestRejected."""
        persisted = (extensions or {}).get("persistedQuery")
        if persisted is None:
            return query  # a document sent whole meets the trusted list in the schema
        if self.size == 0 and self.trusted is None:
            raise RequestError(ErrorCode.PERSISTED_QUERY_NOT_SUPPORTED, NOT_SUPPORTED_MESSAGE)
        digest = _hash_of(persisted)
        if self.trusted is not None:
            self._require_listed(digest)
        if query is None:
            known = self._recall(digest)
            if known is None:
                raise RequestError(ErrorCode.PERSISTED_QUERY_NOT_FOUND, NOT_FOUND_MESSAGE)
            return known
        if sha256_hex(query) != digest:
            raise RequestRejected(
                400, ErrorCode.BAD_REQUEST, "The persisted query hash does not match the query."
            )
        self._remember(digest, query)
        return query

    def _require_listed(self, digest: str) -> None:
        assert self.trusted is not None
        if digest not in self.trusted:
            raise RequestError(
                ErrorCode.PERSISTED_QUERY_NOT_IN_LIST,
                "This server runs only its trusted documents; this one is not among them.",
            )

    def _recall(self, digest: str) -> str | None:
        if self.trusted is not None and (listed := self.trusted.get(digest)) is not None:
            return listed
        known = self._documents.get(digest)
        if known is not None:
            self._documents.move_to_end(digest)
        return known

    def _remember(self, digest: str, query: str) -> None:
        if self.size == 0 or len(query) > self.max_chars:
            return  # a document over the size bound is refused before parsing anyway
        self._documents[digest] = query
        self._documents.move_to_end(digest)
        while len(self._documents) > self.size:
            self._documents.popitem(last=False)


def _hash_of(persisted: object) -> str:
    if not isinstance(persisted, dict) or persisted.get("version") != 1:
        raise RequestRejected(
            400,
            ErrorCode.BAD_REQUEST,
            "extensions.persistedQuery must be {version: 1, sha256Hash}.",
        )
    digest = persisted.get("sha256Hash")
    if not isinstance(digest, str) or not SHA256.fullmatch(digest.lower()):
        raise RequestRejected(
            400,
            ErrorCode.BAD_REQUEST,
            "extensions.persistedQuery.sha256Hash must be 64 hex digits.",
        )
    return digest.lower()
