"""Issue 43: one way in to judge a turn, settings resolved once and quoted, records finished when built.

Every caller (the chat, the served guard, the playground and Learn, self-play, the command lines, evaluation,
calibration) judges through ``Guard.judge`` with one ``JudgeSettings``; here each caller's own path runs with
overridden settings and the verdicts it gets must quote them. The records on the judge path are frozen, and one
plain guarded turn crosses the packages in one direction: conversation → bots → guard → conversation.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from pathlib import Path

import pytest

from bots.scripted import ScriptedBot
from conversation.guarding import guarded_reply, rejudge, resolved_settings
from conversation.records import BOT, USER, ChatSettings, Conversation
from guard.config import GuardConfig, JudgeSettings
from guard.judge.pipeline import Guard
from guard.records import Dialogue, Turn
from guard.vocabulary import CHECKS, Check, GuardMode
from tests.fake_nli import ScriptedScorer

REPO = Path(__file__).resolve().parents[1]
CONTRA = (0.01, 0.01, 0.98)  # (entailment, neutral, contradiction): ScriptedScorer's layout
TURNS = [Turn(0, USER, "Do you have pets?"), Turn(1, BOT, "I have two dogs."), Turn(2, USER, "Tell me more.")]
REPLY = "I have no pets."


def scripted_guard(config: GuardConfig | None = None) -> Guard:
    scorer = ScriptedScorer({("I have two dogs.", REPLY): CONTRA})
    return Guard.over(scorer, config=config or GuardConfig(threshold=0.8, intra_threshold=0.85))


def quotes(verdict, settings: JudgeSettings) -> None:
    """A verdict quotes the settings it was judged with."""
    details = verdict.details
    assert details.threshold == settings.threshold
    assert details.checks == tuple(sorted(str(c) for c in settings.checks))
    assert details.intra_threshold == settings.intra_threshold
    assert details.own_question_threshold == settings.own_question_threshold
    assert details.prefilter_k == settings.prefilter_k
    if details.intra is not None:
        assert details.intra.threshold == settings.intra_threshold


# ------------------------------------------------------------------ settings resolved once, in one place
def test_settings_are_resolved_from_the_config_in_one_function():
    config = GuardConfig(threshold=0.8, intra_threshold=0.7, own_question_threshold=0.6, stream_calibrated=True,
                         checks=frozenset({Check.INTRA}), pairing_thresholds={"utterance": 0.3})
    settings = JudgeSettings.resolve(config)
    assert (settings.threshold, settings.intra_threshold, settings.own_question_threshold) == (0.8, 0.7, 0.6)
    assert settings.checks == {Check.INTRA} and settings.prefilter_k is None  # no embedder: no prefilter
    assert JudgeSettings.resolve(config, pairing="utterance").threshold == 0.3
    over = JudgeSettings.resolve(config, threshold=0.91, intra_threshold=0.92, checks=True)
    assert (over.threshold, over.intra_threshold, over.checks) == (0.91, 0.92, frozenset(CHECKS))
    assert JudgeSettings.resolve(config, threshold=0.93456).threshold == 0.93456  # never rounded
    older = GuardConfig(threshold=0.8, intra_threshold=0.7)  # not stream-calibrated: never below τ
    assert JudgeSettings.resolve(older).intra_threshold == 0.8
    for bad in ({"threshold": 1.0}, {"intra_threshold": 0.0}, {"method": "flat"}, {"pairing": "word"},
                {"checks": ["tone"]}, {"mode": "loud"}):
        with pytest.raises(ValueError):
            JudgeSettings.resolve(config, **bad)


#: the config fields that hold thresholds: read in ``JudgeSettings.resolve`` only
THRESHOLD_FIELDS = frozenset({"threshold", "intra_threshold", "own_question_threshold", "pairing_thresholds"})


@dataclasses.dataclass(frozen=True)
class WatchedConfig(GuardConfig):
    """A checkpoint's config that notes which function reads a threshold off it (the read, not the source text)."""

    def __getattribute__(self, name: str):
        if name in THRESHOLD_FIELDS:
            caller = sys._getframe(1).f_code
            READERS.add((Path(caller.co_filename).name, caller.co_qualname))
        return object.__getattribute__(self, name)


READERS: set[tuple[str, str]] = set()


def test_nothing_reads_a_threshold_off_the_config_but_the_resolver():
    """τ and the checks' thresholds are read from a checkpoint's config in ``JudgeSettings.resolve`` only: every path a
    turn takes (the chat's turn with its reminder, a re-judge, the playground's dialogue, the stream scoring, the
    guard's own τ) is run over a config that notes who reads them."""
    from guard.eval.stream import StreamTurn, score_stream

    READERS.clear()
    guard = scripted_guard(WatchedConfig(threshold=0.8, intra_threshold=0.7, own_question_threshold=0.6,
                                         checks=("intra", "facts")))
    conversation = Conversation(persona=["I have two dogs."])
    conversation.add(USER, "Do you have pets?")
    conversation.append(guarded_reply(conversation, ScriptedBot({"replies": [["I have no pets.", "Yes, two."]]}),
                                      guard, ChatSettings(bot="scripted")))
    rejudge(conversation, guard, ChatSettings(bot="scripted", threshold=0.5))
    guard.judge_dialogue(Dialogue("d", [*TURNS, Turn(3, BOT, REPLY)]))
    score_stream(guard, guard.settings(mode="flag", checks=True),
                 [StreamTurn(Dialogue("s#3", [*TURNS, Turn(3, BOT, REPLY)]), None)])
    assert guard.threshold == 0.8
    assert READERS and READERS <= {("config.py", "JudgeSettings.resolve")}, sorted(READERS)
    READERS.clear()
    assert guard.config.intra_threshold == 0.7  # the watch sees a read anywhere else: this one
    assert READERS == {("test_one_way_in.py", "test_nothing_reads_a_threshold_off_the_config_but_the_resolver")}


# ------------------------------------------------------------------ each caller's path quotes its settings
def test_the_chat_path_quotes_its_settings():
    guard = scripted_guard()
    conversation = Conversation(persona=["I like tea."])
    conversation.add(USER, "Hi! Do you have pets?")
    conversation.append(guarded_reply(conversation, ScriptedBot({"replies": [["I have two dogs."]]}), guard,
                                      ChatSettings(bot="scripted", threshold=0.61, remind=False)))
    conversation.add(USER, "Tell me more.")
    settings = ChatSettings(bot="scripted", threshold=0.42, guard_mode=GuardMode.BLOCK, remind=False)
    turn = guarded_reply(conversation, ScriptedBot({"replies": [["x"], [REPLY, "I love my dogs."]]}), guard, settings)
    report = turn.report
    assert report.settings == resolved_settings(guard, settings)
    assert report.threshold == 0.42 and report.mode == GuardMode.BLOCK
    for cand in report.candidates:
        quotes(cand.verdict, report.settings)
    assert report.candidates[0].contradicts and turn.text == "I love my dogs."
    assert len(conversation.turns) == 3, "guarded_reply hands the turn back; it never appends it"
    conversation.append(turn)
    again = rejudge(conversation, guard, replace_threshold(settings, 0.99))
    new = again.turns[-1].report
    assert new is not report and new.threshold == 0.99 and report.threshold == 0.42  # a new report, the old kept
    quotes(new.candidates[0].verdict, new.settings)


def replace_threshold(settings: ChatSettings, tau: float) -> ChatSettings:
    return dataclasses.replace(settings, threshold=tau)


def test_the_served_guard_quotes_the_request_settings():
    from serve.protocol import parse_chat_request
    from serve.service import GuardService

    guard = scripted_guard()
    defaults = ChatSettings(bot="scripted", detector="scripted", remind=False)
    service = GuardService(generator=ScriptedBot({"replies": [[REPLY]]}), generator_label="scripted", guard=guard,
                           defaults=defaults)
    request = parse_chat_request({"messages": [
        {"role": "user", "content": "Do you have pets?"}, {"role": "assistant", "content": "I have two dogs."},
        {"role": "user", "content": "Tell me more."}], "guard": {"threshold": 0.55, "guard_mode": "flag"}}, defaults)
    turn = service.answer(request)
    assert turn.report.threshold == 0.55 and turn.report.mode == GuardMode.FLAG
    quotes(turn.report.candidates[0].verdict, turn.report.settings)
    assert turn.report.candidates[0].contradicts


def test_a_request_without_a_system_message_is_guarded_against_the_persona_the_bot_plays(monkeypatch):
    """The embedded bot plays "My name is Sam. ..." when a client sends no system message; the served guard checked
    its replies against no persona at all, while the chat page checks against that one."""
    from serve.protocol import parse_chat_request
    from serve.service import GuardService

    monkeypatch.setattr("bots.registry.default_persona", lambda name: ("My name is Sam.",) * (name == "playing-sam"))
    guard = scripted_guard()
    defaults = ChatSettings(bot="playing-sam", detector="scripted", remind=False)
    service = GuardService(generator=ScriptedBot({"replies": [["My name is Max."]]}), generator_label="playing-sam",
                           guard=guard, defaults=defaults)
    turn = service.answer(parse_chat_request({"messages": [{"role": "user", "content": "What's your name?"}],
                                              "guard": {"guard_mode": "flag"}}, defaults))
    assert list(turn.report.persona) == ["My name is Sam."]
    assert turn.report.candidates[0].contradicts  # the scripted scorer: "Max" against the played "Sam"
    given = service.answer(parse_chat_request({"messages": [{"role": "system", "content": "My name is Max."},
                                                            {"role": "user", "content": "What's your name?"}]},
                                              defaults))
    assert list(given.report.persona) == ["My name is Max."] and not given.report.candidates[0].contradicts


def test_the_playground_and_learn_path_quotes_its_settings():
    from guard.eval.examples import EXAMPLES, judge_examples

    guard = scripted_guard()
    for method in ("structured", "unstructured"):
        settings = guard.settings(mode="flag", method=method, threshold=0.37, prefilter=False, checks=True)
        verdict = guard.verdict_on_dialogue(Dialogue("d", [*TURNS, Turn(3, BOT, REPLY)]), settings)
        assert verdict.details.threshold == 0.37
        if method == "structured":
            quotes(verdict, settings)
            assert verdict.contradiction and verdict.details.checks == tuple(sorted(CHECKS))
    judged = judge_examples(guard, guard.settings(mode="flag", threshold=0.37, prefilter=False, checks=True),
                            EXAMPLES[:2])
    assert len(judged) == 2


def test_self_play_judges_quote_their_settings(tmp_path):
    from studio.redteam import Judge, RedteamSettings, run_redteam
    from studio.storage import open_store

    guard = scripted_guard()
    own = Judge("own", guard, guard.settings(mode="flag", threshold=0.33))
    other = Judge("other", guard, guard.settings(mode="flag", threshold=0.44, method="unstructured", prefilter=False))
    verdict = guard.verdict(TURNS[:2], REPLY, speaker=BOT, settings=own.settings)
    quotes(verdict, own.settings)
    chat = ChatSettings(bot="scripted", threshold=0.66, guard_mode=GuardMode.RERANK, remind=False)
    store = open_store(f"sqlite:///{tmp_path / 'studio.db'}")
    run = run_redteam(RedteamSettings(chat=chat, methods=["inquire_bot"], sessions=1, turns=1, use_lm=False), store,
                      ScriptedBot({"replies": [["I have two dogs."]]}), guard, own, other)
    stored = store.load_session(run.session_ids[0])
    report = next(t.report for t in stored.conversation().turns if t.report is not None)
    assert report.threshold == 0.66


def test_the_command_line_and_evaluation_quote_their_settings(monkeypatch):
    import guard.judge.pipeline as pipeline
    from guard.eval.evaluation import detect_all, evaluate_dataset, make_judge

    guard = scripted_guard()
    monkeypatch.setattr(pipeline, "load_guard", lambda name, prefilter=True: guard)
    judge_guard, settings = make_judge("scripted", "structured", 0.51, checks=False)
    assert judge_guard is guard and settings.threshold == 0.51 and settings.checks == frozenset()
    records = [Dialogue("contra", [*TURNS, Turn(3, BOT, REPLY)], label=True, evidence=[1]),
               Dialogue("fine", [*TURNS, Turn(3, BOT, "I love them.")], label=False, evidence=[])]
    for verdict in detect_all(guard, settings, records, quiet=True):
        quotes(verdict, settings)
    result = evaluate_dataset("decode", records, "scripted", "structured", 0.51, checks=False, quiet=True)
    assert result["threshold"] == 0.51


def test_calibration_scores_through_the_guard_with_its_settings():
    from guard.eval.stream import StreamTurn, score_stream

    guard = scripted_guard()
    settings = guard.settings(mode="flag", threshold=0.77, checks=["intra"])
    turns = [StreamTurn(Dialogue("c#3", [*TURNS, Turn(3, BOT, REPLY)]), None)]
    (score,) = score_stream(guard, settings, turns)
    # 0.98 capped by the denial's support pair (unscripted: P(contradiction) 0.05): 1 - 0.05
    assert score.category == "history" and score.history_score == pytest.approx(0.95)
    lower = score_stream(guard, guard.settings(mode="flag", threshold=0.99, checks=["intra"]), turns)[0]
    assert lower.category == "none"  # the settings passed decide, nothing else
    with_facts = score_stream(guard, guard.settings(mode="flag", threshold=0.99, checks=True), turns)[0]
    assert with_facts.fact_score == 1.0 and with_facts.category == "history"  # "no pets" after "two dogs"


# ------------------------------------------------------------------ finished when built
JUDGE_PATH_RECORDS = [
    "guard.config.JudgeSettings", "guard.config.GuardConfig", "guard.judge.pipeline.Guard", "guard.records.Turn",
    "guard.records.Candidate", "guard.judge.verdicts.PairScore", "guard.judge.verdicts.IntraCheck", "guard.judge.verdicts.RoleCheck",
    "guard.judge.verdicts.PersonaSide", "guard.judge.verdicts.VerdictDetails", "guard.judge.verdicts.Verdict",
    "guard.language.exchange.Unit", "guard.judge.planning.Premise", "guard.judge.planning.Slot", "guard.judge.planning.DriftPair",
    "guard.judge.planning.CandidatePlan", "guard.judge.planning.TurnPlan", "guard.judge.repair.Repair",
    "guard.judge.repair.Declined", "guard.judge.policies.Why", "guard.judge.policies.PolicyDecision",
    "guard.language.fact_sheet.Fact", "guard.language.fact_sheet.FactSheet", "guard.judge.reminders.Reminder", "guard.judge.report.TurnContext",
    "guard.judge.report.CandidateReport", "guard.judge.report.BotTurnReport", "conversation.records.ChatTurn",
]


def _record(path: str):
    module, _, name = path.rpartition(".")
    __import__(module)
    return getattr(sys.modules[module], name)


@pytest.mark.parametrize("path", JUDGE_PATH_RECORDS)
def test_records_on_the_judge_path_are_frozen_with_tuples(path):
    cls = _record(path)
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, f"{path} is not a frozen dataclass"
    from guard.judge.detector import ContradictionDetector  # named under TYPE_CHECKING where a light import needs it

    hints = typing.get_type_hints(cls, localns={"ContradictionDetector": ContradictionDetector})
    for field in dataclasses.fields(cls):
        shown = str(hints[field.name])
        assert "list[" not in shown, f"{path}.{field.name} is a list inside a frozen record: {shown}"


def test_a_judged_report_cannot_be_changed_after_it_is_built():
    guard = scripted_guard()
    report = guard.judge(TURNS, [REPLY, "I love my dogs."], speaker=BOT, settings=guard.settings())
    cand = report.candidates[0]
    for target, name, value in ((report, "sent", "x"), (report, "chosen_index", 0), (cand, "chosen", True),
                                (cand.verdict, "score", 0.0), (cand.verdict.details, "threshold", 0.1),
                                (cand.verdict.evidence[0], "score", 0.0), (report.settings, "threshold", 0.2)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(target, name, value)
    assert isinstance(report.candidates, tuple) and isinstance(cand.verdict.evidence, tuple)


# ------------------------------------------------------------------ one direction through the packages
def test_a_guarded_turn_crosses_the_packages_in_one_direction():
    """conversation → bots → conversation → guard → conversation: each package is entered once per plain turn
    (a reminder is a second pass, asked for on purpose), and inside the guard the stages run in order: plan,
    score, build, decide."""
    guard = scripted_guard()
    conversation = Conversation()
    for turn in TURNS[:2]:
        conversation.add(turn.agent_id, turn.text)
    conversation.add(USER, "Tell me more.")
    bot = ScriptedBot({"replies": [["x"], [REPLY, "I love my dogs."]]})
    callees: list[str] = []  # the package of each call conversation.guarding makes (records' constructors aside)
    stages: list[str] = []
    watched = {"guard.judge.planning": "plan", "guard.models.pair_cache": "score", "guard.judge.building": "build",
               "guard.judge.policies": "decide", "guard.judge.wording": "decide"}

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back is not None else ""
        if caller == "conversation.guarding" and frame.f_code.co_name not in ("__init__", "__post_init__"):
            top = module.split(".")[0]
            if top in ("bots", "guard") and (not callees or callees[-1] != top):
                callees.append(top)
        stage = watched.get(module)
        if stage and (not stages or stages[-1] != stage):
            stages.append(stage)

    sys.setprofile(profile)
    try:
        turn = guarded_reply(conversation, bot, guard, ChatSettings(bot="scripted", remind=False))
    finally:
        sys.setprofile(None)
    assert turn.text == "I love my dogs."
    assert callees == ["bots", "guard"], f"the turn went back and forth: {callees}"
    assert stages[stages.index("plan"):] == ["plan", "score", "build", "decide"], stages
