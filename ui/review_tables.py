"""The Review page's tables in words: headers a class reads, trigger methods by their labels, and the sessions table
with its key columns pinned while it scrolls. Pure (no Streamlit): ``studio.scores`` computes, this names.

The counts keep sent and unsent contradictions apart: a bot turn the guard flagged is a flagged reply that was sent,
a repaired reply sent without its contradicting sentence, or a catch (another reply went out).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from studio.goading import METHOD_LABELS
from studio.scores import SessionScore
from studio.storage import SessionInfo, StoredSession

#: where a session came from, in words
SOURCE_WORDS = {"chat": "chat page", "redteam": "self-play", "import": "imported"}
#: the players' columns (studio.scores' names) as the page heads them
PLAYER_WORDS = {
    "player": "player", "sessions": "sessions", "bot turns": "bot replies",
    "flagged replies sent": "flagged and sent", "caught, not sent": "caught by the guard, not sent",
    "confirmed": "confirmed by annotators", "fastest": "fewest bot replies to a contradiction",
}
#: a self-play run's per-method rates (studio.redteam.RedteamRun.report) in words
SELF_PLAY_WORDS = {
    "bot": "bot", "guard_mode": "guard mode", "method": "message before the reply", "replies": "bot replies",
    "guard_flag_rate": "the guard flagged a candidate", "guard_judge_rate": "the guard's detector flags the reply sent",
    "judge_rate": "the second judge flags the reply sent", "contradiction_share": "led to a contradiction",
}
#: the Sessions table's columns: few enough to fit a 1,024 px window with the sidebar open (issue 54: 17 columns were
#: 1,376 px wide in a 940 px column); the rest of a session is shown on demand (``session_details``)
SESSION_COLUMNS = ("session", "player", "bot replies", "flagged and sent", "caught by the guard, not sent",
                   "confirmed by annotators", "id")
#: a player who typed no name
GUEST = "guest"


def method_words(method: str) -> str:
    return METHOD_LABELS.get(method, method)


def in_words(frame: pd.DataFrame, words: dict[str, str]) -> pd.DataFrame:
    """A studio.scores frame with its headers in words and its trigger methods by their labels."""
    frame = frame.copy()
    if "method" in frame.columns:
        frame["method"] = [method_words(m) for m in frame["method"]]
    return frame.rename(columns=words)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "–"


def scoreboard_rows(board: pd.DataFrame) -> list[dict]:
    """studio.scores.scoreboard in few columns, so that it fits a 1,024 px window with the sidebar open (issue 54: its
    12 columns were 857 px in 564 px): what was played in one cell ("smollm2 · balanced · rerank"), each share beside
    its count ("3 · 38 %"), the confirmed replies out of those annotated ("2 of 4 · 50 %")."""
    rows = []
    for row in board.to_dict("records"):
        replies, flags, annotated = int(row["bot replies"]), int(row["guard flags"]), int(row["annotated"])
        confirmed = int(row["confirmed"])
        rows.append({
            "bot · decoding · guard mode": " · ".join(str(row[k]) for k in ("bot", "preset", "guard_mode")),
            "message before the reply": method_words(row["method"]), "sessions": int(row["sessions"]),
            "bot replies": replies,
            "flagged by the guard (sent or not)": f"{flags} · {_share(flags, replies)}",
            "flagged and sent": int(row["flagged replies sent"]),
            "confirmed by annotators (of the replies annotated)": (
                f"{confirmed} of {annotated} · {_share(confirmed, annotated)}" if annotated else "none yet"),
        })
    return rows


def self_play_rows(per_method: Sequence[dict]) -> list[dict]:
    return [{SELF_PLAY_WORDS.get(k, k): (method_words(v) if k == "method" else v) for k, v in row.items()}
            for row in per_method]


def first_words(text: str, words: int = 8) -> str:
    """The first ``words`` words of a turn, "…" when it goes on (the turn pickers)."""
    split = " ".join(str(text).split()).split(" ")
    return " ".join(split[:words]) + ("…" if len(split) > words else "")


def player_label(info: SessionInfo) -> str:
    """Who played a session: the name typed, else "guest" with the first characters of the browser's key, so that
    two browsers without a name are told apart ("guest 3f2a"); "guest" for a session of no browser."""
    name = (info.player or "").strip()
    if name and name != GUEST:
        return name
    return f"{GUEST} {info.owner[:4]}" if info.owner else GUEST


def session_name(session: StoredSession) -> str:
    """A session as a person knows it: its first user message and when it started ("“Do you have any pets?” ·
    27 Nov, 18:05 UTC")."""
    first = next((t.turn.text for t in session.turns if t.turn.agent_id == "user"), "")
    when = session.info.created_at
    started = f"{when:%d %b, %H:%M} UTC" if when is not None else ""
    said = f"“{first_words(first, 6)}”" if first else "(no message yet)"
    return f"{said} · {started}" if started else said


def session_label(session: StoredSession) -> str:
    """A session in a picker: its name, player and id."""
    return f"{session_name(session)} · {player_label(session.info)} · {session.info.id}"


def session_rows(scores: Sequence[SessionScore], names: dict[str, str] | None = None) -> list[dict]:
    """One row per session, headed in words, every field of it: the table shows ``SESSION_COLUMNS`` (its id last),
    ``session_details`` the rest. ``names``: session id -> ``session_name``."""
    names = names or {}
    return [{
        "session": names.get(s.session_id, s.session_id), "player": s.player or "",
        "bot replies": s.bot_turns, "flagged and sent": s.flagged_replies,
        "caught by the guard, not sent": s.caught, "confirmed by annotators": s.confirmed,
        "made on": SOURCE_WORDS.get(s.source, s.source),
        "bot": s.bot, "decoding": s.preset, "guard mode": str(s.guard_mode or ""), "detector (threshold)": s.detector,
        "repaired and sent": s.repaired_replies, "annotated": s.annotated_turns,
        "first flagged at bot reply": s.turns_to_first_flag,
        "first confirmed at bot reply": s.turns_to_first_confirmed,
        "what provoked them": ", ".join(f"{method_words(m)} × {n}" for m, n in sorted(s.triggers.items())),
        "id": s.session_id,
    } for s in scores]


def session_details(row: dict) -> list[dict]:
    """One session's row of ``session_rows`` as a two-column table (what, value): the details the Sessions table
    leaves out, shown for the session picked below it."""
    return [{"what": key, "value": "–" if value in (None, "") else value} for key, value in row.items()
            if key not in SESSION_COLUMNS[:2]]
