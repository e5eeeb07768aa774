"""One Settings object, read from the environment, with embedded defaults.

Nothing set means: a SQLite file under ``DEALROOM_DATA_DIR`` and the in-process broker.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Runtime configuration. Every field maps to ``DEALROOM_<NAME>`` unless noted."""

    model_config = SettingsConfigDict(env_prefix="DEALROOM_", extra="ignore")

    database_url: str | None = None
    """SQLAlchemy async URL; unset means the embedded SQLite file."""
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
    max_page_size: int = 100
    cors_origins: str = ""
    """Comma-separated origins (``https://app.example.com``) whose pages may call the API with
    credentials, over HTTP (CORS) and websockets. Same-origin pages always may."""

    # --- agents -------------------------------------------------------------------------
    model_engine: str = "auto"
    """``offline`` (deterministic rules, no network), ``gemini``, or ``auto``: Gemini when
    ``GEMINI_API_KEY`` is set, offline otherwise."""
    gemini_base_url: str | None = None
    """Override the Gemini endpoint (tests point it at a local fake server)."""
    persona_model: str = "gemini-2.5-flash"
    distil_model: str = "gemini-2.5-flash"
    filter_model: str = "gemini-2.5-flash-lite"
    gemini_thinking_budget: int | None = None
    """Thinking tokens per Gemini call; unset keeps the model's default (2.5 Flash thinks)."""
    model_timeout_seconds: float = 30.0
    model_attempts: int = 4
    """HTTP attempts per model call (429 and 5xx are retried with backoff by the SDK)."""
    turn_attempts: int = 3
    """Times a failed turn is run before it is marked failed (and can be re-run)."""
    turn_retry_seconds: float = 2.0
    """Backoff before a failed turn's next attempt; doubles each attempt."""
    run_lease_seconds: int = 120
    """A running turn whose worker vanished is re-queued after this long."""
    memory_lease_seconds: int = 60
    workers: int = 4
    """Agent runs executed concurrently by this process (0: this process runs no agents)."""
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
    """Only the local test provider exists so far (test_card_ok, test_card_declined,
    test_card_delayed_capture)."""
    payment_capture_delay_seconds: float = 30.0
    """How long the test provider's delayed capture takes."""
    session_line_cap: int = 400
    """Safety cap on transcript lines read for one turn (never reached by a real sitting)."""

    # --- partners: webhooks (issue 16) ----------------------------------------------------
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
    metrics_token: str | None = None
    """When set, ``/metrics`` answers only ``Authorization: Bearer <token>`` (scrapers)."""

    @property
    def session_pause(self) -> timedelta:
        return timedelta(minutes=self.session_pause_minutes)

    @property
    def use_gemini(self) -> bool:
        if self.model_engine == "gemini":
            return True
        return self.model_engine == "auto" and bool(self.gemini_api_key)

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
