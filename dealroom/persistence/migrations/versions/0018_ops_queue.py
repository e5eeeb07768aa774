"""ops queue: what operators did with an item of their queue

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('ops_queue_items',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('source_id', sa.Uuid(), nullable=False),
    sa.Column('room_id', sa.Uuid(), nullable=True),
    sa.Column('level', sa.String(length=8), nullable=False),
    sa.Column('summary', sa.Text(), nullable=False),
    sa.Column('raised_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('acknowledged_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('acknowledged_by', sa.Uuid(), nullable=True),
    sa.Column('assigned_to', sa.Uuid(), nullable=True),
    sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('resolved_by', sa.Uuid(), nullable=True),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['acknowledged_by'], ['accounts.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['assigned_to'], ['accounts.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['resolved_by'], ['accounts.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('kind', 'source_id', name='uq_ops_queue_items_source')
    )
    with op.batch_alter_table('ops_queue_items', schema=None) as batch_op:
        batch_op.create_index('ix_ops_queue_items_room', ['room_id', 'resolved_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('ops_queue_items', schema=None) as batch_op:
        batch_op.drop_index('ix_ops_queue_items_room')
    op.drop_table('ops_queue_items')
