"""notifications to an address with no account yet (an invitation): account_id nullable

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _account_id(nullable: bool) -> None:
    with warnings.catch_warnings():
        # SQLite's batch copy reflects ``accounts`` for the foreign key; its expression index
        # (migration 0019) cannot be reflected and is not needed to copy ``notifications``.
        warnings.filterwarnings(
            "ignore", "Skipped unsupported reflection", category=sa.exc.SAWarning
        )
        with op.batch_alter_table("notifications", schema=None) as batch_op:
            batch_op.alter_column("account_id", existing_type=sa.Uuid(), nullable=nullable)


def upgrade() -> None:
    _account_id(nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM notifications WHERE account_id IS NULL")
    _account_id(nullable=False)
