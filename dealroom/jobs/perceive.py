"""The turn's perception step, before the persona: the links of this pane's messages in the
session, those of the posts the turn answers (its trigger and, coalesced, the later posts of a
burst) read now (``services/links``). A turn whose session holds no link makes no statement
and no fetch here."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import structlog

from dealroom.agents.links import LinkQuote
from dealroom.agents.models.base import ModelClient
from dealroom.agents.render import Line
from dealroom.domain import double_texts
from dealroom.domain import links as rules
from dealroom.domain.links import LinkStatus, Reason
from dealroom.services.links.perceive import LinkConfig, PaneMessage, Perceiver
from dealroom.services.turns.context import RunSnapshot, TurnContext
from dealroom.services.turns.runs import RunnerDeps

if TYPE_CHECKING:  # the SDK is imported only where the Gemini engine is on
    from google import genai

log = structlog.get_logger(__name__)

PARTICIPANT = "participant"


class Perception:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        self.perceiver = Perceiver(
            deps.sessionmaker,
            deps.clock,
            LinkConfig.of(deps.settings),
            gemini=_sdk(deps.ledger.client),
        )

    async def links(self, run: RunSnapshot, ctx: TurnContext) -> list[LinkQuote]:
        """This pane's links as quoted material for its persona. Only a participant's own
        message is read: a delivery or a stage notice reads nothing new."""
        messages = [
            PaneMessage(uuid.UUID(mid), line.body)
            for line, mid in zip(ctx.session, ctx.session_ids, strict=False)
            if line.author == PARTICIPANT and rules.holds_url(line.body)
        ]
        trigger = ctx.trigger_message
        trigger_id = (
            trigger.id
            if trigger is not None
            and trigger.author_kind == PARTICIPANT
            and ctx.trigger_dispatch is None
            and ctx.trigger_event is None
            else None
        )
        if (
            trigger is not None
            and trigger_id is not None
            and rules.holds_url(trigger.body)
            and all(m.id != trigger.id for m in messages)
        ):
            messages.append(PaneMessage(trigger.id, trigger.body))
        if not messages:
            return []
        later = self._later_posts(ctx, trigger_id)
        try:
            return await self.perceiver.quotes(
                room_id=ctx.room_id,
                pane_id=ctx.pane.id,
                run_id=run.id,
                messages=messages,
                trigger_id=trigger_id,
                also_answers=[uuid.UUID(ctx.session_ids[i]) for i in later],
            )
        except Exception:
            # The persona must not answer as if it had read a link it could not: the
            # message's links are shown as unreadable, and the turn goes on.
            log.exception("link_perception_failed", room_id=str(ctx.room_id))
            limit = self.deps.settings.links_per_message
            bodies = [trigger.body] if trigger is not None and trigger_id is not None else []
            bodies += [ctx.session[i].body for i in later]
            return [
                LinkQuote(
                    url=url,
                    status=LinkStatus.UNREADABLE,
                    reason=Reason.UNAVAILABLE,
                    in_trigger=True,
                )
                for body in bodies
                for url in rules.find_urls(body, limit=limit)
            ]

    def _later_posts(self, ctx: TurnContext, trigger_id: uuid.UUID | None) -> list[int]:
        """The session lines of the later posts this turn answers with its trigger (DT1):
        their links are new to this turn as much as the trigger's."""
        authors = [line.author for line in ctx.session]
        if trigger_id is None or len(ctx.session_ids) != len(authors):
            return []
        return double_texts.later_posts(
            authors, ctx.session_ids, str(trigger_id), self.deps.settings.double_text
        )

    async def for_writer(self, run: RunSnapshot, ctx: TurnContext, lines: list[Line]) -> list[Line]:
        """The session as a memory writer reads it: a participant's line that held read links
        carries what each page says, marked as what that participant linked (their claim,
        never a fact; in the host's own pane, the host's words like any other)."""
        quotes = [q for q in await self.links(run, ctx) if q.status is LinkStatus.READ]
        if not quotes or len(lines) != len(ctx.session_ids):
            return lines
        said: dict[str, list[LinkQuote]] = {}
        for quote in quotes:
            said.setdefault(quote.message_id, []).append(quote)
        return [
            Line(
                line.author,
                line.body
                + "".join(
                    f"\n[the page {q.url} they linked says: {q.text}]" for q in said[message_id]
                ),
                id=line.id,
                relayed_from=line.relayed_from,
            )
            if line.author == PARTICIPANT and message_id in said
            else line
            for line, message_id in zip(lines, ctx.session_ids, strict=True)
        ]


def _sdk(client: ModelClient) -> genai.Client | None:
    """The google-genai client behind the Gemini engine; None for the offline engine, which
    reads links by fetch alone."""
    if client.engine != "gemini":
        return None
    from dealroom.agents.models.gemini import GeminiClient

    return client.sdk if isinstance(client, GeminiClient) else None
