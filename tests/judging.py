"""Judging through the guard in tests: a guard over a scorer in hand (``Guard.over``) with the settings asked for,
DECODE's task (the last turn against the rest) and each candidate's verdict. Flag mode: these tests read verdicts,
not what a policy sends."""

from __future__ import annotations

from collections.abc import Sequence

from guard.config import GuardConfig, JudgeSettings
from guard.judge.pipeline import Guard
from guard.judge.verdicts import Verdict
from guard.records import Dialogue, Turn


def guard_over(scorer, embedder=None, config: GuardConfig | None = None, **settings) -> tuple[Guard, JudgeSettings]:
    """A guard over ``scorer`` and its settings resolved with ``settings`` (``Guard.settings``), in flag mode."""
    guard = Guard.over(scorer, embedder=embedder, config=config)
    return guard, guard.settings(mode=settings.pop("mode", "flag"), **settings)


def detect(scorer, dialogue: Dialogue, embedder=None, config: GuardConfig | None = None, **settings) -> Verdict:
    """The verdict on the dialogue's last turn against the turns before it (``Guard.verdict_on_dialogue``)."""
    guard, judge_settings = guard_over(scorer, embedder, config, **settings)
    return guard.verdict_on_dialogue(dialogue, judge_settings)


def verdicts_of(guard: Guard, settings: JudgeSettings, history: Sequence[Turn], candidates: Sequence[str],
             speaker: str = "bot", persona: Sequence[str] = ()) -> list[Verdict]:
    """Each candidate's verdict, every candidate judged in one call (``Guard.judge``)."""
    report = guard.judge(history, candidates, speaker=speaker, persona=persona, settings=settings)
    return [c.verdict for c in report.candidates]
