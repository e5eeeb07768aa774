"""Links as the offline persona reads them: a read link's text is read by the terms reader like
the same words typed (a brief naming "two Instagram reels in May, budget $6,000" moves the
negotiation), and the reply is honest about each link: it names a read one and says why it
could not open an unreadable one, asking for the text to be pasted."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from dealroom.agents.links import LinkQuote
from dealroom.agents.persona import PersonaOutput, Trigger
from dealroom.domain.links import LinkStatus


def _new(links: Sequence[LinkQuote]) -> list[LinkQuote]:
    """The links of the posts answered now, each URL once (a burst may paste one twice)."""
    return list({quote.url: quote for quote in links if quote.in_trigger}.values())


def with_links(trigger: Trigger, links: Sequence[LinkQuote]) -> Trigger:
    """The message as the terms reader reads it: its URLs taken out (a host's digits are no
    amount) and each read link's text after it."""
    new = _new(links)
    if trigger.kind != "message" or not new:
        return trigger
    body = trigger.body
    for quote in new:
        body = body.replace(quote.url, " ")
    texts = [quote.text for quote in new if quote.status is LinkStatus.READ and quote.text]
    return dataclasses.replace(trigger, body="\n\n".join([body.strip(), *texts]).strip())


def honest(output: PersonaOutput, trigger: Trigger, links: Sequence[LinkQuote]) -> PersonaOutput:
    """L4: the reply names what it read and what it could not open."""
    new = _new(links)
    if trigger.kind != "message" or not new:
        return output
    said: list[str] = []
    for quote in new:
        if quote.status is LinkStatus.READ:
            what = f'"{quote.title}"' if quote.title else "the page"
            said.append(f"I read {what} you linked.")
        else:
            said.append(
                f"I couldn't open {quote.url}: {quote.why}. Could you paste the relevant part here?"
            )
    return output.model_copy(update={"reply": " ".join([*said, output.reply]).strip()})
