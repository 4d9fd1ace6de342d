"""a person's review of a flagged evaluation

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03 23:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('evaluation', schema=None) as batch_op:
        batch_op.add_column(sa.Column('flag_review', sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.add_column(sa.Column('flag_reviewer', sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.add_column(sa.Column('flag_reviewed_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column('flag_review_note', sa.Text(), nullable=True))
        batch_op.create_index(batch_op.f('ix_evaluation_flag_review'), ['flag_review'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('evaluation', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_evaluation_flag_review'))
        batch_op.drop_column('flag_review_note')
        batch_op.drop_column('flag_reviewed_at')
        batch_op.drop_column('flag_reviewer')
        batch_op.drop_column('flag_review')
