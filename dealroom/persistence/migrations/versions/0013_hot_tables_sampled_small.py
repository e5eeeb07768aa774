"""the tables every post writes are sampled small by ANALYZE: a statistics target of 10 on
each of their columns, so autovacuum's ANALYZE of them reads 3,000 rows, not 30,000

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05

Every post changes a row of each of these six tables, so autovacuum analyzes them all on
nearly every visit of a busy database, and each ``ANALYZE`` spends its CPU while the posts
wait for theirs. Its cost grows with its sample, 300 rows per unit of the largest statistics
target among a table's columns (default 100: 30,000 rows, each column's values sorted).

What the statistics are for here: every pool connection plans its statements generically
(``engine.GENERIC_PLANS``), so a parameter's selectivity comes from a column's distinct count,
null fraction and most common values, never from its histogram; the literals of the hot path
(a run's status, its agent) are a handful of values each. A sample of 3,000 rows keeps all of
them. PostgreSQL's own advice for columns whose statistics no plan uses is a target of 0; 10
keeps every column's estimates while cutting the sample tenfold.

PostgreSQL only (SQLite's ANALYZE is run by hand and has no such target). A column added to
one of these tables later needs the same target: ``test_migrations`` checks every column.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HOT_TABLES = ('rooms', 'participants', 'messages', 'agent_runs', 'throttles', 'room_watches')
TARGET = 10

_COLUMNS = sa.text(
    "SELECT attname FROM pg_attribute "
    "WHERE attrelid = CAST(:table AS regclass) AND attnum > 0 AND NOT attisdropped "
    "ORDER BY attnum"
)


def _set_target(target: int) -> None:
    bind = op.get_bind()
    if bind.dialect.name != 'postgresql':
        return
    for table in HOT_TABLES:
        for (column,) in bind.execute(_COLUMNS, {'table': table}):
            op.execute(f'ALTER TABLE {table} ALTER COLUMN "{column}" SET STATISTICS {target}')


def upgrade() -> None:
    _set_target(TARGET)


def downgrade() -> None:
    _set_target(-1)  # the database's default_statistics_target again
