"""Sign-up, sign-in, sign-out, sessions and act-as, driven over HTTP like a client app."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, AuthSession, Credential, Room
from tests.conftest import Server
from tests.support.graphql import Client, sign_up
from tests.support.rooms import (
    ME,
    PASSWORD,
    account_client,
    count_rows,
    grant,
    only_error,
    post_raw,
    set_cookies,
    sign_up_as,
)

SESSION_COOKIE = "dealroom_session"
SIGN_UP = "mutation($input: SignUpInput!) { signUp(input: $input) { token account { id } } }"
SIGN_IN = "mutation($input: SignInInput!) { signIn(input: $input) { token account { handle } } }"
SIGN_OUT = "mutation { signOut }"
THIRTY_DAYS = 30 * 24 * 3600


def sign_up_input(**overrides: str) -> dict[str, Any]:
    fields = {
        "email": "dev@example.com",
        "password": PASSWORD,
        "handle": "devraman",
        "displayName": "Dev Raman",
    }
    return {"input": {**fields, **overrides}}


async def me(client: Client) -> dict[str, Any] | None:
    data = await client.query(ME)
    found: dict[str, Any] | None = data["me"]
    return found


# --- sign-up and the session cookie ------------------------------------------------------


async def test_sign_up_returns_a_token_and_sets_an_httponly_session_cookie(
    server: Server,
) -> None:
    response = await post_raw(server.client(), SIGN_UP, sign_up_input())

    token = response.json()["data"]["signUp"]["token"]
    cookie = set_cookies(response)[SESSION_COOKIE]
    assert token
    assert cookie.value == token
    assert cookie["httponly"] is True
    assert cookie["path"] == "/"
    assert cookie["samesite"].lower() == "lax"
    assert int(cookie["max-age"]) == THIRTY_DAYS


async def test_the_session_cookie_alone_authenticates_me(server: Server) -> None:
    client = server.client()
    payload = await sign_up_as(client, "devraman", "Dev Raman")
    assert "Authorization" not in client.headers

    found = await me(client)

    assert found is not None
    assert found["id"] == payload["account"]["id"]
    assert found["handle"] == "devraman"
    assert found["acting"] is False


async def test_a_bearer_token_alone_authenticates_me(server: Server) -> None:
    payload = await sign_up_as(server.client(), "devraman", "Dev Raman")
    fresh = server.client().bearer(payload["token"])  # no cookie jar shared

    found = await me(fresh)

    assert found is not None
    assert found["handle"] == "devraman"
    assert found["signedInAs"]["handle"] == "devraman"


async def test_me_is_null_for_an_anonymous_client(server: Server) -> None:
    await sign_up_as(server.client(), "devraman", "Dev Raman")

    assert await me(server.client()) is None


# --- sign-out ----------------------------------------------------------------------------


async def test_sign_out_revokes_the_bearer_token(server: Server) -> None:
    client = server.client()
    await sign_up(client, "devraman", "Dev Raman")
    assert (await client.query(SIGN_OUT))["signOut"] is True

    error = await only_error(client, ME)

    assert error["extensions"]["code"] == "UNAUTHENTICATED"


async def test_sign_out_clears_the_session_cookie(server: Server) -> None:
    client = server.client()
    await sign_up_as(client, "devraman", "Dev Raman")
    assert client.http.cookies.get(SESSION_COOKIE)

    response = await post_raw(client, SIGN_OUT)

    cleared = set_cookies(response)[SESSION_COOKIE]
    assert cleared.value in ("", '""')
    assert int(cleared["max-age"]) == 0
    assert cleared["path"] == "/"
    assert client.http.cookies.get(SESSION_COOKIE) is None
    assert await me(client) is None


async def test_sign_out_revokes_only_the_presented_session(server: Server) -> None:
    first = await sign_up_as(server.client(), "devraman", "Dev Raman")
    laptop = server.client().bearer(first["token"])
    phone = server.client()
    signed_in = await phone.query(
        SIGN_IN, {"input": {"email": "devraman@example.com", "password": PASSWORD}}
    )
    phone.bearer(signed_in["signIn"]["token"])

    await laptop.query(SIGN_OUT)

    assert await me(phone) is not None
    assert (await only_error(laptop, ME))["extensions"]["code"] == "UNAUTHENTICATED"


# --- stale and expired sessions ----------------------------------------------------------


@pytest.mark.parametrize("staleness", ["revoked", "expired", "never_issued"])
async def test_a_stale_session_cookie_is_treated_as_anonymous(
    server: Server, staleness: str
) -> None:
    client = server.client()
    payload = await sign_up_as(client, "devraman", "Dev Raman")
    if staleness == "revoked":
        await server.client().bearer(payload["token"]).query(SIGN_OUT)
    elif staleness == "expired":
        server.clock.advance(timedelta(days=30, minutes=1))
    else:
        client = server.client()
        client.headers["Cookie"] = f"{SESSION_COOKIE}=s_{'x' * 43}"

    body = await client.raw(ME)

    assert "errors" not in body, body
    assert body["data"]["me"] is None


async def test_a_session_expires_after_thirty_days(server: Server) -> None:
    payload = await sign_up_as(server.client(), "devraman", "Dev Raman")
    client = server.client().bearer(payload["token"])
    server.clock.advance(timedelta(days=29, hours=23))
    assert await me(client) is not None

    server.clock.advance(timedelta(hours=2))
    error = await only_error(client, ME)

    assert error["extensions"]["code"] == "UNAUTHENTICATED"


# --- sign-in -----------------------------------------------------------------------------


async def test_sign_in_with_the_right_password_returns_a_working_token(server: Server) -> None:
    await sign_up_as(server.client(), "devraman", "Dev Raman")
    client = server.client()

    data = await client.query(
        SIGN_IN, {"input": {"email": " DevRaman@Example.com ", "password": PASSWORD}}
    )

    assert data["signIn"]["account"]["handle"] == "devraman"
    found = await me(server.client().bearer(data["signIn"]["token"]))
    assert found is not None
    assert found["handle"] == "devraman"


async def test_wrong_password_and_unknown_email_fail_alike(server: Server, db: Db) -> None:
    await sign_up_as(server.client(), "devraman", "Dev Raman")
    sessions_before = await count_rows(db, AuthSession)

    wrong_password = await post_raw(
        server.client(),
        SIGN_IN,
        {"input": {"email": "devraman@example.com", "password": "not the password"}},
    )
    unknown_email = await post_raw(
        server.client(), SIGN_IN, {"input": {"email": "nobody@example.com", "password": PASSWORD}}
    )

    errors = [response.json()["errors"] for response in (wrong_password, unknown_email)]
    assert [len(e) for e in errors] == [1, 1]
    assert [e[0]["extensions"]["code"] for e in errors] == ["UNAUTHENTICATED"] * 2
    assert errors[0][0]["message"] == errors[1][0]["message"]
    assert SESSION_COOKIE not in set_cookies(wrong_password)
    assert SESSION_COOKIE not in set_cookies(unknown_email)
    assert await count_rows(db, AuthSession) == sessions_before


# --- sign-up validation and conflicts ----------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"handle": "devraman", "email": "other@example.com"}, "handle"),
        ({"handle": "DevRaman", "email": "other@example.com"}, "handle"),
        ({"handle": "someoneelse", "email": "dev@example.com"}, "email"),
        ({"handle": "someoneelse", "email": "DEV@example.com"}, "email"),
    ],
    ids=["same-handle", "handle-other-case", "same-email", "email-other-case"],
)
async def test_a_taken_handle_or_email_is_a_conflict_naming_the_field(
    server: Server, db: Db, overrides: dict[str, str], field: str
) -> None:
    await server.client().query(SIGN_UP, sign_up_input())

    error = await only_error(server.client(), SIGN_UP, sign_up_input(**overrides))

    assert error["extensions"]["code"] == "CONFLICT"
    assert error["extensions"]["field"] == field
    assert await count_rows(db, Account) == 1


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"email": "not-an-email"}, "email"),
        ({"email": "two@@example.com"}, "email"),
        ({"handle": "ab"}, "handle"),
        ({"handle": "has space"}, "handle"),
        ({"handle": "-leading"}, "handle"),
        ({"handle": "x" * 33}, "handle"),
        ({"password": "short"}, "password"),
        ({"displayName": "   "}, "displayName"),
    ],
    ids=[
        "email-no-at",
        "email-two-ats",
        "handle-too-short",
        "handle-space",
        "handle-leading-dash",
        "handle-too-long",
        "password-too-short",
        "display-name-blank",
    ],
)
async def test_invalid_sign_up_input_is_bad_user_input_and_creates_nothing(
    server: Server, db: Db, overrides: dict[str, str], field: str
) -> None:
    response = await post_raw(server.client(), SIGN_UP, sign_up_input(**overrides))

    errors = response.json()["errors"]
    assert [e["extensions"]["code"] for e in errors] == ["BAD_USER_INPUT"]
    assert errors[0]["extensions"].get("field") == field
    assert SESSION_COOKIE not in set_cookies(response)
    for model in (Account, Credential, AuthSession, Room):
        assert await count_rows(db, model) == 0, model.__name__


async def test_sign_up_creates_exactly_one_home_room(server: Server, db: Db) -> None:
    client = server.client()
    account_id = await account_client(client, "devraman", "Dev Raman")

    data = await client.query(
        "{ me { homeRoom { id kind mode readerSeat } } rooms(first: 10) { edges { node { id } } } }"
    )

    home = data["me"]["homeRoom"]
    assert home["kind"] == "HOME"
    assert home["readerSeat"] == "HOST"
    assert [edge["node"]["id"] for edge in data["rooms"]["edges"]] == [home["id"]]
    hosted = Room.host_account_id == uuid.UUID(account_id)
    assert await count_rows(db, Room, hosted) == 1
    assert await count_rows(db, Room, hosted, Room.kind == "home") == 1
    assert await count_rows(db, Room, Room.kind == "deal") == 0


# --- act-as ------------------------------------------------------------------------------


async def test_a_manager_acting_as_a_managed_account_is_that_account_in_me(
    server: Server, db: Db
) -> None:
    manager = server.client()
    manager_id = await account_client(manager, "opsadmin", "Ops Admin")
    managed_id = await account_client(server.client(), "devraman", "Dev Raman")
    await grant(db, "opsadmin", "devraman")
    manager.headers["X-Act-As"] = managed_id

    found = await me(manager)

    assert found is not None
    assert found["id"] == managed_id
    assert found["handle"] == "devraman"
    assert found["acting"] is True
    assert found["signedInAs"] == {"id": manager_id, "handle": "opsadmin"}


async def test_acting_without_a_manager_edge_is_forbidden(server: Server) -> None:
    outsider = server.client()
    await account_client(outsider, "outsider", "Out Sider")
    target_id = await account_client(server.client(), "devraman", "Dev Raman")
    outsider.headers["X-Act-As"] = target_id

    error = await only_error(outsider, ME)

    assert error["extensions"]["code"] == "FORBIDDEN"


async def test_the_manager_edge_does_not_work_in_reverse(server: Server, db: Db) -> None:
    manager_id = await account_client(server.client(), "opsadmin", "Ops Admin")
    managed = server.client()
    await account_client(managed, "devraman", "Dev Raman")
    await grant(db, "opsadmin", "devraman")
    managed.headers["X-Act-As"] = manager_id

    error = await only_error(managed, ME)

    assert error["extensions"]["code"] == "FORBIDDEN"


async def test_acting_while_anonymous_is_unauthenticated(server: Server) -> None:
    target_id = await account_client(server.client(), "devraman", "Dev Raman")
    anonymous = server.client()
    anonymous.headers["X-Act-As"] = target_id

    error = await only_error(anonymous, ME)

    assert error["extensions"]["code"] == "UNAUTHENTICATED"


async def test_a_malformed_act_as_id_is_bad_user_input(server: Server) -> None:
    manager = server.client()
    await account_client(manager, "opsadmin", "Ops Admin")
    manager.headers["X-Act-As"] = "devraman"

    error = await only_error(manager, ME)

    assert error["extensions"]["code"] == "BAD_USER_INPUT"
