"""The argon2id cost profile passwords are hashed with, and the floor a deployment keeps to.

OWASP's Password Storage Cheat Sheet lists five argon2id profiles of equal strength (memory
traded against passes, one lane each); the product's default is the one it names first as the
minimum, 19 MiB with two passes. A profile meets the floor when it spends at least the memory
and the passes of one of them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Argon2Profile:
    memory_kib: int
    time_cost: int
    parallelism: int


OWASP_MINIMUM = Argon2Profile(memory_kib=19 * 1024, time_cost=2, parallelism=1)
"""The default: OWASP's minimum argon2id profile (m=19456 KiB, t=2, p=1)."""

OWASP_PROFILES = (
    Argon2Profile(memory_kib=46 * 1024, time_cost=1, parallelism=1),
    OWASP_MINIMUM,
    Argon2Profile(memory_kib=12 * 1024, time_cost=3, parallelism=1),
    Argon2Profile(memory_kib=9 * 1024, time_cost=4, parallelism=1),
    Argon2Profile(memory_kib=7 * 1024, time_cost=5, parallelism=1),
)


def meets_floor(profile: Argon2Profile) -> bool:
    """At least the memory and the passes of one of OWASP's equivalent profiles."""
    return profile.parallelism >= 1 and any(
        profile.memory_kib >= floor.memory_kib and profile.time_cost >= floor.time_cost
        for floor in OWASP_PROFILES
    )
