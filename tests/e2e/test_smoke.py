from __future__ import annotations

from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up


async def test_a_guest_posts_into_a_hosts_room(server: Server) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    opened = await open_room(guest, "devraman")
    message = await post(guest, opened["room"]["id"], "  hello  ")
    assert message["body"] == "hello"
    assert opened["room"]["title"] == "A visitor × Dev Raman"
