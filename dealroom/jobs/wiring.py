"""Wiring of the agent turn: the model engine, the ledger and the run handlers."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents.models.base import AgentName, ModelClient
from dealroom.config import Settings
from dealroom.jobs.acc_update import AccUpdate, sync_stale_account_memory
from dealroom.jobs.agreement import AgreementTurn
from dealroom.jobs.arvist import ArvistTurn
from dealroom.jobs.distil import DistilTurn
from dealroom.jobs.gate_line import GateTurn
from dealroom.jobs.guard import GuardTurn
from dealroom.jobs.handler import Handler
from dealroom.jobs.notify_timers import WaitTimers
from dealroom.jobs.offer_gen import OfferGenTurn
from dealroom.jobs.ops_queue_alerts import QueueAlerts
from dealroom.jobs.payment_capture import capture_pending
from dealroom.jobs.payment_sweeps import auto_release, reconcile
from dealroom.jobs.persona import PersonaTurn
from dealroom.jobs.replay import ReplayTurn, resume_replays
from dealroom.jobs.runner import TurnRunner
from dealroom.jobs.takeover import silenced_when_taken_over
from dealroom.jobs.watches import WatchFirer
from dealroom.realtime.broker import Broker
from dealroom.services.clock import Clock
from dealroom.services.offers.provider import PaymentProvider, TestPaymentProvider
from dealroom.services.offers.stripe_provider import StripeProvider
from dealroom.services.ops import metrics
from dealroom.services.turns.ledger import Ledger
from dealroom.services.turns.runs import RunnerDeps


def create_model_client(settings: Settings) -> ModelClient:
    """Gemini when configured (``GEMINI_API_KEY``), else the offline engine: the whole product
    works with no network and no key."""
    if settings.use_gemini:
        from dealroom.agents.models.gemini import GeminiClient

        if not settings.gemini_api_key:
            raise ValueError("DEALROOM_MODEL_ENGINE=gemini needs GEMINI_API_KEY")
        return GeminiClient(
            settings.gemini_api_key,
            base_url=settings.gemini_base_url,
            timeout_seconds=settings.model_timeout_seconds,
            attempts=settings.model_attempts,
            thinking=settings.thinking_budgets,
        )
    from dealroom.agents.models.offline import OfflineClient

    return OfflineClient(stream_delay=settings.offline_stream_ms / 1000)


def create_payment_provider(settings: Settings, clock: Clock) -> PaymentProvider:
    """``DEALROOM_PAYMENT_PROVIDER``: ``test`` (the local test provider) or ``stripe``."""
    if settings.payment_provider == "stripe":
        if not settings.stripe_secret_key:
            raise ValueError("DEALROOM_PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY")
        return StripeProvider(
            settings.stripe_secret_key,
            publishable_key=settings.stripe_publishable_key,
            webhook_secret=settings.stripe_webhook_secret,
            api_base=settings.stripe_api_base,
            max_network_retries=settings.stripe_max_network_retries,
            timeout_seconds=settings.stripe_timeout_seconds,
            webhook_tolerance_seconds=settings.stripe_webhook_tolerance_seconds,
        )
    if settings.payment_provider != "test":
        raise ValueError(f"unknown payment provider {settings.payment_provider!r}")
    return TestPaymentProvider(
        clock, capture_delay=timedelta(seconds=settings.payment_capture_delay_seconds)
    )


def create_runner(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    clock: Clock,
    client: ModelClient,
    payments: PaymentProvider | None = None,
) -> TurnRunner:
    runner = TurnRunner(
        RunnerDeps(
            settings=settings,
            sessionmaker=sessionmaker,
            broker=broker,
            clock=clock,
            ledger=Ledger(client, sessionmaker, clock),
        )
    )
    deps = runner.deps
    acc = AccUpdate(deps)
    persona = PersonaTurn(deps)
    handlers: dict[AgentName, Handler] = {
        # AccUpdate merges newer durable memory before the turn reads memory (seed 000); an
        # operator speaking in a pane's agent seat silences the agent there, the login gate's line
        # included.
        AgentName.PERSONA: acc.before(silenced_when_taken_over(persona, deps)),
        AgentName.DISTIL: DistilTurn(deps),
        AgentName.OFFER_GEN: OfferGenTurn(deps),
        AgentName.AGREEMENT: AgreementTurn(deps),
        AgentName.GATE: silenced_when_taken_over(GateTurn(deps), deps),
        AgentName.REPLAY: ReplayTurn(deps),
        AgentName.ARVIST: ArvistTurn(deps),
        AgentName.ACC_UPDATE: acc,
        AgentName.GUARD: GuardTurn(deps),
    }
    prepares = {AgentName.PERSONA: persona.prepare}  # read in the claim's transaction
    for agent, handler in handlers.items():
        # /metrics: time, failures
        runner.register(agent, metrics.timed(agent.value, handler), prepares.get(agent))

    async def replays() -> int:
        return await resume_replays(sessionmaker, clock)

    runner.add_sweep(replays)

    async def stale_sync() -> int:
        queued = await sync_stale_account_memory(sessionmaker, clock, settings.stale_sync_batch)
        if queued:
            runner.wake()
        return queued

    runner.add_sweep(stale_sync)
    if isinstance(payments, StripeProvider):
        add_stripe_sweeps(runner, settings, sessionmaker, broker, clock, payments)
    elif payments is not None:
        provider = payments

        async def captures() -> int:
            return await capture_pending(
                sessionmaker, broker, clock, provider, band_percent=settings.firewall_band_percent
            )

        runner.add_sweep(captures)
    runner.add_sweep(WatchFirer(runner).poll, every=timedelta(seconds=settings.watch_poll_seconds))
    # Reminders and escalations of waits on a principal: rows checked like the room watches.
    runner.add_sweep(WaitTimers(runner).poll, every=timedelta(seconds=settings.watch_poll_seconds))
    runner.add_sweep(QueueAlerts(runner).poll)  # new high ops queue items alert operators
    return runner


def add_stripe_sweeps(
    runner: TurnRunner,
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    clock: Clock,
    provider: StripeProvider,
) -> None:
    """Stripe reports by webhook; these sweeps catch what a webhook never brought (a lost
    delivery) and release holds whose time has come."""
    every = timedelta(seconds=settings.stripe_reconcile_seconds)

    async def reconciliation() -> int:
        return await reconcile(
            sessionmaker,
            broker,
            clock,
            provider,
            overdue=every,
            band_percent=settings.firewall_band_percent,
        )

    async def releases() -> int:
        return await auto_release(
            sessionmaker,
            broker,
            clock,
            provider,
            days=settings.auto_release_days,
            band_percent=settings.firewall_band_percent,
        )

    runner.add_sweep(reconciliation, every=every)
    runner.add_sweep(releases, every=every)
