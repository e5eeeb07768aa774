"""room watches, guard verdicts, stage-notice and watch columns on agent runs

Revision ID: 0007
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0007'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('room_watches',
    sa.Column('room_id', sa.Uuid(), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('step', sa.String(length=16), nullable=False),
    sa.Column('armed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('fired_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['room_id'], ['rooms.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('room_id')
    )
    with op.batch_alter_table('room_watches', schema=None) as batch_op:
        batch_op.create_index('ix_room_watches_due', ['step', 'armed_at'], unique=False)

    op.create_table('guard_verdicts',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('room_id', sa.Uuid(), nullable=False),
    sa.Column('run_id', sa.Uuid(), nullable=False),
    sa.Column('verdict', sa.String(length=16), nullable=False),
    sa.Column('findings', sa.JSON(), nullable=False),
    sa.Column('edits', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['room_id'], ['rooms.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id')
    )
    with op.batch_alter_table('guard_verdicts', schema=None) as batch_op:
        batch_op.create_index('ix_guard_verdicts_room', ['room_id', 'created_at'], unique=False)

    with op.batch_alter_table('agent_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('trigger_event_id', sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column('watch_generation', sa.Integer(), nullable=True))
        batch_op.create_unique_constraint(
            'uq_agent_runs_pane_event', ['participant_id', 'trigger_event_id']
        )


def downgrade() -> None:
    with op.batch_alter_table('agent_runs', schema=None) as batch_op:
        batch_op.drop_constraint('uq_agent_runs_pane_event', type_='unique')
        batch_op.drop_column('watch_generation')
        batch_op.drop_column('trigger_event_id')
    with op.batch_alter_table('guard_verdicts', schema=None) as batch_op:
        batch_op.drop_index('ix_guard_verdicts_room')
    op.drop_table('guard_verdicts')
    with op.batch_alter_table('room_watches', schema=None) as batch_op:
        batch_op.drop_index('ix_room_watches_due')
    op.drop_table('room_watches')
