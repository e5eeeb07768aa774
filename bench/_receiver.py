"""A partner endpoint for bench/webhooks.py, run as its own process: answers 200 at once and
appends ``<webhook-id> <wall time>`` per request to the file named by argv[2]."""

from __future__ import annotations

import sys
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

PORT = int(sys.argv[1])
LOG = open(sys.argv[2], "a", buffering=1)  # noqa: SIM115 (lives as long as the process)


async def hook(request: Request) -> PlainTextResponse:
    await request.body()
    LOG.write(f"{request.headers.get('webhook-id')} {time.time():.6f}\n")
    return PlainTextResponse("ok")


app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning", access_log=False)
