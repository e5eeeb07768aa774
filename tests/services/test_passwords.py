"""The argon2id profile: OWASP's minimum by default, a floor a deployment cannot go under by
accident, and hashes that move to the configured profile at the next sign-in."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sqlalchemy import select

from dealroom.config import Settings
from dealroom.domain.errors import DomainError
from dealroom.domain.passwords import OWASP_MINIMUM, Argon2Profile, meets_floor
from dealroom.persistence.db import Db
from dealroom.persistence.models import Credential
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.passwords import passwords_for
from tests.support.clock import ManualClock

CHEAP = Argon2Profile(memory_kib=8, time_cost=1, parallelism=1)


def test_the_default_profile_is_owasps_minimum() -> None:
    assert Argon2Profile(memory_kib=19 * 1024, time_cost=2, parallelism=1) == OWASP_MINIMUM
    assert Settings(_env_file=None).password_profile == OWASP_MINIMUM  # type: ignore[call-arg]
    for name in ("memory_kib", "time_cost", "parallelism"):
        field = Settings.model_fields[f"password_hash_{name}"]
        assert field.default == getattr(OWASP_MINIMUM, name)


def test_a_profile_under_the_floor_is_refused_unless_allowed() -> None:
    with pytest.raises(ValidationError, match="OWASP's floor"):
        Settings(password_hash_memory_kib=12 * 1024)
    with pytest.raises(ValidationError, match="OWASP's floor"):
        Settings(password_hash_time_cost=1)
    allowed = Settings(
        password_hash_memory_kib=8, password_hash_time_cost=1, password_hash_below_floor=True
    )
    assert allowed.password_profile == CHEAP
    # OWASP's equivalent profiles trade memory for passes; each of them meets the floor.
    assert Settings(password_hash_memory_kib=46 * 1024, password_hash_time_cost=1).password_profile
    assert meets_floor(Argon2Profile(memory_kib=7 * 1024, time_cost=5, parallelism=1))
    assert not meets_floor(Argon2Profile(memory_kib=7 * 1024, time_cost=4, parallelism=1))


async def test_a_hash_verifies_under_another_profile_and_needs_a_rehash() -> None:
    owasp, cheap = passwords_for(OWASP_MINIMUM), passwords_for(CHEAP)
    made = await cheap.hash("long enough")
    assert await owasp.verify(made, "long enough")
    assert not await owasp.verify(made, "wrong password")
    assert owasp.needs_rehash(made)
    assert not cheap.needs_rehash(made)
    assert not owasp.needs_rehash(await owasp.hash("long enough"))


async def test_sign_in_stores_the_configured_profiles_hash(db: Db) -> None:
    clock = ManualClock()
    owasp, cheap = passwords_for(OWASP_MINIMUM), passwords_for(CHEAP)
    await accounts.sign_up(
        db,
        clock,
        cheap,
        email="h@example.com",
        password="long enough",
        handle="hashed",
        display_name="Hashed",
        ttl_days=1,
    )
    await db.commit()

    async def stored() -> str:
        hashes = list(await db.scalars(select(Credential.password_hash)))
        await db.close()
        return hashes[0]

    assert "m=8,t=1,p=1" in await stored()
    with pytest.raises(DomainError):
        await accounts.sign_in(
            db, clock, owasp, email="h@example.com", password="wrong password", ttl_days=1
        )
    await db.rollback()
    assert "m=8,t=1,p=1" in await stored()
    await accounts.sign_in(
        db, clock, owasp, email="h@example.com", password="long enough", ttl_days=1
    )
    await db.commit()
    assert "m=19456,t=2,p=1" in await stored()
