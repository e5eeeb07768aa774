"""The document bounds checked before parsing (``schema/limits.document_error``) are worked out
once per distinct document and set of limits: clients send the same few documents, and the token
scan is the costly part. What is kept must not change any answer."""

from __future__ import annotations

from dealroom.config import Settings
from dealroom.schema import limits

POST = "mutation($input: PostMessageInput!) { postMessage(input: $input) { cursor } }"


def test_a_document_seen_before_is_not_scanned_again() -> None:
    settings = Settings()
    query = POST + " # test_a_document_seen_before"
    before = limits._checked.cache_info()
    assert limits.document_error(query, settings) is None
    assert limits.document_error(query, settings) is None
    after = limits._checked.cache_info()
    assert after.misses == before.misses + 1
    assert after.hits == before.hits + 1


def test_the_same_document_under_other_limits_gets_their_answer() -> None:
    query = POST + " # test_the_same_document_under_other_limits"
    assert limits.document_error(query, Settings()) is None
    refused = limits.document_error(query, Settings(max_tokens=5))
    assert refused is not None
    assert "more than 5 tokens" in refused.message
    assert refused.extensions == {"code": "BAD_USER_INPUT"}
    assert limits.document_error(query, Settings()) is None


def test_a_document_over_the_size_bound_is_refused_and_not_kept() -> None:
    settings = Settings()
    query = "{ " + "a " * settings.max_query_chars + "}"
    before = limits._checked.cache_info()
    refused = limits.document_error(query, settings)
    assert refused is not None
    assert f"longer than {settings.max_query_chars} characters" in refused.message
    assert limits._checked.cache_info().currsize == before.currsize
