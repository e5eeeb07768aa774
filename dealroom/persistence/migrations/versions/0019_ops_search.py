"""ops search: the indexes operators' searches read (rooms by activity, accounts by name,
flags by level, offers by status and by age)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("rooms", schema=None) as batch_op:
        batch_op.create_index("ix_rooms_activity", ["last_activity_at", "id"], unique=False)
    op.create_index("ix_accounts_name_lower", "accounts", [sa.text("lower(display_name)")])
    with op.batch_alter_table("flags", schema=None) as batch_op:
        batch_op.create_index("ix_flags_level_room", ["level", "room_id"], unique=False)
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.create_index("ix_offers_status_created", ["status", "created_at"], unique=False)
        batch_op.create_index("ix_offers_created", ["created_at", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.drop_index("ix_offers_created")
        batch_op.drop_index("ix_offers_status_created")
    with op.batch_alter_table("flags", schema=None) as batch_op:
        batch_op.drop_index("ix_flags_level_room")
    # A later SQLite batch rebuild of accounts drops an expression index without a word.
    op.execute("DROP INDEX IF EXISTS ix_accounts_name_lower")
    with op.batch_alter_table("rooms", schema=None) as batch_op:
        batch_op.drop_index("ix_rooms_activity")
