"""The detector through the guard (``Guard.over``): DECODE pairing, evidence, prefilter, CDConv categories,
splitting."""

from __future__ import annotations

import json

import pytest
from fake_nli import ScriptedScorer
from judging import detect, guard_over, verdicts_of

from guard.config import GuardConfig, JudgeSettings
from guard.judge.pipeline import Guard
from guard.judge.verdicts import Verdict
from guard.language import text as textsplit
from guard.models.nli import NLIScorer
from guard.records import Dialogue, Turn
from guard.vocabulary import CHECKS, Category, Check, Method, Pairing, PremiseSource

CONTRA = (0.02, 0.03, 0.95)
ENTAIL = (0.9, 0.08, 0.02)

HISTORY = [
    Turn(0, "bot", "Hi there! I have two dogs. They keep me busy."),
    Turn(1, "user", "I have no pets."),
    Turn(2, "bot", "I work as a teacher in Ohio."),
    Turn(3, "user", "Do you like animals?"),
]


def _dialogue(last: str, speaker: str = "bot", persona=()) -> Dialogue:
    return Dialogue("d1", HISTORY + [Turn(4, speaker, last)], persona=list(persona))


def test_structured_pairs_only_same_speaker_and_evidence_is_the_contradicted_turn():
    scorer = ScriptedScorer({
        ("I have two dogs.", "I have never owned a dog."): CONTRA,
        # the user's turn would contradict too, but DECODE pairs only the bot's own turns
        ("I have no pets.", "I have never owned a dog."): CONTRA,
    })
    verdict = detect(scorer, _dialogue("I have never owned a dog."), threshold=0.5, checks=False)
    assert verdict.contradiction and verdict.category == "history"
    assert verdict.score == pytest.approx(0.95)
    assert [(e.source, e.turn_id, e.premise) for e in verdict.evidence] == [("history", 0, "I have two dogs.")]
    assert verdict.evidence_turn_ids == [0]
    assert {(p.source, p.turn_id) for p in verdict.pair_scores} == {("history", 0), ("history", 2)}  # bot turns only
    assert len(scorer.calls) == 1


def test_sentence_pairing_finds_a_contradiction_inside_a_long_turn_that_utterance_pairing_misses():
    scorer = ScriptedScorer({("I have two dogs.", "I have never owned a dog."): CONTRA})
    dialogue = _dialogue("I have never owned a dog.")
    # the NLI pairs alone (the fact sheet reads "never owned a dog" against "two dogs" whatever the pairing)
    by_sentence = detect(scorer, dialogue, threshold=0.5, pairing="sentence", checks=False)
    guard, utterance_settings = guard_over(scorer, threshold=0.5, pairing="utterance", checks=False)
    assert utterance_settings.pairing is Pairing.UTTERANCE  # the string is read into the one definition
    by_utterance = guard.verdict_on_dialogue(dialogue, utterance_settings)
    assert by_sentence.contradiction and by_sentence.evidence[0].turn_id == 0
    assert not by_utterance.contradiction  # whole turn 0 is a different premise text
    assert by_utterance.pair_scores[0].premise == HISTORY[0].text
    assert len(by_sentence.pair_scores) == 2 + 1  # two claims of turn 0 ("Hi there!" asserts nothing), one of turn 2


def test_persona_lines_are_premises_with_their_line_index():
    scorer = ScriptedScorer({("I am a vegetarian.", "I love eating steak."): CONTRA})
    verdict = detect(scorer, _dialogue("I love eating steak.", persona=["I like hiking.", "I am a vegetarian."]),
                     threshold=0.5)
    assert verdict.contradiction and verdict.category is Category.HISTORY
    assert (verdict.evidence[0].source, verdict.evidence[0].turn_id) == (PremiseSource.PERSONA, 1)
    assert verdict.evidence_turn_ids == [] and verdict.evidence_persona_lines == [1]
    persona_pairs = {(p.source, p.turn_id) for p in verdict.pair_scores if p.source == PremiseSource.PERSONA}
    assert persona_pairs == {(PremiseSource.PERSONA, 0), (PremiseSource.PERSONA, 1)}


def test_a_persona_line_and_a_turn_with_the_same_number_stay_apart():
    """Persona line 0 and turn 0 are different premises: each is evidence of its own."""
    scorer = ScriptedScorer({("I have two dogs.", "I have no pets."): CONTRA,
                             ("I love my dog.", "I have no pets."): (0.02, 0.08, 0.9)})
    verdict = detect(scorer, _dialogue("I have no pets.", persona=["I love my dog."]), threshold=0.5,
                     checks=False)
    assert [(e.source, e.turn_id, e.score) for e in verdict.evidence] == [
        (PremiseSource.HISTORY, 0, pytest.approx(0.95)), (PremiseSource.PERSONA, 0, pytest.approx(0.9))]
    assert verdict.evidence_turn_ids == [0] and verdict.evidence_persona_lines == [0]


def test_below_threshold_is_no_contradiction_and_threshold_is_respected():
    scorer = ScriptedScorer({("I work as a teacher in Ohio.", "I am a nurse."): (0.1, 0.3, 0.6)})
    dialogue = _dialogue("I am a nurse.")  # the NLI pair alone: the fact sheet would flag the job on its own
    assert detect(scorer, dialogue, threshold=0.5, checks=False).category == "history"
    strict = detect(scorer, dialogue, threshold=0.7, checks=False)
    assert (strict.contradiction, strict.category, strict.evidence) == (False, "none", ())
    assert strict.score == pytest.approx(0.6)


def test_judging_candidates_scores_all_candidates_in_one_batch():
    scorer = ScriptedScorer({("I have two dogs.", "No pets for me."): CONTRA})
    guard, settings = guard_over(scorer, threshold=0.5, checks=False)
    verdicts = verdicts_of(guard, settings, HISTORY, ["No pets for me.", "Yes, I love them.", "Sure."])
    assert [v.contradiction for v in verdicts] == [True, False, False]
    assert len(scorer.calls) == 1
    assert verdicts[0].details.turn_id == 4  # the id the candidate would get
    assert (verdicts[0].details.method, verdicts[0].details.n_pairs) == (Method.STRUCTURED, 3)  # 2 + 1 claims ("Hi there!" pairs with nothing)


def test_intra_sentence_category_comes_first_and_cites_the_two_clauses():
    candidate = "I don't like animals, I like dogs!"
    assert textsplit.clauses(candidate) == ("I don't like animals", "I like dogs!")
    scorer = ScriptedScorer({
        ("I don't like animals", "I like dogs!"): CONTRA,
        ("I have two dogs.", candidate): CONTRA,  # also a history contradiction: intra wins
    })
    verdict = detect(scorer, _dialogue(candidate), threshold=0.5)
    assert verdict.category == "intra"
    assert (verdict.evidence[0].source, verdict.evidence[0].turn_id, verdict.evidence[0].premise) == (
        PremiseSource.INTRA, 4, "I don't like animals")
    assert verdict.details.intra.clauses == ("I don't like animals", "I like dogs!")
    assert [(p.source, p.turn_id) for p in verdict.details.intra.pairs] == [(PremiseSource.INTRA, 4)]
    assert verdict.evidence_turn_ids == [0]  # the history evidence stays available


def test_clause_pairs_need_the_stricter_intra_threshold():
    """Human messages pair clauses like "I hate tea, I never drink it" that NLI scores as contradictions."""
    candidate = "I hate tea, I never drink it."
    clauses = textsplit.clauses(candidate)
    assert len(clauses) == 2
    scorer = ScriptedScorer({clauses: (0.05, 0.05, 0.9)})
    lenient = detect(scorer, _dialogue(candidate), threshold=0.5)
    assert (lenient.contradiction, lenient.category) == (True, "intra")  # no intra threshold: the history one
    strict = detect(scorer, _dialogue(candidate), threshold=0.5, intra_threshold=0.95)
    assert (strict.contradiction, strict.category, strict.evidence) == (False, "none", ())
    assert strict.score < 0.5 and strict.details.intra.score == pytest.approx(0.9)  # kept for the evidence view
    # "I never drink it" is a denial: its clash is capped by how far "I hate tea" agrees with "I drink it." (here:
    # entirely, so the cap leaves the score alone; guard.language.exchange.denial_support)
    blatant = ScriptedScorer({clauses: (0.01, 0.01, 0.98), (clauses[0], "I drink it."): (0.98, 0.01, 0.01)})
    verdict = detect(blatant, _dialogue(candidate), threshold=0.5, intra_threshold=0.95)
    assert (verdict.contradiction, verdict.category, verdict.score) == (True, "intra", pytest.approx(0.98))
    # its own threshold, not tied to τ (issue 23: a high τ must not silence the category check)
    guard = Guard.over(scorer)
    assert guard.settings(threshold=0.8, intra_threshold=0.6).intra_threshold == 0.6
    with pytest.raises(ValueError, match="intra_threshold"):
        guard.settings(threshold=0.8, intra_threshold=1.0)


def test_intra_threshold_comes_from_the_checkpoint_config_and_only_a_stream_calibration_sets_it_below_tau(tmp_path):
    import json

    (tmp_path / "guard_config.json").write_text(json.dumps({"threshold": 0.8, "intra_threshold": 0.97}))
    config = GuardConfig.read(tmp_path)
    assert JudgeSettings.resolve(config, threshold=0.8).intra_threshold == pytest.approx(0.97)
    assert JudgeSettings.resolve(config, threshold=0.99).intra_threshold == pytest.approx(0.99)
    assert Guard.over(ScriptedScorer({}), config=config).settings().intra_threshold == pytest.approx(0.97)
    (tmp_path / "guard_config.json").write_text(json.dumps({"threshold": 0.8}))
    assert GuardConfig.read(tmp_path).intra_threshold is None
    assert JudgeSettings.resolve(GuardConfig.read(tmp_path), threshold=0.8).intra_threshold == 0.8
    # calibrated on its own false alarms on bot turns (calibrate-stream): read as it is, below τ too
    (tmp_path / "guard_config.json").write_text(json.dumps({
        "threshold": 0.9, "intra_threshold": 0.7, "calibration": {"stream": {"rule": "bot-stream false-alarm"}}}))
    assert JudgeSettings.resolve(GuardConfig.read(tmp_path), threshold=0.9).intra_threshold == pytest.approx(0.7)


def test_shipped_detector_has_a_calibrated_intra_threshold():
    import json

    from guard.models.registry import config_folder, read_config

    config = read_config("embedded")
    tau, intra = config.threshold, config.intra_threshold
    assert intra is not None and 0.0 < intra < 1.0
    calibration = json.loads((config_folder("embedded") / "guard_config.json").read_text())["calibration"]
    if calibration.get("chosen") == "budget":  # one false-alarm budget over both dev streams' calibration halves
        note = calibration["budget"]
        assert (note["threshold"], note["intra_threshold"]) == (pytest.approx(tau), pytest.approx(intra))
        assert note["check_false_alarm_target"] <= 0.01
        assert all(s["false_alarm_rate"] <= note["false_alarm_target"] for s in note["per_stream"].values())
        assert set(config.checks) == set(note["checks"])
    elif calibration.get("chosen") == "stream":  # set on real bot turns: its own rule, not bound to τ
        note = calibration["stream"]
        assert (note["threshold"], note["intra_threshold"]) == (pytest.approx(tau), pytest.approx(intra))
        assert note["intra_false_alarm_target"] <= 0.01 and note["false_alarm_rate"] <= note["false_alarm_target"]
    else:
        note = calibration["intra"]
        assert tau < intra and note["fire_rate_at_intra_threshold"] <= 0.011 < note["fire_rate_at_history_threshold"]


def test_role_confusion_when_the_user_entails_a_history_contradiction():
    scorer = ScriptedScorer({
        ("I have two dogs.", "I have no pets."): CONTRA,
        ("I have no pets.", "I have no pets."): ENTAIL,  # the user's own words
    })
    verdict = detect(scorer, _dialogue("I have no pets."), threshold=0.5)
    assert verdict.category == "role"
    role = verdict.details.role
    assert role.decided and role.user_reading == pytest.approx(0.9)
    assert (role.user_pair.source, role.user_pair.turn_id) == (PremiseSource.HISTORY, 1)
    assert verdict.evidence[0].turn_id == 0

    history_only = ScriptedScorer({("I have two dogs.", "I hate dogs."): CONTRA})
    verdict = detect(history_only, _dialogue("I hate dogs."), threshold=0.5)
    assert verdict.category == "history"
    assert verdict.details.role.user_reading < 0.5


def test_unstructured_is_one_pair_per_candidate_with_speaker_markers_and_recent_turns():
    scorer = ScriptedScorer({}, max_length=20)
    guard, settings = guard_over(scorer, method="unstructured", threshold=0.5)
    verdicts = verdicts_of(guard, settings, HISTORY, ["I am fine.", "Yes."], persona=["I like tea."])
    assert len(scorer.calls) == 1 and len(scorer.calls[0]) == 2
    pair = verdicts[0].pair_scores[0]
    assert (pair.source, pair.turn_id) == (PremiseSource.WHOLE_HISTORY, None) and verdicts[0].evidence == ()
    assert verdicts[0].details.method == Method.UNSTRUCTURED and verdicts[0].details.n_pairs == 1
    assert pair.premise.startswith("persona: I like tea.")
    assert pair.premise.endswith("user: Do you like animals?")
    assert "Hi there!" not in pair.premise  # oldest turn dropped to fit max_length


def test_prefilter_bounds_pairs_and_keeps_the_relevant_turn():
    from guard.models.loading import load_embedder
    from guard.models.pair_cache import EMBED_CACHE_LIMIT, cache_of

    fillers = ["I went to the cinema yesterday.", "My favourite colour is blue.", "I drive an old car.",
               "I cooked pasta for dinner.", "I am learning to play the guitar.", "It rained all week here."]
    history = [Turn(0, "bot", "I have two dogs, a poodle and a beagle.")]
    for i, line in enumerate(fillers, start=1):
        history += [Turn(2 * i - 1, "user", "Tell me more."), Turn(2 * i, "bot", line)]
    candidate = "I don't have any dogs."
    scorer = ScriptedScorer({("I have two dogs, a poodle and a beagle.", candidate): CONTRA})
    embedder = load_embedder()
    guard, settings = guard_over(scorer, embedder=embedder, config=GuardConfig(prefilter_k=2), threshold=0.5)
    assert settings.prefilter_k == 2
    verdict = verdicts_of(guard, settings, history, [candidate])[0]
    assert len(verdict.details.paired_turn_ids) == 2 and 0 in verdict.details.paired_turn_ids
    assert verdict.evidence_turn_ids == [0]
    embeddings = cache_of(embedder, EMBED_CACHE_LIMIT)  # the embedder's own cache (guard.models.pair_cache)
    cached = len(embeddings)
    verdicts_of(guard, settings, history, [candidate])
    assert len(embeddings) == cached  # every text embedded once


def test_an_empty_candidate_scores_no_pairs():
    scorer = ScriptedScorer({})
    verdict = verdicts_of(*guard_over(scorer, threshold=0.5), HISTORY, ["  "])[0]
    assert (verdict.contradiction, verdict.category, verdict.pair_scores) == (False, "none", ())


def test_bad_arguments_fail_with_clear_messages():
    scorer = ScriptedScorer({})
    guard = Guard.over(scorer)  # no embedder
    with pytest.raises(ValueError, match="method"):
        guard.settings(method="flat")
    with pytest.raises(ValueError, match="pairing"):
        guard.settings(pairing="word")
    prefiltered = JudgeSettings.resolve(GuardConfig(prefilter_k=3), mode="flag", has_embedder=True)
    assert prefiltered.prefilter_k == 3
    with pytest.raises(ValueError, match="embedder"):
        guard.verdict(HISTORY, "I have no pets.", speaker="bot", settings=prefiltered)
    settings = guard.settings(mode="flag")
    with pytest.raises(ValueError, match="no turns"):
        guard.verdict_on_dialogue(Dialogue("empty", []), settings)
    with pytest.raises(TypeError, match="list of strings"):
        guard.judge(HISTORY, "one string", speaker="bot", settings=settings)


def test_real_tiny_model_path_end_to_end(tiny_nli_model_dir):
    scorer = NLIScorer.from_pretrained(tiny_nli_model_dir)
    guard = Guard.over(scorer)  # no config given: DECODE's τ 0.5
    # the model's own scores (the fact sheet's flags score its confidence, not a pair's probability)
    settings = guard.settings(mode="flag", checks=tuple(c for c in CHECKS if c != Check.FACTS))
    assert guard.threshold == 0.5 and settings.threshold == 0.5
    candidates = ["I have no pets but I love dogs.", "Yes."]
    verdicts = verdicts_of(guard, settings, HISTORY, candidates, persona=["I am a vegetarian."])
    assert len(verdicts) == 2 and all(isinstance(v, Verdict) for v in verdicts)
    expected = scorer.contradiction_proba([("I have two dogs.", "Yes.")])[0]
    pair = next(p for p in verdicts[1].pair_scores if p.premise == "I have two dogs.")
    assert pair.score == pytest.approx(float(expected), abs=1e-5)  # batched = one-at-a-time
    for v in verdicts:
        intra = v.details.intra.score if v.details.intra.score >= settings.intra_threshold else 0.0
        assert v.score == pytest.approx(max(max(p.score for p in v.pair_scores), intra))
        assert all(0.0 <= p.score <= 1.0 for p in v.pair_scores)
        assert v.contradiction == (v.score >= 0.5)


def test_two_way_checkpoint_cannot_decide_role_and_says_so(tiny_nli2_model_dir):
    scorer = NLIScorer.from_pretrained(tiny_nli2_model_dir)
    verdict = detect(scorer, _dialogue("I have no pets."), threshold=0.01)
    assert verdict.category in ("history", "intra")
    if verdict.category == "history":
        assert verdict.details.role.decided is False and "2-way" in verdict.details.role.why


@pytest.fixture(scope="module")
def embedded_detector():
    from embedded import MissingAssetError
    from guard.models.loading import load_scorer

    try:
        scorer = load_scorer("embedded")
    except MissingAssetError:
        pytest.skip("models/detector is not committed yet")
    return guard_over(scorer)  # no config given: DECODE's τ 0.5, every check


def test_embedded_detector_separates_a_plain_contradiction(embedded_detector):
    history = [Turn(0, "bot", "I have two dogs and a cat."), Turn(1, "user", "Nice, what do you do?"),
               Turn(2, "bot", "I am a teacher at a high school.")]
    yes, no = verdicts_of(*embedded_detector, history, ["I don't have any pets at all.", "I teach maths to teenagers."])
    assert yes.contradiction and yes.evidence_turn_ids == [0]
    assert not no.contradiction
    assert yes.score > no.score


def test_clause_splitting_cuts_at_but_and_adverbial_clauses():
    assert textsplit.clauses("I love hiking but I have never been on a hike.") == (
        "I love hiking", "I have never been on a hike.")
    parts = textsplit.clauses("I live in Ohio because my wife works there.")
    assert parts[0].startswith("I live in Ohio") and "my wife works there" in parts
    assert textsplit.sentences("I have two kids. They are 5 and 7.") == ("I have two kids.", "They are 5 and 7.")
    assert textsplit.sentences("   ") == ()


def test_score_rows_keep_persona_evidence_as_minus_one_minus_the_line():
    """`python -m guard score` lists earlier turn ids, then persona line i as -1 - i (docs/cli.md)."""
    from guard.cli import verdict_row

    scorer = ScriptedScorer({("I have two dogs.", "I have no pets."): CONTRA,
                             ("I love my dog.", "I have no pets."): CONTRA,
                             ("I walk my dog daily.", "I have no pets."): CONTRA})
    dialogue = _dialogue("I have no pets.", persona=["I love my dog.", "I like tea.", "I walk my dog daily."])
    verdict = detect(scorer, dialogue, threshold=0.5, checks=False)
    row = verdict_row("r1", verdict)
    assert row["evidence"] == [0, -1, -3] and row["category"] == "history"
    assert json.loads(json.dumps(row))["category"] == "history"


def test_a_calibration_edits_the_checkpoints_config_keeping_what_it_does_not_set(tmp_path):
    """``guard.config.edited_guard_config``, the one way the calibrations write their decisions: the keys a block sets
    change, the others stay, and a folder without a config gets one."""
    from guard.config import GUARD_CONFIG_NAME, edited_guard_config

    (tmp_path / GUARD_CONFIG_NAME).write_text(json.dumps({"threshold": 0.9, "checks": ["intra"]}))
    with edited_guard_config(tmp_path) as config:
        config["support"] = {"persona_entailment": 0.989}
    assert json.loads((tmp_path / GUARD_CONFIG_NAME).read_text()) == {
        "threshold": 0.9, "checks": ["intra"], "support": {"persona_entailment": 0.989}}
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with edited_guard_config(fresh) as config:
        config["threshold"] = 0.5
    assert json.loads((fresh / GUARD_CONFIG_NAME).read_text()) == {"threshold": 0.5}
