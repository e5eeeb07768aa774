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
