"""Request JSON is bounded on its raw bytes before it is decoded: nesting
(DEALROOM_MAX_JSON_DEPTH) and items (DEALROOM_MAX_JSON_ITEMS: strings, arrays, objects and
separators), so no body under the byte limit can hold the event loop for long
(bench/body_decode.py measures it)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from dealroom.request_limits import JsonTooLarge, check_json_shape
from tests.support.graphql import Client

LIMIT = 256 * 1024


def worst_body() -> bytes:
    """Just under the byte limit, all small nested arrays: the dearest body to decode."""
    unit = "[[[[]]]]"
    padding = ",".join([unit] * ((LIMIT - 200) // (len(unit) + 1)))
    return ('{"query":"{ __typename }","variables":{"pad":[' + padding + "]}}").encode()


async def test_a_body_of_small_nested_arrays_is_refused_before_decoding(client: Client) -> None:
    body = worst_body()
    assert len(body) < LIMIT

    response = await client.http.post(
        "/graphql", content=body, headers={"content-type": "application/json"}
    )

    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "more than 10000 items" in error["message"]


async def test_a_body_within_the_item_bound_is_served(client: Client) -> None:
    variables = {"pad": [[1, 2]] * 2000}  # 2,000 arrays, 4,000 separators

    response = await client.http.post(
        "/graphql", json={"query": "{ __typename }", "variables": variables}
    )

    assert response.json() == {"data": {"__typename": "Query"}}


async def test_brackets_commas_and_escaped_quotes_inside_strings_are_text(client: Client) -> None:
    text = '[[[{{,,"\\]]' * 20_000  # 200 KB of structure characters, all inside one string

    response = await client.http.post(
        "/graphql", json={"query": "{ __typename }", "variables": {"text": text}}
    )

    assert response.json() == {"data": {"__typename": "Query"}}


def depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def items(value: object) -> int:
    """Strings (keys too), containers and separators: what the raw scan counts."""
    if isinstance(value, dict):
        inner = sum(1 + items(v) for v in value.values())
        return 1 + inner + max(len(value) - 1, 0)
    if isinstance(value, list):
        return 1 + sum(map(items, value)) + max(len(value) - 1, 0)
    return 1 if isinstance(value, str) else 0


TEXT = st.text(alphabet='[]{}",\\:ab \u00e9\n', max_size=6)
VALUES = st.recursive(
    st.none() | st.integers() | st.booleans() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=30,
)


@given(VALUES, st.integers(min_value=1, max_value=8), st.integers(min_value=1, max_value=60))
def test_the_raw_scan_agrees_with_the_decoded_value(value: object, limit: int, most: int) -> None:
    raw = json.dumps(value, ensure_ascii=False).encode()

    refusal = check_json_shape(raw, limit, most)

    if items(value) > most:
        assert isinstance(refusal, JsonTooLarge)
    elif depth(value) > limit:
        assert refusal is not None
        assert not isinstance(refusal, JsonTooLarge)
    else:
        assert refusal is None
