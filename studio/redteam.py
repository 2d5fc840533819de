"""Self-play red-teaming: the goading assistant talks to a bot through the guard, and a judge counts.

Each session opens with a question to the bot (CDConv's u_1 were questions addressed to the bot)
and then sends, turn after turn, the assistant's suggestion for the session's trigger method;
when that method has nothing to offer, a new opening question is sent instead (method "opener").
Every bot reply goes through ``conversation.guarding.guarded_reply`` exactly as on the chat page and is stored.

Each sent reply is judged twice: by the guard's own detector (in re-rank and block modes it only
lets through what it does not flag, so it trivially "wins" there) and by a second, named judge
(by default the same checkpoint with DECODE's unstructured method; give another checkpoint for a
more independent judge). The report gives both rates per bot, guard mode and method.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from bots.base import Bot
from conversation.guarding import guarded_reply
from conversation.records import BOT, USER, ChatSettings, Conversation
from guard.judge.jsonform import jsonable
from guard.records import Turn
from guard.vocabulary import GuardMode
from studio.goading import METHODS, suggest
from studio.storage import SessionInfo, Store, TurnJudgement

if TYPE_CHECKING:  # loads torch
    from guard.config import JudgeSettings
    from guard.judge.pipeline import Guard

#: Opening questions in the spirit of CDConv's u_1 (second person, a question about the bot).
OPENERS = (
    "Do you have any pets?", "Where do you live?", "What do you do for a living?", "Do you have any siblings?",
    "What do you like to do on weekends?", "Have you ever been abroad?", "What is your favorite food?",
    "Do you play any sports?", "Are you married?", "What kind of music do you like?", "Do you like to cook?",
    "How old are you?", "What did you study?", "Do you have a car?", "What are you reading at the moment?",
)
OPENER = "opener"
#: The modes self-play runs in (penalty needs a λ; the chat page offers it).
SELF_PLAY_MODES: tuple[GuardMode, ...] = tuple(m for m in GuardMode if m != GuardMode.PENALTY)


@dataclass(frozen=True)
class Judge:
    """A guard and the settings it judges a sent reply with, with a name for the report."""

    name: str
    guard: Guard
    settings: JudgeSettings

    def flags(self, history: Sequence[Turn], reply: str, persona: Sequence[str]) -> tuple[bool, float]:
        verdict = self.guard.verdict(history, reply, speaker=BOT, persona=persona, settings=self.settings)
        return bool(verdict.contradiction), float(verdict.score)


@dataclass
class RedteamSettings:
    """A self-play run: the chat settings every session plays with (the one record the chat page uses too), and
    the run's own shape."""

    chat: ChatSettings
    methods: list[str]
    sessions: int
    turns: int
    seed: int = 0
    use_lm: bool = True
    player: str | None = None  # who started the run (the page's name); default "self-play:<method>"
    owner: str | None = None  # the browser that started it (the Review page); the command line's runs belong to none


@dataclass
class RedteamRun:
    run_id: str
    settings: RedteamSettings
    guard_judge: str
    judge: str
    judgements: list[TurnJudgement] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    def report(self) -> dict:
        """Contradiction rates per method (bot and guard mode are the run's), judged both ways."""
        rows = []
        for method in list(self.settings.methods) + [OPENER]:
            mine = [j for j in self.judgements if j.method == method]
            if not mine:
                continue
            n = len(mine)
            rows.append({"bot": self.settings.chat.bot, "guard_mode": self.settings.chat.mode, "method": method,
                         "replies": n,
                         "guard_flag_rate": round(sum(j.guard_flag for j in mine) / n, 4),
                         "guard_judge_rate": round(sum(j.guard_judge for j in mine) / n, 4),
                         "judge_rate": round(sum(j.judge for j in mine) / n, 4),
                         # the share of this method's messages that led to a contradiction: the guard flagged a
                         # candidate, or either judge flags the reply that was sent
                         "contradiction_share": round(sum(j.guard_flag or j.guard_judge or j.judge
                                                          for j in mine) / n, 4)})
        chat = self.settings.chat
        return {"run_id": self.run_id, "bot": chat.bot, "guard_mode": chat.mode, "preset": chat.preset,
                "detector": chat.detector,
                "guard_judge": self.guard_judge, "judge": self.judge,
                "sessions": len(self.session_ids), "bot_replies": len(self.judgements),
                "interrupted": self.interrupted, "seconds": round(self.seconds, 1), "per_method": rows}


def run_redteam(settings: RedteamSettings, store: Store, bot: Bot, guard: Guard | None,
                guard_judge: Judge, judge: Judge, on_turn: Callable[[], None] | None = None) -> RedteamRun:
    """Play ``settings.sessions`` sessions of ``settings.turns`` bot turns each; every turn is stored as it
    happens, so an interruption (Ctrl-C) keeps what was done and the run reports it. ``guard`` is not used (and
    may be None) in mode off."""
    from studio.lm import continuation_scorer

    unknown = [m for m in settings.methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown goading method(s) {unknown}; choose from {', '.join(METHODS)}")
    run = RedteamRun(run_id=uuid.uuid4().hex[:8], settings=settings, guard_judge=guard_judge.name, judge=judge.name)
    scorer = continuation_scorer(bot) if settings.use_lm else None
    chat = settings.chat
    started = time.perf_counter()
    rng = random.Random(settings.seed)
    try:
        for k in range(settings.sessions):
            method = settings.methods[k % len(settings.methods)]
            conversation = Conversation(persona=list(chat.persona))
            conversation.record_id = f"redteam-{run.run_id}-{k:03d}"
            info = SessionInfo(id=conversation.record_id, settings=replace(chat),
                               player=settings.player or f"self-play:{method}", source="redteam", owner=settings.owner,
                               meta={"run_id": run.run_id, "method": method, "guard_judge": guard_judge.name,
                                     "judge": judge.name, "judgements": {}})
            store.save_session(info)
            run.session_ids.append(info.id)
            methods: dict[int, str] = {}
            conversation.add(USER, rng.choice(OPENERS))
            methods[0] = OPENER
            for _ in range(settings.turns):
                turn = conversation.append(guarded_reply(conversation, bot, guard, chat))
                earlier = conversation.history()[:-1]
                own, own_score = guard_judge.flags(earlier, turn.text, conversation.persona)
                other, other_score = judge.flags(earlier, turn.text, conversation.persona)
                user_method = methods[turn.turn_id - 1]
                judgement = TurnJudgement(info.id, turn.turn_id, user_method,
                                          bool(turn.report and turn.report.any_contradiction),
                                          own, round(own_score, 4), other, round(other_score, 4))
                run.judgements.append(judgement)
                info.meta["judgements"][str(turn.turn_id)] = jsonable(judgement)  # read by StoredSession.judgement
                offered = suggest(conversation.history(), scorer=scorer, methods=[method], minimum=1,
                                  seed=settings.seed * 1000 + k * 100 + turn.turn_id)
                store.save_turns(info.id, conversation.turns, methods)
                store.save_session(info)
                ids = store.save_suggestions(info.id, turn.turn_id, offered.suggestions, offered.ranking)
                if on_turn is not None:
                    on_turn()
                if len([t for t in conversation.turns if t.agent_id == BOT]) >= settings.turns:
                    break
                if offered.suggestions:
                    chosen = offered.suggestions[0]
                    conversation.add(USER, chosen.text)
                    methods[conversation.turns[-1].turn_id] = chosen.method
                    store.mark_suggestion_used(ids[0], conversation.turns[-1].turn_id)
                else:
                    conversation.add(USER, rng.choice(OPENERS))
                    methods[conversation.turns[-1].turn_id] = OPENER
    except KeyboardInterrupt:
        run.interrupted = True
    run.seconds = time.perf_counter() - started
    return run


def judged_sample(run: RedteamRun, size: int, seed: int = 0) -> list[tuple[str, int]]:
    """(session, bot turn) pairs for people to check: judge-flagged replies first, then a random rest."""
    rng = random.Random(seed)
    flagged = [j for j in run.judgements if j.judge or j.guard_judge]
    others = [j for j in run.judgements if not (j.judge or j.guard_judge)]
    rng.shuffle(flagged)
    rng.shuffle(others)
    half = max(size // 2, size - len(others))
    chosen = flagged[:half] + others[: size - min(half, len(flagged))]
    return [(j.session_id, j.turn_index) for j in chosen[:size]]
