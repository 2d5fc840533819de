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
from studio.storage import StoredSession

#: where a session came from, in words
SOURCE_WORDS = {"chat": "chat page", "redteam": "self-play", "import": "imported"}
#: the scoreboard's and the players' columns (studio.scores' names) as the page heads them
SCOREBOARD_WORDS = {
    "bot": "bot", "preset": "decoding", "guard_mode": "guard mode", "method": "message before the reply",
    "sessions": "sessions", "bot replies": "bot replies", "guard flags": "flagged by the guard (sent or not)",
    "flagged replies sent": "flagged and sent", "flag rate": "share flagged", "annotated": "annotated",
    "confirmed": "confirmed by annotators", "confirmed rate": "share confirmed",
}
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
#: the sessions table: its first two columns stay in view (em) while the rest scrolls sideways
SESSION_PINNED_EM = (10.0, 6.0)


def method_words(method: str) -> str:
    return METHOD_LABELS.get(method, method)


def in_words(frame: pd.DataFrame, words: dict[str, str]) -> pd.DataFrame:
    """A studio.scores frame with its headers in words and its trigger methods by their labels."""
    frame = frame.copy()
    if "method" in frame.columns:
        frame["method"] = [method_words(m) for m in frame["method"]]
    return frame.rename(columns=words)


def self_play_rows(per_method: Sequence[dict]) -> list[dict]:
    return [{SELF_PLAY_WORDS.get(k, k): (method_words(v) if k == "method" else v) for k, v in row.items()}
            for row in per_method]


def first_words(text: str, words: int = 8) -> str:
    """The first ``words`` words of a turn, "…" when it goes on (the turn pickers)."""
    split = " ".join(str(text).split()).split(" ")
    return " ".join(split[:words]) + ("…" if len(split) > words else "")


def session_label(session: StoredSession) -> str:
    """A session in a picker: its id, player and first user message."""
    first = next((t.turn.text for t in session.turns if t.turn.agent_id == "user"), "")
    who = session.info.player or "(anonymous)"
    return f"{session.info.id} · {who} · “{first_words(first)}”" if first else f"{session.info.id} · {who}"


def session_rows(scores: Sequence[SessionScore]) -> list[dict]:
    """One row per session, headed in words; its first two columns (session, player) are the pinned ones."""
    return [{
        "session": s.session_id, "player": s.player or "", "made on": SOURCE_WORDS.get(s.source, s.source),
        "bot": s.bot, "decoding": s.preset, "guard mode": str(s.guard_mode or ""), "detector (threshold)": s.detector,
        "bot replies": s.bot_turns, "flagged and sent": s.flagged_replies,
        "caught by the guard, not sent": s.caught, "repaired and sent": s.repaired_replies,
        "annotated": s.annotated_turns, "confirmed by annotators": s.confirmed,
        "first flagged at bot reply": s.turns_to_first_flag,
        "first confirmed at bot reply": s.turns_to_first_confirmed,
        "what provoked them": ", ".join(f"{method_words(m)} × {n}" for m, n in sorted(s.triggers.items())),
    } for s in scores]
