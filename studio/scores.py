"""What goading sessions achieved: per-session scores, a scoreboard, and annotator agreement.

A bot turn counts as a *guard flag* when the guard found a contradicting candidate, as a *flagged
reply* when the reply actually sent contradicts (flag mode, or every candidate contradicted; a *repaired
reply*, sent by the repair mode without its contradicting sentence, is counted apart, not as flagged), as
*caught* when the guard flagged a candidate and sent another reply (neither flagged nor repaired), and
as *confirmed* when the people who annotated it say it contradicts (majority; a tie is not
confirmed). A guard flag is so a flagged reply, a repaired reply or a caught one: sent and unsent contradictions
are counted apart. The trigger method of a bot turn is how the user message before it was written.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import pandas as pd

from conversation.records import USER
from guard.vocabulary import GuardMode
from studio.storage import Annotation, StoredSession

TYPED = "typed"


def majority(labels: Sequence[Annotation]) -> bool | None:
    """True/False by majority of annotators; None when nobody annotated; a tie counts as False."""
    if not labels:
        return None
    yes = sum(a.contradiction for a in labels)
    return yes > len(labels) - yes


def by_turn(annotations: Iterable[Annotation]) -> dict[tuple[str, int], list[Annotation]]:
    grouped: dict[tuple[str, int], list[Annotation]] = defaultdict(list)
    for a in annotations:
        grouped[(a.session_id, a.turn_index)].append(a)
    return grouped


@dataclass
class TurnOutcome:
    """One bot turn: what provoked it and what the guard and people said about it."""

    session_id: str
    turn_index: int
    bot_turn_number: int  # 1 for the session's first bot turn
    method: str
    guard_flag: bool
    reply_flagged: bool
    confirmed: bool | None  # None: not annotated
    annotators: int
    repaired: bool = False  # repair mode: the reply was sent with its contradicting sentence cut (not flagged)
    # the guard reminded the bot (guard.judge.reminders): "" when it did not, else who wrote the reply sent after it:
    # "reminded" (the bot, reminded), "composed" (the guard, from the evidence) or "none" (nothing consistent)
    reminder: str = ""


def turn_outcomes(session: StoredSession, annotations: dict[tuple[str, int], list[Annotation]]) -> list[TurnOutcome]:
    out: list[TurnOutcome] = []
    previous_method = TYPED
    number = 0
    for stored in session.turns:
        turn = stored.turn
        if turn.agent_id == USER:
            previous_method = stored.method or TYPED
            continue
        number += 1
        report = turn.report
        labels = annotations.get((session.info.id, turn.turn_id), [])
        out.append(TurnOutcome(
            session_id=session.info.id, turn_index=turn.turn_id, bot_turn_number=number, method=previous_method,
            guard_flag=bool(report is not None and report.any_contradiction),
            reply_flagged=bool(report is not None and report.reply_flagged),
            confirmed=majority(labels), annotators=len(labels),
            repaired=bool(report is not None and report.repaired),
            reminder=str(report.reminder.outcome or "none") if report is not None and report.reminder else ""))
    return out


@dataclass
class SessionScore:
    session_id: str
    bot: str
    preset: str
    guard_mode: GuardMode | None
    detector: str  # the detectors (and τ) that judged its bot turns when they were made, in order
    player: str | None
    source: str
    bot_turns: int
    guard_flags: int
    flagged_replies: int
    annotated_turns: int
    confirmed: int
    turns_to_first_flag: int | None  # bot turns until the guard first flagged a candidate
    turns_to_first_confirmed: int | None  # bot turns until the first contradiction people confirmed
    triggers: dict[str, int] = field(default_factory=dict)  # method -> contradictions it provoked
    repaired_replies: int = 0  # replies sent with their contradicting sentence cut (repair mode; not flagged)
    caught: int = 0  # bot turns whose contradicting candidates the guard did not send (another reply went out)
    reminders: int = 0  # bot turns where the guard reminded the bot
    reminded_replies: int = 0  # ... and a consistent reply the bot wrote after the reminder was sent
    composed_replies: int = 0  # ... and the guard's composed opening was sent (every reminded candidate contradicted)
    sheet_replies: int = 0  # ... and the guard's answer from the fact sheet was sent (nothing the bot wrote gave it)


def session_score(session: StoredSession, annotations: dict[tuple[str, int], list[Annotation]]) -> SessionScore:
    """Scores of one session. ``triggers`` counts confirmed contradictions per method, or, in a session
    nobody annotated, the guard's flags."""
    outcomes = turn_outcomes(session, annotations)
    flags = [o for o in outcomes if o.guard_flag]
    confirmed = [o for o in outcomes if o.confirmed]
    annotated = [o for o in outcomes if o.confirmed is not None]
    provoked = confirmed if annotated else flags
    info = session.info
    made = [session.reply_settings(o.turn_index) for o in outcomes]
    bots = list(dict.fromkeys(m.bot for m in made)) or [info.settings.bot]  # every bot that replied, in order
    presets = list(dict.fromkeys(m.preset for m in made)) or [info.settings.preset]
    detectors = list(dict.fromkeys(f"{m.detector} (τ {m.threshold:.4f})" if m.threshold is not None else m.detector
                                   for m in made if m.detector)) or [info.settings.detector]
    return SessionScore(
        session_id=info.id, bot=", ".join(bots), preset=", ".join(presets), guard_mode=info.settings.guard_mode,
        detector=", ".join(d for d in detectors if d),
        player=info.player,
        source=info.source, bot_turns=len(outcomes), guard_flags=len(flags),
        flagged_replies=sum(o.reply_flagged for o in outcomes), annotated_turns=len(annotated),
        confirmed=len(confirmed),
        turns_to_first_flag=flags[0].bot_turn_number if flags else None,
        turns_to_first_confirmed=confirmed[0].bot_turn_number if confirmed else None,
        triggers=dict(Counter(o.method for o in provoked)),
        repaired_replies=sum(o.repaired for o in outcomes),
        caught=sum(o.guard_flag and not o.reply_flagged and not o.repaired for o in outcomes),
        reminders=sum(bool(o.reminder) for o in outcomes),
        reminded_replies=sum(o.reminder == "reminded" for o in outcomes),
        composed_replies=sum(o.reminder == "composed" for o in outcomes),
        sheet_replies=sum(o.reminder == "sheet" for o in outcomes))


def outcome_frame(sessions: Sequence[StoredSession], annotations: Iterable[Annotation]) -> pd.DataFrame:
    """One row per bot turn with the bot, preset and guard mode that produced it (the turn's own, kept since
    schema 4; the session's for a turn without them) and the session's player."""
    grouped = by_turn(annotations)
    rows = []
    for session in sessions:
        info = session.info
        for o in turn_outcomes(session, grouped):
            made = session.reply_settings(o.turn_index)  # the turn's own bot and settings, else the session's
            rows.append({"session": info.id, "bot": made.bot, "preset": made.preset,
                         "guard_mode": str(made.guard_mode or ""),  # "": not known, a group of its own
                         "player": info.player or "", "source": info.source, "turn": o.turn_index,
                         "bot_turn_number": o.bot_turn_number, "method": o.method, "guard_flag": o.guard_flag,
                         "reply_flagged": o.reply_flagged, "confirmed": o.confirmed, "annotators": o.annotators})
    columns = ["session", "bot", "preset", "guard_mode", "player", "source", "turn", "bot_turn_number", "method",
               "guard_flag", "reply_flagged", "confirmed", "annotators"]
    return pd.DataFrame(rows, columns=columns)


#: the scoreboard's counts per group: "guard flags" counts bot turns with a flagged candidate, sent or not; "flagged
#: replies sent" those whose sent reply was flagged
SCOREBOARD_COUNTS = ["sessions", "bot replies", "guard flags", "flagged replies sent", "flag rate", "annotated",
                     "confirmed", "confirmed rate"]


def scoreboard(outcomes: pd.DataFrame, by: Sequence[str] = ("bot", "preset", "guard_mode", "method")) -> pd.DataFrame:
    """Bot replies, guard flags (sent or not), flagged replies sent and confirmed contradictions per group, with
    their rates."""
    by = list(by)
    if outcomes.empty:
        return pd.DataFrame(columns=by + SCOREBOARD_COUNTS)
    frame = outcomes.assign(annotated=outcomes["confirmed"].notna(),
                            confirmed_yes=outcomes["confirmed"].fillna(False).astype(bool))
    table = frame.groupby(by, dropna=False).agg(
        sessions=("session", "nunique"), replies=("turn", "size"), flags=("guard_flag", "sum"),
        sent=("reply_flagged", "sum"), annotated=("annotated", "sum"), confirmed=("confirmed_yes", "sum")).reset_index()
    table["flag rate"] = (table["flags"] / table["replies"]).round(3)
    table["confirmed rate"] = [round(c / a, 3) if a else None for c, a in zip(table["confirmed"], table["annotated"])]
    table = table.rename(columns={"replies": "bot replies", "flags": "guard flags", "sent": "flagged replies sent"})
    return table[by + SCOREBOARD_COUNTS].sort_values(by).reset_index(drop=True)


def player_board(scores: Sequence[SessionScore]) -> pd.DataFrame:
    """Who made the bot contradict itself soonest: per player, the fewest bot turns to a contradiction
    (confirmed by people when annotated, else flagged by the guard), with the contradictions that were sent
    (flagged replies), those the guard caught and did not send, and those people confirmed, each counted apart."""
    columns = ["player", "sessions", "bot turns", "flagged replies sent", "caught, not sent", "confirmed", "fastest"]
    rows = []
    for s in scores:
        first = s.turns_to_first_confirmed if s.annotated_turns else s.turns_to_first_flag
        rows.append({"player": s.player or "(anonymous)", "session": s.session_id, "bot turns": s.bot_turns,
                     "flagged replies sent": s.flagged_replies, "caught, not sent": s.caught,
                     "confirmed": s.confirmed, "first contradiction at bot turn": first})
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(rows)
    board = frame.groupby("player").agg(sessions=("session", "nunique"), **{
        "bot turns": ("bot turns", "sum"), "flagged replies sent": ("flagged replies sent", "sum"),
        "caught, not sent": ("caught, not sent", "sum"), "confirmed": ("confirmed", "sum"),
        "fastest": ("first contradiction at bot turn", "min")}).reset_index()
    board["fastest"] = board["fastest"].astype("Int64")  # a count: "1", not "1.0" once a player has none (NaN)
    return board.sort_values(["fastest", "flagged replies sent", "caught, not sent"], ascending=[True, False, False],
                             na_position="last").reset_index(drop=True)[columns]


# ---------------------------------------------------------------------------- agreement
@dataclass
class KappaResult:
    value: float | None  # None when undefined (e.g. every label the same)
    items: int
    raters: str  # "ann1 vs ann2" for Cohen, "3 raters" for Fleiss

    def as_dict(self) -> dict:
        return {"kappa": self.value, "items": self.items, "raters": self.raters}


@dataclass
class AgreementReport:
    """Cohen's kappa for each pair of annotators, Fleiss' kappa across all, on two questions:
    is it a contradiction (yes/no) and which CDConv category (none/intra/role/history)."""

    cohen_contradiction: list[KappaResult]
    cohen_category: list[KappaResult]
    fleiss_contradiction: KappaResult | None
    fleiss_category: KappaResult | None
    annotators: list[str]
    items_with_two_or_more: int


def _finite(value: float) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else round(float(value), 4)


def agreement(annotations: Sequence[Annotation]) -> AgreementReport:
    """Agreement between annotators, with scikit-learn's cohen_kappa_score and statsmodels' fleiss_kappa.

    Fleiss' kappa needs the same number of raters per item: it uses the items rated by the most
    common number of raters (at least two).
    """
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    grouped = by_turn(annotations)
    annotators = sorted({a.annotator for a in annotations})
    labels = {key: {a.annotator: a for a in items} for key, items in grouped.items()}
    cohen_yes, cohen_cat = [], []
    for first, second in combinations(annotators, 2):
        shared = [key for key, by_who in labels.items() if first in by_who and second in by_who]
        if not shared:
            continue
        a = [labels[k][first] for k in shared]
        b = [labels[k][second] for k in shared]
        with warnings.catch_warnings():  # one label everywhere: kappa is undefined (nan), reported as None
            warnings.simplefilter("ignore")
            yes = cohen_kappa_score([x.contradiction for x in a], [x.contradiction for x in b])
            cat = cohen_kappa_score([x.category for x in a], [x.category for x in b])
        name = f"{first} vs {second}"
        cohen_yes.append(KappaResult(_finite(yes), len(shared), name))
        cohen_cat.append(KappaResult(_finite(cat), len(shared), name))
    multi = {k: v for k, v in labels.items() if len(v) >= 2}
    fleiss_yes = fleiss_cat = None
    if multi:
        size = Counter(len(v) for v in multi.values()).most_common(1)[0][0]
        items = [list(v.values()) for v in multi.values() if len(v) == size]
        categories = ["none", "intra", "role", "history"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yes_table, _ = aggregate_raters([[int(a.contradiction) for a in item] for item in items], n_cat=2)
            cat_table, _ = aggregate_raters([[categories.index(a.category) for a in item] for item in items],
                                            n_cat=len(categories))
            fleiss_yes = KappaResult(_finite(fleiss_kappa(yes_table)), len(items), f"{size} raters")
            fleiss_cat = KappaResult(_finite(fleiss_kappa(cat_table)), len(items), f"{size} raters")
    return AgreementReport(cohen_yes, cohen_cat, fleiss_yes, fleiss_cat, annotators, len(multi))
