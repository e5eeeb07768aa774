"""the run queue in age order: a partial index of the queued runs by creation, so
PostgreSQL's claim reads the queue's oldest few runs, not all of it

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    queued = sa.text("status = 'queued'")
    with op.batch_alter_table('agent_runs', schema=None) as batch_op:
        batch_op.create_index(
            'ix_agent_runs_queued',
            ['created_at', 'id'],
            unique=False,
            postgresql_where=queued,
            sqlite_where=queued,
        )


def downgrade() -> None:
    with op.batch_alter_table('agent_runs', schema=None) as batch_op:
        batch_op.drop_index('ix_agent_runs_queued')
