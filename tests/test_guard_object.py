"""The guard as one object (guard.judge.pipeline): loaded once with its settings read once, each turn's settings resolved
by it, its one detector judging the whole conversation (the user's turns included) into the one report, and
sessions taking turns on its scorer.

Plumbing on a scripted scorer (tests/fake_nli.py) and the tiny random checkpoint; the shipped weights' verdicts are
pinned in tests/test_guard_pinned.py.
"""

from __future__ import annotations

import json
import shutil
import threading
import time

import pytest
from fake_nli import ScriptedScorer

from guard.config import DEFAULT_PREFILTER_K, GuardConfig
from guard.judge.pipeline import Guard, load_guard
from guard.judge.report import BotTurnReport
from guard.records import Candidate, Turn
from guard.vocabulary import GuardMode

CONTRADICTS = (0.02, 0.03, 0.95)


def test_loading_reads_the_config_once_and_the_factory_gives_one_guard(tiny_nli_model_dir, tmp_path, monkeypatch):
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_nli_model_dir, folder)
    (folder / "guard_config.json").write_text(json.dumps({"threshold": 0.7, "intra_threshold": 0.8}))
    reads = []
    real_read = GuardConfig.read.__func__
    monkeypatch.setattr(GuardConfig, "read", classmethod(lambda cls, f: reads.append(f) or real_read(cls, f)))
    guard = load_guard(str(folder), prefilter=False)
    assert load_guard(str(folder), prefilter=False) is guard
    for tau in (None, 0.5, 0.7, None):
        guard.settings(threshold=tau)
    guard.verdict([Turn(0, "user", "Hi"), Turn(1, "bot", "I have a dog.")], "I have no pets.", speaker="bot",
                  settings=guard.settings(mode="flag"))
    assert len(reads) == 1
    assert (guard.threshold, guard.config.intra_threshold, guard.config.prefilter_k) == (0.7, 0.8, DEFAULT_PREFILTER_K)


def test_settings_come_from_the_guard_with_its_config_and_its_one_detector_keeps_none(tiny_nli_model_dir):
    guard = Guard("scripted", ScriptedScorer({}), embedder=object(),
                  config=GuardConfig(threshold=0.9, intra_threshold=0.6, own_question_threshold=0.55, prefilter_k=3,
                                     stream_calibrated=True))
    settings = guard.settings()
    assert guard.settings() == settings and guard.settings(threshold=0.9) == settings  # τ None is the calibrated τ
    assert (settings.threshold, settings.intra_threshold, settings.own_question_threshold) == (0.9, 0.6, 0.55)
    assert settings.prefilter_k == 3 and guard.detector.embedder is guard.embedder
    other = guard.settings(threshold=0.5, method="unstructured", prefilter=False)
    assert other != settings and other.prefilter_k is None and other.method == "unstructured"
    assert guard.detector.scorer is guard.scorer  # one detector, whatever the settings: they come with each call
    assert Guard("bare", ScriptedScorer({})).settings().prefilter_k is None  # no embedder, no prefilter


def test_judging_reads_an_answer_with_the_users_question():
    """The user's turns are part of the conversation the guard judges: "No." answers "Do you have kids?"."""
    statement = "I do not have kids."
    scorer = ScriptedScorer({("I have two kids.", statement): CONTRADICTS})
    guard = Guard("scripted", scorer, config=GuardConfig(threshold=0.9))
    turns = [Turn(0, "user", "Hi!"), Turn(1, "bot", "Hello."), Turn(2, "user", "Do you have kids?")]
    report = guard.judge(turns, [Candidate("No.", -0.1), Candidate("Yes, two of them.", -0.5)], speaker="bot",
                         persona=["I have two kids."], settings=guard.settings(mode=GuardMode.RERANK))
    assert isinstance(report, BotTurnReport) and report.detector == "scripted" and report.threshold == 0.9
    first = report.candidates[0]
    assert first.contradicts and first.evidence[0].hypothesis_reading == statement
    assert first.evidence[0].hypothesis == "No."  # the candidate's own words, the reading beside them
    assert report.chosen_index == 1 and report.sent_reply() == "Yes, two of them."
    # without the question the bare "No." asserts nothing to contradict
    alone = guard.judge(turns[:2], [Candidate("No.", -0.1)], speaker="bot", persona=["I have two kids."])
    assert not alone.candidates[0].contradicts


def test_mode_off_reports_without_judging():
    scorer = ScriptedScorer({})
    guard = Guard("scripted", scorer)
    report = guard.judge([Turn(0, "user", "Hi")], [Candidate("Hello.", -0.1)], speaker="bot",
                         settings=guard.settings(mode=GuardMode.OFF))
    assert scorer.calls == [] and report.candidates[0].verdict is None and report.sent_reply() == "Hello."


class _SlowScorer(ScriptedScorer):
    """Counts how many calls compute at the same time."""

    def __init__(self) -> None:
        super().__init__({})
        self.running = self.most = 0
        self._count = threading.Lock()

    def predict_proba(self, pairs):
        with self._count:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)
        with self._count:
            self.running -= 1
        return super().predict_proba(pairs)


def test_sessions_take_turns_on_the_scorer():
    """Two sessions (or server requests) judging at once compute one after the other on the shared scorer, also
    also when judging with other settings (another τ, another method)."""
    scorer = _SlowScorer()
    guard = Guard("scripted", scorer, config=GuardConfig(threshold=0.9))
    turns = [Turn(0, "bot", "I have a dog."), Turn(1, "user", "Nice.")]
    # each session asks about other candidates (pairs scored once are kept in the scorer's cache)
    calibrated = guard.settings(mode="flag")
    lower = guard.settings(mode="flag", threshold=0.5)
    unstructured = guard.settings(mode="flag", threshold=0.5, method="unstructured")
    jobs = [lambda n=n: guard.judge(turns, [f"I have {n} cats.", "I like tea."], speaker="bot", settings=calibrated)
            for n in (2, 3)] + [
        lambda n=n: guard.judge(turns, [f"I have {n} pets."], speaker="bot", settings=lower) for n in (0, 1)] + [
        lambda n=n: guard.judge(turns, [f"I hate {n} dogs."], speaker="bot", settings=unstructured) for n in (4, 5)]
    threads = [threading.Thread(target=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(scorer.calls) >= len(threads) and scorer.most == 1


def test_an_unknown_detector_name_says_what_to_pass():
    from guard.models.loading import ModelLoadError

    with pytest.raises(ModelLoadError, match="pass 'embedded' or a folder"):
        load_guard("no-such-detector-here", prefilter=False)


def test_the_registry_names_the_shipped_detectors_and_where_their_settings_are():
    from guard.models import registry

    assert {"embedded", "embedded-minilm", "embedded-mpnet", "embedded-cascade"} <= set(registry.available_detectors())
    assert registry.config_folder("embedded-cascade") == registry.MPNET_DIR  # decides at the larger model's τ
    assert registry.config_folder("embedded") == registry.config_folder("embedded-minilm")
    assert registry.describe_detector("embedded-cascade").startswith("MiniLM on every pair")
    assert registry.config_folder("some-org/a-hub-model") is None
