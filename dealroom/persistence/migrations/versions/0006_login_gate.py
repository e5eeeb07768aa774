"""login gate: held effects keep their source run and replay state; guest-key mints per IP

Revision ID: 0006
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0006'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('pending_effects', schema=None) as batch_op:
        batch_op.add_column(sa.Column('source_run_id', sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column('spawned_run_ids', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('performed_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index('ix_pending_effects_status', ['status', 'room_id'], unique=False)

    op.create_table('guest_key_mints',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('ip_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('guest_key_mints', schema=None) as batch_op:
        batch_op.create_index('ix_guest_key_mints_ip', ['ip_hash', 'created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('guest_key_mints', schema=None) as batch_op:
        batch_op.drop_index('ix_guest_key_mints_ip')
    op.drop_table('guest_key_mints')
    with op.batch_alter_table('pending_effects', schema=None) as batch_op:
        batch_op.drop_index('ix_pending_effects_status')
        batch_op.drop_column('performed_at')
        batch_op.drop_column('spawned_run_ids')
        batch_op.drop_column('source_run_id')
