"""The studio's tables (SQLAlchemy declarative), one class a table.

A table changes only through a step in ``studio.storage.migrations``: these classes describe the newest
schema, and the steps bring an older database to it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict: JSON, list: JSON}


class SchemaVersionRow(Base):
    __tablename__ = "schema_version"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    applied_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class SessionRow(Base):
    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    source: Mapped[str] = mapped_column(String(16), default="chat")
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    player: Mapped[str | None] = mapped_column(String(200), nullable=True)  # schema 2
    # schema 6: the chat settings (conversation.records.ChatSettings) as one JSON value; schemas 1-5 kept them
    # in columns of their own (bot, preset, guard_mode, detector, threshold, num_candidates, persona,
    # penalty_lambda, prefilter), folded into this one by migration 6
    settings: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    # schema 7: the browser that made the session, as a key derived from that browser's own token (never the token,
    # which is its credential; ui.ownership); None: made before schema 7, or by the command line (self-play, imports),
    # so a browser never finds it and only a signed-in teacher sees it
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)


class TurnRow(Base):
    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("session_id", "turn_index", name="uq_turns_session_turn"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    turn_index: Mapped[int] = mapped_column(Integer)
    speaker: Mapped[str] = mapped_column(String(8))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    method: Mapped[str | None] = mapped_column(String(32), nullable=True)  # user turns: how it was written
    suggestion_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    guard: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # bot turns: the guard's report (jsonable)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)  # some candidate contradicted
    reply_flagged: Mapped[bool] = mapped_column(Boolean, default=False)  # the sent reply contradicts
    # schema 4, bot turns: the bot and settings that produced the turn (conversation.records.ReplySettings)
    bot: Mapped[str | None] = mapped_column(String(200), nullable=True)
    settings: Mapped[dict | None] = mapped_column(JSON, nullable=True)


class CandidateRow(Base):
    """A bot turn's candidate, for queries over candidates; written from the turn's report, which keeps the
    evidence and the detector's details (``turns.guard``; schema 3 dropped the copy that was here)."""

    __tablename__ = "candidates"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    generator_score: Mapped[float] = mapped_column(Float)
    contradiction_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    contradicts: Mapped[bool] = mapped_column(Boolean, default=False)
    category: Mapped[str] = mapped_column(String(16), default="none")
    chosen: Mapped[bool] = mapped_column(Boolean, default=False)
    reason: Mapped[str] = mapped_column(Text, default="")


class SuggestionRow(Base):
    __tablename__ = "suggestions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    after_turn_index: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(32))
    text: Mapped[str] = mapped_column(Text)
    source_turn_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    ranking: Mapped[str] = mapped_column(String(200), default="")
    used: Mapped[bool] = mapped_column(Boolean, default=False)
    edited: Mapped[bool] = mapped_column(Boolean, default=False)
    used_turn_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class AnnotationRow(Base):
    __tablename__ = "annotations"
    __table_args__ = (UniqueConstraint("session_id", "turn_index", "annotator", name="uq_annotation"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    turn_index: Mapped[int] = mapped_column(Integer)
    annotator: Mapped[str] = mapped_column(String(200))
    contradiction: Mapped[bool] = mapped_column(Boolean)
    contradicted_turns: Mapped[list] = mapped_column(JSON, default=list)
    contradicted_persona: Mapped[list | None] = mapped_column(JSON, nullable=True)  # schema 5: persona line indices
    category: Mapped[str] = mapped_column(String(16), default="none")
    guard_right: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


#: Rows per table, by name (Store.counts).
TABLES: dict[str, type[Base]] = {"sessions": SessionRow, "turns": TurnRow, "candidates": CandidateRow,
                                 "suggestions": SuggestionRow, "annotations": AnnotationRow}
