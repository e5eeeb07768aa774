"""operator tools: operators' reads of rooms, and room memory's change history

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('operator_reads',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('operator_account_id', sa.Uuid(), nullable=True),
    sa.Column('room_id', sa.Uuid(), nullable=False),
    sa.Column('what', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['operator_account_id'], ['accounts.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('operator_reads', schema=None) as batch_op:
        batch_op.create_index('ix_operator_reads_room', ['room_id', 'created_at'], unique=False)
        batch_op.create_index(
            'ix_operator_reads_operator', ['operator_account_id', 'created_at'], unique=False
        )

    op.create_table('room_memory_changes',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('room_id', sa.Uuid(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('path', sa.String(length=600), nullable=False),
    sa.Column('old_value', sa.JSON(none_as_null=True), nullable=True),
    sa.Column('new_value', sa.JSON(none_as_null=True), nullable=True),
    sa.Column('run_id', sa.Uuid(), nullable=True),
    sa.Column('agent', sa.String(length=24), nullable=False),
    sa.Column('actor_account_id', sa.Uuid(), nullable=True),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('reverts_id', sa.Uuid(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['actor_account_id'], ['accounts.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['room_id'], ['rooms.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('room_memory_changes', schema=None) as batch_op:
        batch_op.create_index(
            'ix_room_memory_changes_room', ['room_id', 'created_at'], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table('room_memory_changes', schema=None) as batch_op:
        batch_op.drop_index('ix_room_memory_changes_room')
    op.drop_table('room_memory_changes')
    with op.batch_alter_table('operator_reads', schema=None) as batch_op:
        batch_op.drop_index('ix_operator_reads_operator')
        batch_op.drop_index('ix_operator_reads_room')
    op.drop_table('operator_reads')
