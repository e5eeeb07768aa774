"""The one-click unsubscribe route (RFC 8058), no sign-in needed.

``POST /notifications/unsubscribe?t=<token>`` (a mail client's one-click, body
``List-Unsubscribe=One-Click``) turns the token's kind off at once. ``GET`` shows a plain page
with a button doing that POST: link scanners fetch links, and a GET must not unsubscribe anyone.
A forged, expired or malformed token, or one signed for another account, gets a plain refusal
page (400) and changes nothing."""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from dealroom.persistence.notifications import NotificationRepository
from dealroom.schema.context import AppState
from dealroom.services.notify import preferences, tokens
from dealroom.services.unit_of_work import UnitOfWork, reading

PATH = "/notifications/unsubscribe"


def _page(title: str, text: str, status: int = 200, form: str = "") -> HTMLResponse:
    body = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title></head>"
        "<body style='font-family: sans-serif; max-width: 32em; margin: 3em auto'>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>{form}</body></html>"
    )
    return HTMLResponse(body, status_code=status, headers={"cache-control": "no-store"})


REFUSED = (
    "That unsubscribe link is not valid",
    "It may have expired, been changed, or belong to another account. Use the link in a "
    "recent email, or change your notification settings in the app.",
)


def _what(kind: str) -> str:
    return "these emails" if kind == tokens.ALL else f"{kind.replace('_', ' ')} emails"


def unsubscribe_routes(state: AppState) -> list[Route]:
    async def unsubscribe(request: Request) -> Response:
        token = request.query_params.get("t", "")
        now = state.clock.now()
        if request.method == "GET":
            try:
                claim = tokens.read(token)
                async with reading(state.sessionmaker) as db:
                    row = await NotificationRepository(db).settings_of(claim.account_id)
                if row is None:
                    raise tokens.TokenError("unknown account")
                tokens.verify(token, row.secret, now)
            except tokens.TokenError:
                return _page(*REFUSED, status=400)
            form = (
                f"<form method='post' action='{PATH}?t={html.escape(token)}'>"
                "<input type='hidden' name='List-Unsubscribe' value='One-Click'>"
                "<button type='submit'>Unsubscribe</button></form>"
            )
            return _page("Unsubscribe", f"Stop {_what(claim.kind)}?", form=form)
        try:
            async with UnitOfWork(state.sessionmaker) as unit:
                await preferences.unsubscribe(unit.db, token, now)
            claim = tokens.read(token)
        except tokens.TokenError:
            return _page(*REFUSED, status=400)
        return _page(
            "Unsubscribed",
            f"You will get no more {_what(claim.kind)}. Your notifications are still listed "
            "in the app.",
        )

    return [Route(PATH, unsubscribe, methods=["GET", "POST"])]
