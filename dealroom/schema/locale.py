"""The mutation that sets the locale an account reads money in (``Me.locale`` reads it)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.resolvers import locale as locale_resolvers
from dealroom.schema.context import Info
from dealroom.schema.types import Me


@strawberry.type(description="Setting the locale money is written in.")
class LocaleMutation:
    @strawberry.mutation(
        description="Set the locale the signed-in account (or the account acted as) reads "
        "money in: display fields, its emails, its agent's lines about the price, its "
        "webhooks' display fields. A locale Babel knows ('de_DE', 'fr-FR'); null clears it "
        "(en_US). BAD_USER_INPUT with extensions.reason UNKNOWN_LOCALE for any other; "
        "UNAUTHENTICATED when anonymous."
    )
    async def set_locale(
        self,
        info: Info,
        locale: Annotated[
            str | None,
            strawberry.argument(description="The locale, e.g. 'de_DE'; null for en_US."),
        ],
    ) -> Me:
        return await locale_resolvers.set_locale(info, locale)
