"""guest-key mints keep the key minted: the guest message cap counts an address's keys

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('guest_key_mints', schema=None) as batch_op:
        batch_op.add_column(sa.Column('guest_key_hash', sa.String(length=64), nullable=True))
        batch_op.create_index('ix_guest_key_mints_key', ['guest_key_hash'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('guest_key_mints', schema=None) as batch_op:
        batch_op.drop_index('ix_guest_key_mints_key')
        batch_op.drop_column('guest_key_hash')
