"""participants beyond two seats: invitations to a side, removal, shared panes, approvers

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_NEW_COLUMNS = ("removed_at", "shared", "may_approve", "invited_by")


def upgrade() -> None:
    # Plain ADD COLUMNs: a batch copy of ``participants`` on SQLite would break the triggers
    # that name it (migration 0011).
    op.add_column("participants", sa.Column("removed_at", sa.DateTime(timezone=True)))
    op.add_column(
        "participants",
        sa.Column("shared", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column(
        "participants",
        sa.Column("may_approve", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("participants", sa.Column("invited_by", sa.Uuid()))
    if op.get_bind().dialect.name == "postgresql":
        # A table a post writes is sampled small, new columns included (migration 0013).
        for column in _NEW_COLUMNS:
            op.execute(f'ALTER TABLE participants ALTER COLUMN "{column}" SET STATISTICS 10')
    op.create_table(
        "invitations",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("room_id", sa.Uuid(), nullable=False),
        sa.Column("side", sa.String(length=16), nullable=False),
        sa.Column("inviter_id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("used_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["room_id"], ["rooms.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["inviter_id"], ["participants.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["used_by"], ["accounts.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash", name="uq_invitations_token"),
    )
    op.create_index("ix_invitations_room", "invitations", ["room_id"])


def downgrade() -> None:
    op.drop_index("ix_invitations_room", table_name="invitations")
    op.drop_table("invitations")
    for column in _NEW_COLUMNS:
        op.drop_column("participants", column)
