"""Money is written in the reader's locale (``domain/locale.py``): an account that chose de_DE
reads the written offer's display fields and its email in de_DE, exactly as Babel writes
them; the en_US host reads the same offer as before; a locale Babel does not know is refused
with a stable reason. Raw amounts stay the data whatever the locale."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import select

from dealroom.domain.money import display, pay_now_line, quote
from dealroom.domain.offer_stage import Stage
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Notification
from dealroom.services.notify.render import render
from tests.conftest import Server
from tests.support.offers import negotiate_to_offer, open_deal
from tests.support.rooms import only_error
from tests.support.turns import messages_in

SET_LOCALE = "mutation($l: String) { setLocale(locale: $l) { handle locale } }"
ME = "query { me { locale } }"
CARD = """
query($id: ID!) {
  offer(id: $id) {
    terms { fee { amount currency display } }
    payment { fee due platformFee total feeDisplay dueDisplay platformFeeDisplay totalDisplay }
  }
}
"""


def _shown(card: dict[str, Any]) -> list[str]:
    q = card["payment"]
    return [
        card["terms"]["fee"]["display"],
        q["feeDisplay"],
        q["dueDisplay"],
        q["platformFeeDisplay"],
        q["totalDisplay"],
    ]


def _expected(card: dict[str, Any], locale: str) -> list[str]:
    q = card["payment"]
    raw = [card["terms"]["fee"]["amount"], q["fee"], q["due"], q["platformFee"], q["total"]]
    return [display(Decimal(amount), "USD", locale) for amount in raw]


async def test_a_de_DE_account_reads_the_card_and_its_email_in_de_DE(
    agent_server: Server, db: Db
) -> None:
    d = await open_deal(agent_server)
    chosen = await d.visitor.query(SET_LOCALE, {"l": "de-de"})
    assert chosen["setLocale"] == {"handle": "acmebrand", "locale": "de_DE"}
    assert (await d.visitor.query(ME))["me"]["locale"] == "de_DE"
    assert (await d.host.query(ME))["me"]["locale"] == "en_US"
    offer_id = await negotiate_to_offer(agent_server, d)

    brand = (await d.visitor.query(CARD, {"id": offer_id}))["offer"]
    host = (await d.host.query(CARD, {"id": offer_id}))["offer"]
    assert brand["payment"]["total"] == host["payment"]["total"] == "4800.00"  # data unchanged
    assert _shown(brand) == _expected(brand, "de_DE")
    assert _shown(host) == _expected(host, "en_US")
    assert _shown(host)[-1] == "$4,800"  # an en_US reader reads what it always read
    assert all(de != us for de, us in zip(_shown(brand), _shown(host), strict=True))

    # The brand's email (and in-app note) asking it to approve names the total in de_DE.
    notes = list(
        await db.scalars(
            select(Notification)
            .join(Account, Account.id == Notification.account_id)
            .where(Account.handle == "acmebrand", Notification.kind == "approval")
        )
    )
    assert len(notes) == 1, [n.body for n in notes]
    total_de = display(Decimal("4800.00"), "USD", "de_DE")
    assert total_de in notes[0].body
    assert "$4,800" not in notes[0].body
    email = render(
        notes[0], [], name="Acme Brand", public_url="https://x.example", unsubscribe="https://u"
    )
    assert total_de in email.text
    assert total_de in email.html.replace("&nbsp;", "\xa0")
    assert Stage.WRITTEN_AWAITING_BRAND.value not in email.text

    # The brand's agent told the whole price in the brand's pane in de_DE: the card's figures.
    pane = [m.body for m in await messages_in(db, d.room_id, "visitor")]
    told = pay_now_line(quote(Decimal("8000.00"), "USD", Decimal("50")), "de_DE")
    assert any(told in line for line in pane), pane
    assert all(figure in told for figure in _shown(brand)[2:])  # due, platform fee, total


async def test_an_unknown_locale_is_refused_and_null_clears_the_choice(server: Server) -> None:
    d = await open_deal(server)
    error = await only_error(d.visitor, SET_LOCALE, {"l": "xx_YY"})
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["extensions"]["reason"] == "UNKNOWN_LOCALE"
    assert error["extensions"]["field"] == "locale"
    for bad in ("en_US; DROP", "x" * 200, "root"):
        refused = await only_error(d.visitor, SET_LOCALE, {"l": bad})
        assert refused["extensions"]["reason"] == "UNKNOWN_LOCALE", bad
    assert (await d.visitor.query(ME))["me"]["locale"] == "en_US"
    await d.visitor.query(SET_LOCALE, {"l": "fr_FR"})
    assert (await d.visitor.query(ME))["me"]["locale"] == "fr_FR"
    cleared = await d.visitor.query(SET_LOCALE, {"l": None})
    assert cleared["setLocale"]["locale"] == "en_US"
    anonymous = await only_error(server.client(), SET_LOCALE, {"l": "de_DE"})
    assert anonymous["extensions"]["code"] == "UNAUTHENTICATED"
