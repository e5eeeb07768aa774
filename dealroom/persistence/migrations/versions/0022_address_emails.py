"""notifications to an address with no account yet (an invitation): account_id nullable

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.alter_column("account_id", existing_type=sa.Uuid(), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM notifications WHERE account_id IS NULL")
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.alter_column("account_id", existing_type=sa.Uuid(), nullable=False)
