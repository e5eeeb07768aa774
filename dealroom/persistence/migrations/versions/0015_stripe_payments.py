"""stripe payments: each Stripe event recorded once, the payout ledger, the hold's dates

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('stripe_events',
    sa.Column('id', sa.String(length=255), nullable=False),
    sa.Column('type', sa.String(length=80), nullable=False),
    sa.Column('payment_ref', sa.String(length=128), nullable=True),
    sa.Column('outcome', sa.String(length=32), nullable=False),
    sa.Column('detail', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('stripe_events', schema=None) as batch_op:
        batch_op.create_index('ix_stripe_events_outcome', ['outcome', 'received_at'], unique=False)
    op.create_table('host_payouts',
    sa.Column('payment_id', sa.Uuid(), nullable=False),
    sa.Column('host_account_id', sa.Uuid(), nullable=False),
    sa.Column('offer_id', sa.Uuid(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('owed', sa.Numeric(precision=18, scale=4), nullable=False),
    sa.Column('sent', sa.Numeric(precision=18, scale=4), nullable=False),
    sa.Column('transfer_ref', sa.String(length=128), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['host_account_id'], ['accounts.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['payment_id'], ['payments.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('payment_id')
    )
    with op.batch_alter_table('host_payouts', schema=None) as batch_op:
        batch_op.create_index('ix_host_payouts_host', ['host_account_id', 'created_at'], unique=False)
    with op.batch_alter_table('payments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('held_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('released_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(
            sa.Column('refunded', sa.Numeric(precision=18, scale=4), nullable=False,
                      server_default='0')
        )
    # The default only fills the rows that exist; new rows get theirs from the model.
    with op.batch_alter_table('payments', schema=None) as batch_op:
        batch_op.alter_column('refunded', server_default=None)


def downgrade() -> None:
    with op.batch_alter_table('payments', schema=None) as batch_op:
        batch_op.drop_column('refunded')
        batch_op.drop_column('released_at')
        batch_op.drop_column('held_at')
    with op.batch_alter_table('host_payouts', schema=None) as batch_op:
        batch_op.drop_index('ix_host_payouts_host')
    op.drop_table('host_payouts')
    with op.batch_alter_table('stripe_events', schema=None) as batch_op:
        batch_op.drop_index('ix_stripe_events_outcome')
    op.drop_table('stripe_events')
