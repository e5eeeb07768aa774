from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tests.support.link_pages import LinkPages, running_link_pages


@pytest.fixture
async def pages() -> AsyncIterator[LinkPages]:
    async with running_link_pages() as served:
        yield served


class FakeDns:
    """The DNS edge: names a test invents resolve as it says (one answer per lookup, in turn;
    an answer may list several addresses, comma-separated), each lookup counted; every other
    name goes to the system resolver."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.answers: dict[str, list[str]] = {}
        self.lookups: dict[str, int] = {}

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in self.answers:
            return self.real(host, port, *args, **kwargs)
        count = self.lookups.get(name, 0)
        self.lookups[name] = count + 1
        answers = self.answers[name]
        answer = answers[min(count, len(answers) - 1)]
        return [_info(address, int(port or 0)) for address in answer.split(",")]


def _info(address: str, port: int) -> tuple[Any, ...]:
    if ":" in address:
        return (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))
    return (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    fake = FakeDns(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake
