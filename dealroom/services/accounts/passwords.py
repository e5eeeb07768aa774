"""Password hashing with the deployment's argon2id profile; hashing runs in a worker thread."""

from __future__ import annotations

import asyncio
import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from dealroom.domain.passwords import Argon2Profile


class Passwords:
    """Hashes with one profile; a hash made with another still verifies and then needs a
    rehash (sign-in stores the new one)."""

    def __init__(self, profile: Argon2Profile) -> None:
        self.profile = profile
        self._hasher = PasswordHasher(
            time_cost=profile.time_cost,
            memory_cost=profile.memory_kib,
            parallelism=profile.parallelism,
        )

    @functools.cached_property
    def dummy_hash(self) -> str:
        """Verified against when an email is unknown, so both failures take the same time."""
        return self._hasher.hash("not-a-real-password")

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, stored: str, password: str) -> bool:
        try:
            return await asyncio.to_thread(self._hasher.verify, stored, password)
        except (VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored: str) -> bool:
        return self._hasher.check_needs_rehash(stored)


@functools.cache
def passwords_for(profile: Argon2Profile) -> Passwords:
    """One per profile in a process (the dummy hash is made once)."""
    return Passwords(profile)
