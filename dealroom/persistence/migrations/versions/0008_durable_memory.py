"""durable memory: leaf dates and change history

Revision ID: 0008
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0008'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('memory_leaf_dates',
    sa.Column('account_id', sa.Uuid(), nullable=False),
    sa.Column('path', sa.String(length=600), nullable=False),
    sa.Column('changed_on', sa.Date(), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('account_id', 'path')
    )
    op.create_table('memory_changes',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('account_id', sa.Uuid(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('path', sa.String(length=600), nullable=False),
    sa.Column('old_value', sa.JSON(none_as_null=True), nullable=True),
    sa.Column('new_value', sa.JSON(none_as_null=True), nullable=True),
    sa.Column('room_id', sa.Uuid(), nullable=True),
    sa.Column('run_id', sa.Uuid(), nullable=True),
    sa.Column('agent', sa.String(length=24), nullable=False),
    sa.Column('actor_account_id', sa.Uuid(), nullable=True),
    sa.Column('reverts_id', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['actor_account_id'], ['accounts.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['room_id'], ['rooms.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('memory_changes', schema=None) as batch_op:
        batch_op.create_index('ix_memory_changes_account', ['account_id', 'version'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('memory_changes', schema=None) as batch_op:
        batch_op.drop_index('ix_memory_changes_account')

    op.drop_table('memory_changes')
    op.drop_table('memory_leaf_dates')
