"""SQLAlchemy 2 models, one module per group of tables. Relationships are not mapped:
repositories load what callers need.

GraphQL types are never these rows; resolvers map them (``from_row``). Every model is
imported here, so importing the package declares every table on ``Base.metadata``, with the
same ``sorted_tables`` and DDL whichever module a model lives in.
"""

from dealroom.persistence.models.accounts import (
    Account,
    AccountManager,
    AuthSession,
    Credential,
    Service,
)
from dealroom.persistence.models.base import Base, UTCDateTime
from dealroom.persistence.models.integrations import (
    ApiKey,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEvent,
)
from dealroom.persistence.models.links import PerceivedLink
from dealroom.persistence.models.memory import AccountMemory, MemoryChange, MemoryLeafDate
from dealroom.persistence.models.notifications import Notification, NotificationSettings
from dealroom.persistence.models.offers import Agreement, GoalEvent, Offer, OfferEvent, Payment
from dealroom.persistence.models.operations import (
    OperatorRead,
    OpsAction,
    PaneTakeover,
    RoomMemoryChange,
)
from dealroom.persistence.models.ops_queue import OpsQueueItem
from dealroom.persistence.models.payments import HostPayout, StripeEvent
from dealroom.persistence.models.rooms import (
    GuestKeyMint,
    Invitation,
    Message,
    Participant,
    PendingEffect,
    Room,
)
from dealroom.persistence.models.runs import AgentRun, Dispatch, Flag, Lease, ModelCall
from dealroom.persistence.models.safeguards import GuardVerdict, RoomWatch, Throttle

__all__ = [
    "Account",
    "AccountManager",
    "AccountMemory",
    "AgentRun",
    "Agreement",
    "ApiKey",
    "AuthSession",
    "Base",
    "Credential",
    "Dispatch",
    "Flag",
    "GoalEvent",
    "GuardVerdict",
    "GuestKeyMint",
    "HostPayout",
    "Invitation",
    "Lease",
    "MemoryChange",
    "MemoryLeafDate",
    "Message",
    "ModelCall",
    "Notification",
    "NotificationSettings",
    "Offer",
    "OfferEvent",
    "OperatorRead",
    "OpsAction",
    "OpsQueueItem",
    "PaneTakeover",
    "Participant",
    "Payment",
    "PendingEffect",
    "PerceivedLink",
    "Room",
    "RoomMemoryChange",
    "RoomWatch",
    "Service",
    "StripeEvent",
    "Throttle",
    "UTCDateTime",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEvent",
]
