"""The offline engine: the agents' contracts implemented as deterministic rules, so the whole
product works with no network and no key, and tests are reproducible (ARCHITECTURE "Agents").

It reads only ``request.context`` — the visibility-filtered inputs the prompt was rendered
from — never ``system`` or ``prompt``, so it can know nothing a model could not. It reads
amounts, deliverables, dates and yes/no with ``dealroom.domain.terms``, and negotiates between
the host's ask and floor. The same request always gives the same output.
"""

from dealroom.agents.models.offline.client import CHUNK_CHARS, OfflineClient, respond
from dealroom.agents.models.offline.persona import judge

__all__ = ["CHUNK_CHARS", "OfflineClient", "judge", "respond"]
