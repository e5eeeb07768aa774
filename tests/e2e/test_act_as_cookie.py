"""actAs: the cookie path of act-as, for browser clients that cannot set X-Act-As."""

from __future__ import annotations

from dealroom.persistence.db import Db
from dealroom.services.accounts.service import revoke_manager
from tests.conftest import Server
from tests.support.graphql import Client
from tests.support.rooms import grant, post_raw, set_cookies, sign_up_as

ACT_AS = "mutation($id: ID) { actAs(accountId: $id) { handle acting signedInAs { handle } } }"
ME = "{ me { handle acting } }"


async def _manager_and_talent(server: Server, db: Db) -> tuple[Client, str]:
    manager = server.client()
    await sign_up_as(manager, "agency", "Agency")  # the session cookie rides from here on
    talent = await sign_up_as(server.client(), "talent", "Talent")
    await grant(db, "agency", "talent")
    return manager, talent["account"]["id"]


async def test_act_as_sets_an_http_only_cookie_that_later_requests_honour(
    server: Server, db: Db
) -> None:
    manager, talent_id = await _manager_and_talent(server, db)
    response = await post_raw(manager, ACT_AS, {"id": talent_id})
    assert response.json()["data"]["actAs"] == {
        "handle": "talent",
        "acting": True,
        "signedInAs": {"handle": "agency"},
    }
    cookie = set_cookies(response)["dealroom_act_as"]
    assert cookie["httponly"]
    assert (await manager.query(ME))["me"] == {"handle": "talent", "acting": True}


async def test_act_as_null_clears_the_cookie(server: Server, db: Db) -> None:
    manager, talent_id = await _manager_and_talent(server, db)
    await manager.query(ACT_AS, {"id": talent_id})
    cleared = await manager.query(ACT_AS, {"id": None})
    assert cleared["actAs"]["acting"] is False
    assert (await manager.query(ME))["me"] == {"handle": "agency", "acting": False}


async def test_act_as_without_an_edge_is_forbidden_and_sets_nothing(server: Server, db: Db) -> None:
    manager, _ = await _manager_and_talent(server, db)
    stranger = await sign_up_as(server.client(), "stranger", "Stranger")
    response = await post_raw(manager, ACT_AS, {"id": stranger["account"]["id"]})
    assert [e["extensions"]["code"] for e in response.json()["errors"]] == ["FORBIDDEN"]
    assert "dealroom_act_as" not in set_cookies(response)
    assert (await manager.query(ME))["me"]["handle"] == "agency"


async def test_a_revoked_edge_refuses_requests_but_can_always_be_cleared(
    server: Server, db: Db
) -> None:
    manager, talent_id = await _manager_and_talent(server, db)
    await manager.query(ACT_AS, {"id": talent_id})
    await revoke_manager(db, manager_handle="agency", managed_handle="talent")
    await db.commit()
    assert await manager.error_codes(ME) == ["FORBIDDEN"]
    await manager.query(ACT_AS, {"id": None})
    assert (await manager.query(ME))["me"]["handle"] == "agency"


async def test_act_as_needs_a_signed_in_account(server: Server) -> None:
    assert await server.client().error_codes(ACT_AS, {"id": None}) == ["UNAUTHENTICATED"]
