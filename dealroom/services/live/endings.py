"""Credentials that end now: a signOut or an API key's revocation tells every server process,
through the broker, to end the streams that stood on them at once (``Rechecks.end``) instead of
at its next re-check round.

The broker is a wake-up, never the record: the session or key row is what ends the credential,
and a process that misses the publish (the broker away, a failed publish) still ends its
streams at its next round (``DEALROOM_SUBSCRIPTION_RECHECK_SECONDS``); a publish that gives up
resyncs this process's listener, which runs a round at once.
"""

from __future__ import annotations

from dealroom.persistence.db import Db
from dealroom.realtime.broker import RESYNC, Broker
from dealroom.services.live.publish import publish_after_commit

ENDED_CHANNEL = "credentials-ended"
"""Payload: the SHA-256 (``identity.digest``) of the session token or API key that ended, or
RESYNC: re-check every held stream now."""


def end_streams_after_commit(db: Db, broker: Broker, credential_hash: str) -> None:
    """Once ``db`` commits the ending, every process ends the streams that presented it."""
    publish_after_commit(db, broker, [(ENDED_CHANNEL, credential_hash)])


def recheck_streams_after_commit(db: Db, broker: Broker) -> None:
    """Once ``db`` commits a change to who holds a room's panes (a participant removed, a pane
    unshared), every process re-checks its held streams at once instead of at its next round:
    a stream that no longer stands ends with its own authorisation's coded error."""
    publish_after_commit(db, broker, [(ENDED_CHANNEL, RESYNC)])
