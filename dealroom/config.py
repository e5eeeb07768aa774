"""One Settings object, read from the environment, with embedded defaults.

Nothing set means: a SQLite file under ``DEALROOM_DATA_DIR`` and the in-process broker.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from dealroom.agents.models import thinking
from dealroom.agents.models.base import AgentName
from dealroom.domain.double_texts import DoubleText
from dealroom.domain.passwords import OWASP_MINIMUM, Argon2Profile, meets_floor


class Settings(BaseSettings):
    """Runtime configuration. Every field maps to ``DEALROOM_<NAME>`` unless noted."""

    model_config = SettingsConfigDict(env_prefix="DEALROOM_", extra="ignore")

    database_url: str | None = None
    """SQLAlchemy async URL; unset means the embedded SQLite file."""
    database_connections_at_start: int | None = Field(default=None, ge=0)
    """PostgreSQL connections a process opens as it starts (persistence/engine.open_pool),
    never more than half of what PostgreSQL has free then; unset: the pool's bound (6). The
    rest open when the load first needs them, which is when a second has gone slow; 0 opens
    all on demand."""
    redis_url: str | None = None
    """Redis URL for the pub/sub broker; unset means the in-process broker."""
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path(".dealroom")
    """Where the embedded SQLite file lives."""
    debug: bool = False
    """Unmasks internal errors in GraphQL responses. Never in production."""
    access_log: bool = True
    """uvicorn's per-request access log lines."""
    ws_ping_seconds: float = Field(default=45.0, ge=0)
    """Seconds between the server's pings on each open websocket (0: none); a peer that has
    not answered one within 20 s is dropped. Every held subscription is pinged, so a short
    interval is a CPU cost per socket (measured: docs/DECISIONS.md, "Websocket pings every
    45 s, no deflate"). 45 s stays under the 60 s idle timeout of common proxies and
    load balancers; the web client also pings every 10 s."""
    log_format: str = "console"
    """``console`` or ``json``."""
    session_ttl_days: int = 30
    cookie_secure: bool = False
    """Set on HTTPS deployments so auth cookies carry the Secure flag."""
    gemini_api_key: str | None = Field(default=None, validation_alias="GEMINI_API_KEY")
    max_query_depth: int = 12
    max_aliases: int = 30
    max_tokens: int = 2000
    posts_per_minute: int = 60
    """Messages one participant may post into one pane per minute."""
    max_participants: int = Field(default=8, ge=2)
    """Participants a room holds at most, the host and the visitor included (an invitation
    past it is refused ``ROOM_FULL``)."""
    invitation_days: float = Field(default=7.0, gt=0)
    """How long an invitation link to a room stays usable."""
    invitations_per_hour: int = Field(default=20, ge=1)
    """Invitations one account may send in an hour, every room together (each is an email to
    an address it names; RATE_LIMITED past it)."""
    max_page_size: int = 100
    cors_origins: str = ""
    """Comma-separated origins (``https://app.example.com``) whose pages may call the API with
    credentials, over HTTP (CORS) and websockets. Same-origin pages always may."""

    # --- agents -------------------------------------------------------------------------
    model_engine: str = "auto"
    """``offline`` (deterministic rules, no network), ``gemini``, or ``auto``: Gemini when
    ``GEMINI_API_KEY`` is set, offline otherwise."""
    offline_stream_ms: int = Field(default=80, ge=0)
    """Pause between the offline engine's streamed reply pieces (a few words each), so a
    browser shows the typing indicator and the reply growing; 0 streams with no pause (the
    reply then reaches the page as one delta). The suite runs with 0."""
    gemini_base_url: str | None = None
    """Override the Gemini endpoint (tests point it at a local fake server)."""
    persona_model: str = "gemini-2.5-flash"
    distil_model: str = "gemini-2.5-flash"
    filter_model: str = "gemini-2.5-flash-lite"
    # Thinking budgets per agent (agents/models/thinking.py; the choice: docs/DECISIONS.md,
    # "Thinking per agent"). Unset keeps the model's default; -1 is dynamic.
    thinking_persona: int | None = 256
    """The reply and its rulings: a little reasoning, bounded (it delays the first word, and
    code checks what a ruling carries)."""
    thinking_distil: int | None = 0
    thinking_context_filter: int | None = 0
    thinking_offer_gen: int | None = 1024
    """Rare, and the written terms must be right."""
    thinking_agreement: int | None = 0
    thinking_guard: int | None = 512
    """2.5 Pro cannot turn thinking off (at least 128)."""
    thinking_arvist: int | None = 512
    thinking_acc_update: int | None = 0
    model_timeout_seconds: float = 30.0
    model_attempts: int = 4
    """HTTP attempts per model call (429 and 5xx are retried with backoff by the SDK)."""
    turn_attempts: int = 3
    """Times a failed turn is run before it is marked failed (and can be re-run)."""
    turn_retry_seconds: float = 2.0
    """Backoff before a failed turn's next attempt; doubles each attempt."""
    run_lease_seconds: int = 15
    """A running turn whose worker vanished is re-queued after this long. The worker running
    it renews the lease every third of it (a slow model call is never taken for a crash)."""
    memory_lease_seconds: int = 60
    workers: int = 4
    """Agent runs executed concurrently by this process (0: this process runs no agents)."""
    greet_visitors: bool = True
    """A new deal room's visitor pane opens with the host's agent's welcome (from
    ``host.public`` only; domain.greeting)."""
    worker_poll_seconds: float = 0.5
    session_pause_minutes: int = 30
    """A participant returning after this long starts a new session."""
    max_chain_depth: int = 2
    """How many pane-to-pane sends one participant message can cause in a chain."""
    sends_per_pair_per_10_minutes: int = 6
    """Sends from one pane to another allowed in ten minutes; more are recorded as capped."""
    filter_threshold_chars: int = 6000
    """Visible memory larger than this goes through the context filter first."""
    offer_gen_model: str = "gemini-2.5-flash"
    agreement_model: str = "gemini-2.5-flash"
    payment_provider: str = "test"
    """``test``: the local test provider (test_card_ok, test_card_declined,
    test_card_delayed_capture); ``stripe``: Stripe through its SDK (``STRIPE_*`` below)."""
    payment_capture_delay_seconds: float = 30.0
    """How long the test provider's delayed capture takes."""
    stripe_secret_key: str | None = Field(default=None, validation_alias="STRIPE_SECRET_KEY")
    """Stripe's secret API key (``sk_...``); required when ``payment_provider`` is stripe."""
    stripe_publishable_key: str | None = Field(
        default=None, validation_alias="STRIPE_PUBLISHABLE_KEY"
    )
    """The publishable key (``pk_...``) handed to the payer's browser with the client secret."""
    stripe_webhook_secret: str | None = Field(
        default=None, validation_alias="STRIPE_WEBHOOK_SECRET"
    )
    """The endpoint's signing secret (``whsec_...``) that ``POST /webhooks/stripe`` verifies."""
    stripe_api_base: str | None = Field(default=None, validation_alias="STRIPE_API_BASE")
    """Stripe's API address; unset is Stripe itself. Tests point it at a local server."""
    stripe_js_url: str = "https://js.stripe.com/v3/"
    """Where the web client loads Stripe.js from (the page's CSP allows its origin). Tests
    point it at a local stand-in: the browser tests cannot reach Stripe."""
    stripe_webhook_tolerance_seconds: int = 300
    """How old a signed webhook may be before it is refused as stale (replay window)."""
    stripe_max_network_retries: int = 2
    """Retries of a Stripe call after a timeout or a 5xx, each with the same Idempotency-Key."""
    stripe_timeout_seconds: float = 20.0
    """One Stripe call's timeout."""
    stripe_reconcile_seconds: float = 60.0
    """How often the reconciliation sweep re-reads PaymentIntents whose webhook never came,
    and how long after payment one counts as overdue."""
    auto_release_days: int = 7
    """Days after the last delivery date (or after the hold, when the offer names none) that
    held funds are released unless the brand confirmed or disputed before."""
    double_text: DoubleText = DoubleText.COALESCE
    """Several posts before the pane's agent has answered (``domain/double_texts.py``):
    ``coalesce`` answers them in one run (and one Distil), ``enqueue`` one run per post."""
    guest_message_cap: int = 30
    """Posts one guest key may make across its rooms (its address's other guest keys' posts
    of the last day count too) before the login gate asks for a sign-in; past it posts are
    refused (FORBIDDEN, reason LOGIN_REQUIRED)."""
    guest_keys_per_ip_per_hour: int = 30
    """Guest keys one client address may be handed in an hour (RATE_LIMITED past it)."""
    replay_poll_seconds: float = 0.1
    """How soon a claimed room's replay looks again whether the runs its last held effect
    queued have finished (the next held effect waits for them)."""
    # --- durable memory ---
    arvist_model: str = "gemini-2.5-flash"
    acc_update_model: str = "gemini-2.5-flash-lite"
    stale_sync_batch: int = 200
    """Participants the syncStaleAccountMemory sweep queues an AccUpdate for per pass (about
    every 5 seconds per worker process)."""
    demo: bool = True
    """`serve` on an empty embedded database seeds the demo host (`dealroom demo`)."""

    # --- hardening ----------------------------------------------------------------------
    max_request_bytes: int = 256 * 1024
    """Largest HTTP body or websocket message accepted; larger is refused before parsing
    (HTTP 413 PAYLOAD_TOO_LARGE, websocket close 1009)."""
    max_query_chars: int = 16 * 1024
    """Longest GraphQL document parsed (the parser is pure Python: ~2 ms per KiB)."""
    max_literal_chars: int = 8 * 1024
    """Longest string, block string or comment inside a GraphQL document."""
    max_introspection_depth: int = 16
    """Depth limit for paths under ``__schema``/``__type`` (GraphiQL's introspection query is
    15 deep, counted from 1 at the root field); every other path has ``max_query_depth``."""
    posts_per_minute_across_rooms: int = 120
    """Messages one participant (account or guest key) may post per minute in all its rooms
    together (``posts_per_minute`` is per pane)."""
    rooms_per_ip_per_hour: int = 60
    """Rooms openVisitorRoom may create per client IP per hour."""
    sign_in_free_failures: int = 5
    """Wrong passwords per email and IP before signIn backs off (1 s, 2 s, 4 s ... 15 min)."""
    subscription_recheck_seconds: float = 5.0
    """How often the process re-checks every live subscription's session or API key, act-as
    edge and seat, all in one round (``services/live/rechecks.py``); a signed-out or expired
    session's websocket is closed with code 4401."""
    subscription_heartbeat_seconds: float = Field(default=30.0, gt=0)
    """How often the process reads where every followed pane and offer ends (one statement per
    500) and wakes the streams behind it: the longest a lost wake-up (a publish that failed
    for good, a process killed after its commit) delays an event (services/live/heartbeats.py)."""
    subscription_start_slots: int | None = Field(default=None, ge=1)
    """Subscription start-ups (authorisation, end read, first replay batch) this process lets
    touch the database at once (services/live/admission.py); unset: 2 on SQLite (one connection),
    a third of pool size + overflow on PostgreSQL (2)."""
    subscription_start_wait_seconds: float = Field(default=5.0, gt=0)
    """How long a subscription start-up waits for a slot before it ends UNAVAILABLE (with
    ``retryAfterSeconds``). Keep it well under the pool timeout (30 s PostgreSQL, 60 s
    SQLite), or the burst queues on the pool again."""
    gc_young_threshold: int = Field(default=10_000, ge=1)
    """Net allocations between young garbage collections in ``dealroom serve`` (CPython's
    default is 700): fewer collections cost less CPU, bigger ones pause longer (measured in
    docs/BENCHMARKS.md)."""
    gc_freeze_survivors: bool = True
    """``dealroom serve`` freezes what survives each young or middle garbage collection, so
    later collections do not walk held subscriptions' objects again (``gc_tuning
    .freeze_survivors``; measured in docs/BENCHMARKS.md). Off: they age through
    the generations as CPython does by default, and are frozen only once a burst of
    subscribes has settled."""
    gc_pause_log_ms: float = Field(default=50.0, ge=0)
    """``dealroom serve`` writes a ``gc_pause`` line to stderr for every garbage-collection
    pause at least this long (0: none); every pause is counted in ``/metrics``
    (``dealroom_gc_pauses_total``, ``dealroom_gc_pause_seconds_total``,
    ``dealroom_gc_pause_longest_seconds``)."""
    max_json_depth: int = 32
    """Deepest nesting accepted in request JSON (variables, websocket frames)."""
    max_json_items: int = Field(default=10_000, ge=1)
    """Most strings, arrays, objects and separators one request JSON may hold, counted on the
    raw bytes before decoding: a body of that size costs about a millisecond to decode
    (``request_limits.decode_json``)."""

    # --- the HTTP API ---------------------------------------------------------------------
    introspection: bool = True
    """Schema introspection (``__schema``, ``__type``); turn it off in production if the
    schema is not meant to be browsed (``schema.graphql`` is public in the repository)."""
    graphiql: bool = True
    """GraphiQL at ``GET /graphql`` from a browser; off answers 404 there."""
    trusted_documents: Path | None = None
    """A JSON file listing the sha256 hashes of the only documents the server runs (a list,
    or an object keyed by hash); unset: any document runs (``http_graphql``)."""
    persisted_queries: int = Field(default=1000, ge=0)
    """Automatic persisted queries this process keeps (least recently used go first); 0 turns
    the protocol off (``PERSISTED_QUERY_NOT_SUPPORTED``)."""
    cors_allow_headers: str = ""
    """Request headers cross-origin pages may send, added to the built-in list (auth, guest
    key, act-as, Apollo's and urql's)."""
    cors_max_age: int = Field(default=600, ge=0)
    """Seconds a browser may cache a CORS preflight answer."""
    http_header_timeout: float = Field(default=10.0, gt=0)
    """Seconds a connection may take to send a request's headers, and the longest an idle
    keep-alive connection is kept (uvicorn's ``timeout_keep_alive``)."""
    http_body_timeout: float = Field(default=30.0, gt=0)
    """Seconds a request may take to send its whole body; a slower one gets 408."""
    password_hash_memory_kib: int = Field(default=OWASP_MINIMUM.memory_kib, ge=8)
    password_hash_time_cost: int = Field(default=OWASP_MINIMUM.time_cost, ge=1)
    password_hash_parallelism: int = Field(default=OWASP_MINIMUM.parallelism, ge=1)
    """The argon2id profile new passwords are hashed with (default: OWASP's minimum, 19 MiB,
    2 passes, 1 lane). It must spend at least the memory and passes of one of OWASP's
    equivalent profiles (domain/passwords.py) unless ``password_hash_below_floor`` is set.
    Hashes made with another profile still verify and are rehashed at the next sign-in."""
    password_hash_below_floor: bool = False
    """Allow a profile under OWASP's floor. Only for test suites, never in production."""

    # --- the private-value firewall -------------------------------------------------------
    firewall_band_percent: Decimal = Field(default=Decimal(5), ge=0, le=50)
    """F10: an amount within this many per cent of a private limit (either side) is held like
    the limit on every exit to a visitor (``domain/firewall.py`` says why 5); 0 turns it off."""

    # --- quiet rooms ----------------------------------------------------------------------
    guard_quiet_seconds: float = 60.0
    """A room quiet this long after its last reply is audited by the Guard."""
    curator_quiet_seconds: float = 600.0
    """A room quiet this long after its last reply runs the curator step (Arvist)."""
    guard_model: str = "gemini-2.5-pro"
    """The Guard audits a whole room once per sitting: a planner-scale model."""
    watch_poll_seconds: float = 1.0
    """How often (on the clock) workers look for due room watches."""

    # --- links in chat ------------------------------------------------------------------
    links_per_message: int = Field(default=3, ge=0)
    """URLs of one message that are read (the first ones); the rest stay plain text."""
    link_text_chars: int = Field(default=20_000, ge=100)
    """Characters of a read link's extracted text kept and shown to the pane's agents."""
    link_max_bytes: int = Field(default=5_000_000, ge=1024)
    """Bytes a fetched page may decompress to; a larger one is unreadable (too large)."""
    link_cache_minutes: float = Field(default=60.0, ge=0)
    """The same URL read this recently in the same room is reused, not read again."""
    link_allow_loopback: bool = False
    """Let link fetches reach loopback addresses. Tests only: private, link-local and
    metadata addresses are refused regardless."""
    link_timeout_seconds: float = Field(default=10.0, gt=0)
    """One link's whole read: connecting, redirects, the body."""
    link_ports: str = "80,443"
    """Comma-separated ports a link may name."""
    link_reader_model: str = "gemini-2.5-flash"
    """Gemini model for URL Context reads (when the Gemini engine is on)."""

    # --- partners: webhooks -------------------------------------------------------------
    webhook_workers: int = 1
    """Concurrent webhook delivery loops in this process (``serve`` and ``worker``; 0: none)."""
    webhook_batch: int = 20
    """Deliveries one loop claims and sends at once."""
    webhook_allow_loopback: bool = False
    """Allow webhook URLs on loopback addresses (tests, local partners). Private and reserved
    networks are refused regardless."""
    webhook_timeout_seconds: float = 10.0
    """One delivery attempt's HTTP timeout."""
    webhook_lease_seconds: float = 60.0
    """A claimed attempt whose worker vanished is tried again after this long."""
    webhook_retry_base_seconds: float = 5.0
    webhook_retry_cap_seconds: float = 3600.0
    webhook_retry_window_hours: float = 24.0
    """Retries back off exponentially (with jitter) from ``base`` up to ``cap`` per attempt, for
    this long after the first attempt; then the delivery has failed."""
    webhook_poll_seconds: float = 1.0

    # --- notifications: email and the in-app list -----------------------------------------
    smtp_url: str | None = None
    """``smtp://user:pass@host:port`` (STARTTLS when offered; ``?starttls=require``),
    ``smtps://…`` (implicit TLS). Unset: notifications stay in the outbox and the in-app list,
    one log line each, and none is marked sent."""
    mail_from: str = "dealroom <no-reply@localhost>"
    """The ``From`` of every notification email."""
    public_url: str = "http://127.0.0.1:8000"
    """Where emails' links point (deep links to rooms, one-click unsubscribe)."""
    notify_coalesce_minutes: float = Field(default=15.0, ge=0)
    """At most one email per room and recipient in this window; later events join it."""
    remind_after_hours: float = Field(default=12.0, gt=0)
    """A principal decision or approval waiting this long reminds the principal, once."""
    escalate_after_hours: float = Field(default=36.0, gt=0)
    """Waiting this long: the waiting side is told honestly and operators are alerted."""
    notify_workers: int = Field(default=1, ge=0, le=1)
    """The notification delivery loop in this process (``serve`` and ``worker``; 0: none)."""
    notify_batch: int = Field(default=20, ge=1)
    """Notifications one delivery pass claims and sends."""
    notify_lease_seconds: float = 60.0
    """A claimed send whose worker vanished is tried again after this long."""
    notify_retry_base_seconds: float = 30.0
    notify_retry_cap_seconds: float = 3600.0
    notify_max_attempts: int = Field(default=8, ge=1)
    """Temporary failures (4xx, refused, timed out) back off exponentially from base up to cap,
    at most this many attempts; then the notification has failed with its last reason."""
    smtp_timeout_seconds: float = 10.0
    notify_poll_seconds: float = 1.0
    """How often (on the clock) workers look for due notifications, reminders and digests."""
    metrics_token: str | None = None
    """When set, ``/metrics`` answers only ``Authorization: Bearer <token>`` (scrapers)."""

    @model_validator(mode="after")
    def _thinking_in_range(self) -> Settings:
        for agent, budget in self.thinking_budgets.items():
            model = self.model_of(agent)
            if (why := thinking.problem(model, budget)) is not None:
                name = f"DEALROOM_THINKING_{agent.value.upper()}"
                raise ValueError(f"{name}={budget} for {model}: {why}")
        return self

    @property
    def thinking_budgets(self) -> dict[AgentName, int | None]:
        """Each agent's thinking budget (``DEALROOM_THINKING_<AGENT>``)."""
        return {agent: getattr(self, f"thinking_{agent.value}") for agent in thinking.AGENTS}

    def model_of(self, agent: AgentName) -> str:
        """The model an agent's calls use unless a room picks another."""
        return {
            AgentName.PERSONA: self.persona_model,
            AgentName.DISTIL: self.distil_model,
            AgentName.CONTEXT_FILTER: self.filter_model,
            AgentName.OFFER_GEN: self.offer_gen_model,
            AgentName.AGREEMENT: self.agreement_model,
            AgentName.GUARD: self.guard_model,
            AgentName.ARVIST: self.arvist_model,
            AgentName.ACC_UPDATE: self.acc_update_model,
        }[agent]

    @model_validator(mode="after")
    def _password_floor(self) -> Settings:
        if not self.password_hash_below_floor and not meets_floor(self.password_profile):
            raise ValueError(
                "The argon2id profile is under OWASP's floor (at least 19 MiB and 2 passes, "
                "or an equivalent profile); set DEALROOM_PASSWORD_HASH_BELOW_FLOOR=true only "
                "for a test suite."
            )
        return self

    @property
    def password_profile(self) -> Argon2Profile:
        return Argon2Profile(
            memory_kib=self.password_hash_memory_kib,
            time_cost=self.password_hash_time_cost,
            parallelism=self.password_hash_parallelism,
        )

    @property
    def session_pause(self) -> timedelta:
        return timedelta(minutes=self.session_pause_minutes)

    @property
    def link_port_set(self) -> frozenset[int]:
        return frozenset(int(p) for p in self.link_ports.split(",") if p.strip())

    @property
    def use_gemini(self) -> bool:
        if self.model_engine == "gemini":
            return True
        return self.model_engine == "auto" and bool(self.gemini_api_key)

    @property
    def cors_allow_header_list(self) -> list[str]:
        return [name.strip().lower() for name in self.cors_allow_headers.split(",") if name.strip()]

    @property
    def cors_origin_list(self) -> list[str]:
        return [origin.strip() for origin in self.cors_origins.split(",") if origin.strip()]

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'dealroom.sqlite3').resolve()}"

    @property
    def embedded(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")

    @property
    def session_ttl(self) -> timedelta:
        return timedelta(days=self.session_ttl_days)
