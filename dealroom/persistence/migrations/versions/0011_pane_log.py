"""the pane log: each pane's tail and post counter on its participant row, the
room's newest stage change on its room row, both kept by triggers on every insert

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None



# One writer of a pane's tail for every path that stores a message (the post, the turn, the
# Guard, held sends, the welcome): the database, so no writer can forget it.
def _tail_update(new_window: str) -> str:
    """The UPDATE both dialects' message trigger runs; ``new_window``: the post opens a new
    one-minute window (the rate limit counts participant posts only)."""
    return f"""
    UPDATE participants SET
        pane_seq = NEW.seq,
        pane_session_no = NEW.session_no,
        pane_last_at = NEW.created_at,
        first_spoke_at = CASE WHEN NEW.author_kind = 'participant'
            THEN COALESCE(first_spoke_at, NEW.created_at) ELSE first_spoke_at END,
        posts_in_window = CASE
            WHEN NEW.author_kind <> 'participant' THEN posts_in_window
            WHEN posts_window_start IS NULL OR {new_window} THEN 1
            ELSE posts_in_window + 1 END,
        posts_window_start = CASE
            WHEN NEW.author_kind <> 'participant' THEN posts_window_start
            WHEN posts_window_start IS NULL OR {new_window} THEN NEW.created_at
            ELSE posts_window_start END
    WHERE id = NEW.participant_id;"""


PG_FUNCTIONS = [
    f"""
CREATE FUNCTION pane_log_message() RETURNS trigger AS $$
BEGIN{_tail_update("NEW.created_at >= posts_window_start + interval '1 minute'")}
    RETURN NULL;
END $$ LANGUAGE plpgsql
""",
    """
CREATE TRIGGER messages_pane_log AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION pane_log_message()
""",
    """
CREATE FUNCTION pane_log_stage() RETURNS trigger AS $$
BEGIN
    UPDATE rooms SET stage_seq = GREATEST(stage_seq, NEW.seq) WHERE id = NEW.room_id;
    RETURN NULL;
END $$ LANGUAGE plpgsql
""",
    """
CREATE TRIGGER offer_events_pane_log AFTER INSERT ON offer_events
    FOR EACH ROW EXECUTE FUNCTION pane_log_stage()
""",
]

# SQLite stores UTC as 'YYYY-MM-DD HH:MM:SS.ffffff' text: julianday() compares it in days.
SQLITE_TRIGGERS = [
    f"""
CREATE TRIGGER messages_pane_log AFTER INSERT ON messages
BEGIN{_tail_update("julianday(NEW.created_at) - julianday(posts_window_start) >= 60.0 / 86400")}
END
""",
    """
CREATE TRIGGER offer_events_pane_log AFTER INSERT ON offer_events
BEGIN
    UPDATE rooms SET stage_seq = MAX(stage_seq, NEW.seq) WHERE id = NEW.room_id;
END
""",
]


def upgrade() -> None:
    with op.batch_alter_table('participants', schema=None) as batch_op:
        batch_op.add_column(sa.Column('pane_seq', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('pane_session_no', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('pane_last_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(
            sa.Column('posts_window_start', sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column('posts_in_window', sa.Integer(), nullable=False, server_default='0')
        )
    with op.batch_alter_table('rooms', schema=None) as batch_op:
        batch_op.add_column(sa.Column('stage_seq', sa.Integer(), nullable=False, server_default='0'))
    # Backfill the tails from what is stored (the post counters start empty).
    op.execute(
        """
UPDATE participants SET
    pane_seq = COALESCE((SELECT max(m.seq) FROM messages m WHERE m.participant_id = participants.id), 0),
    pane_session_no = (SELECT m.session_no FROM messages m WHERE m.participant_id = participants.id
                       ORDER BY m.seq DESC LIMIT 1),
    pane_last_at = (SELECT m.created_at FROM messages m WHERE m.participant_id = participants.id
                    ORDER BY m.seq DESC LIMIT 1)
"""
    )
    op.execute(
        "UPDATE rooms SET stage_seq = COALESCE("
        "(SELECT max(e.seq) FROM offer_events e WHERE e.room_id = rooms.id), 0)"
    )
    statements = PG_FUNCTIONS if op.get_bind().dialect.name == 'postgresql' else SQLITE_TRIGGERS
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    op.execute('DROP TRIGGER IF EXISTS messages_pane_log ON messages'
               if op.get_bind().dialect.name == 'postgresql'
               else 'DROP TRIGGER IF EXISTS messages_pane_log')
    op.execute('DROP TRIGGER IF EXISTS offer_events_pane_log ON offer_events'
               if op.get_bind().dialect.name == 'postgresql'
               else 'DROP TRIGGER IF EXISTS offer_events_pane_log')
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('DROP FUNCTION IF EXISTS pane_log_message()')
        op.execute('DROP FUNCTION IF EXISTS pane_log_stage()')
    with op.batch_alter_table('rooms', schema=None) as batch_op:
        batch_op.drop_column('stage_seq')
    with op.batch_alter_table('participants', schema=None) as batch_op:
        batch_op.drop_column('posts_in_window')
        batch_op.drop_column('posts_window_start')
        batch_op.drop_column('pane_last_at')
        batch_op.drop_column('pane_session_no')
        batch_op.drop_column('pane_seq')
