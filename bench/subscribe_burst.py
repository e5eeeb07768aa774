"""A burst of subscribes against one ``dealroom serve`` process.

N clients subscribe to one pane at the same moment, each replaying from the pane's start (the
resume a dropped client makes), and wait for the first payload: the replayed message, or an
error. With ``--retry`` a refused client does what README asks (subscribe again after
``retryAfterSeconds``) until it starts; the run reports when the last one did.

    .venv/bin/python bench/subscribe_burst.py --subscribes 1000
    .venv/bin/python bench/subscribe_burst.py --subscribes 1000 --retry
    .venv/bin/python bench/subscribe_burst.py --slots 100000 --wait 55  # about unbounded
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _client import (
    UNTHROTTLED_ENV,
    ServerProcess,
    create_pg_database,
    drop_pg_database,
    free_port,
    gql,
    http_client,
    migrate,
    open_room,
    open_subscription,
    raise_nofile_limit,
    sign_up,
)
from websockets.asyncio.client import ClientConnection

from dealroom.domain.cursors import event_cursor

RESUMING = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    ... on MessageAdded { cursor message { body } }
  }
}
"""
POST = "mutation($input: PostMessageInput!) { postMessage(input: $input) { cursor } }"


async def first_payload(ws: ClientConnection, timeout: float) -> dict[str, Any]:
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if message.get("type") == "ping":
            await ws.send('{"type":"pong"}')
        elif message.get("type") in ("next", "error"):
            payload = message.get("payload")
            return {"errors": payload} if isinstance(payload, list) else dict(payload)


async def one_client(
    ws_url: str, init: dict[str, Any], variables: dict[str, Any], retry: bool, t0: float
) -> tuple[str, float, int, ClientConnection | None]:
    """(outcome, seconds from the burst's start, retries, the socket of a started stream)."""
    retries = 0
    while True:
        try:
            ws = await open_subscription(ws_url, init, variables, query=RESUMING, timeout=120)
            payload = await first_payload(ws, timeout=120)
        except Exception as exc:
            return f"{type(exc).__name__}", time.monotonic() - t0, retries, None
        if not payload.get("errors"):
            return "started", time.monotonic() - t0, retries, ws
        error = payload["errors"][0]
        await ws.close()
        code = str(error.get("extensions", {}).get("code"))
        if code != "UNAVAILABLE" or not retry:
            return code, time.monotonic() - t0, retries, None
        retries += 1
        await asyncio.sleep(float(error["extensions"]["retryAfterSeconds"]))


async def main_async(args: argparse.Namespace) -> None:
    raise_nofile_limit(args.subscribes + 1024)
    data_dir = Path(tempfile.mkdtemp(prefix="dealroom-burst-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALROOM_")}
    env.update(DEALROOM_DATA_DIR=str(data_dir), DEALROOM_DEMO="0", DEALROOM_ACCESS_LOG="false")
    env.update(UNTHROTTLED_ENV)
    if args.slots is not None:
        env["DEALROOM_SUBSCRIPTION_START_SLOTS"] = str(args.slots)
    if args.wait is not None:
        env["DEALROOM_SUBSCRIPTION_START_WAIT_SECONDS"] = str(args.wait)
    database_url = None
    if args.backend == "redis":
        database_url = await create_pg_database(args.pg_url, "dealroom_burst")
        env.update(DEALROOM_DATABASE_URL=database_url, DEALROOM_REDIS_URL=args.redis_url)
        migrate(env)
    server = ServerProcess(env=env, port=free_port(), log_dir=data_dir)
    try:
        server.start()
        async with http_client(server.base_url) as http:
            host = await sign_up(http, "mara", "Mara Ellison")
            room_id, guest_key = await open_room(http, "mara")
            guest = {"X-Guest-Key": guest_key or ""}
            body = {"roomId": room_id, "body": "before the burst", "clientMessageId": "b"}
            await gql(http, POST, {"input": body}, guest)
        init = {"authorization": host["Authorization"]}
        variables = {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)}
        t0 = time.monotonic()
        results = await asyncio.gather(
            *(
                one_client(server.ws_url, init, variables, args.retry, t0)
                for _ in range(args.subscribes)
            )
        )
        outcomes = Counter(outcome for outcome, _, _, _ in results)
        started = [at for outcome, at, _, _ in results if outcome == "started"]
        refused_at = [at for outcome, at, _, _ in results if outcome == "UNAVAILABLE"]
        print(f"{args.subscribes} subscribes ({args.backend}): {dict(outcomes)}")
        if started:
            print(f"  started: first {min(started):.1f} s, last {max(started):.1f} s")
        if refused_at:
            print(f"  refused: first {min(refused_at):.1f} s, last {max(refused_at):.1f} s")
        if args.retry:
            print(f"  retries: {sum(r for _, _, r, _ in results)}")
        for _, _, _, ws in results:
            if ws is not None:
                with contextlib.suppress(Exception):
                    await ws.close()
        count, lines = server.problems()
        print(f"  server log lines that look like trouble: {count}")
        for line in lines[:5]:
            print(f"    {line}")
    finally:
        server.stop()
        if database_url is not None:
            await drop_pg_database(args.pg_url, database_url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("embedded", "redis"), default="embedded")
    parser.add_argument("--subscribes", type=int, default=1000)
    parser.add_argument("--retry", action="store_true", help="refused clients retry")
    parser.add_argument("--slots", type=int, help="DEALROOM_SUBSCRIPTION_START_SLOTS")
    parser.add_argument("--wait", type=float, help="DEALROOM_SUBSCRIPTION_START_WAIT_SECONDS")
    parser.add_argument("--pg-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
