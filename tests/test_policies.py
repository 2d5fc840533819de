"""Policies: which candidate is sent under each mode and why (``Why`` records, compared by field), with the DNLI
penalty arithmetic. What the reasons say in words is tests/test_wording.py's."""

from __future__ import annotations

import pytest
from judging import guard_over, verdicts_of

from guard.judge.policies import DEFAULT_SAFE_REPLY, MODES, WhyKind, choose
from guard.judge.verdicts import IntraCheck, PairScore, Verdict, VerdictDetails
from guard.models.nli import NLIScorer
from guard.records import Candidate, Turn
from guard.vocabulary import Category, Method, PremiseSource


def _verdict(score: float, threshold: float = 0.5, category: str = "history", turn_id: int = 2,
             source: PremiseSource = PremiseSource.HISTORY) -> Verdict:
    hit = score >= threshold
    evidence = (PairScore(source, turn_id, "I have two dogs.", "I have no pets.", score),) if hit else ()
    details = VerdictDetails(Method.STRUCTURED, turn_id=3, threshold=threshold, n_pairs=1, history_score=score)
    return Verdict(hit, score, category if hit else Category.NONE, evidence, evidence, details)


CANDIDATES = [Candidate("I have no pets.", -0.5), Candidate("My dogs are great.", -0.9), Candidate("Dogs are fun.", -1.3)]


def test_off_and_flag_keep_the_generators_best_and_flag_annotates():
    verdicts = [_verdict(0.9), _verdict(0.1), _verdict(0.2)]
    off = choose(CANDIDATES, verdicts, "off")
    flag = choose(CANDIDATES, verdicts, "flag")
    assert off.chosen_index == flag.chosen_index == 0 and not flag.used_fallback
    assert [w.kind for w in flag.whys] == [WhyKind.BEST, WhyKind.LOWER, WhyKind.LOWER]
    assert [w.flagged for w in flag.whys] == [True, False, False] and not any(w.flagged for w in off.whys)
    assert choose(CANDIDATES, [], "off").reply == "I have no pets."  # off needs no verdicts


def test_rerank_takes_the_best_clean_candidate_and_keeps_best_when_all_contradict():
    decision = choose(CANDIDATES, [_verdict(0.9), _verdict(0.7), _verdict(0.1)], "rerank")
    assert (decision.chosen_index, decision.reply) == (2, "Dogs are fun.")
    assert [w.kind for w in decision.whys] == [WhyKind.REJECTED, WhyKind.REJECTED, WhyKind.FAVOURITE]
    all_bad = choose(CANDIDATES, [_verdict(0.9)] * 3, "rerank")
    assert all_bad.chosen_index == 0 and not all_bad.used_fallback
    assert [w.kind for w in all_bad.whys] == [WhyKind.KEPT_FLAGGED, WhyKind.REJECTED, WhyKind.REJECTED]


def test_block_sends_the_safe_reply_only_when_every_candidate_contradicts():
    assert choose(CANDIDATES, [_verdict(0.9), _verdict(0.2), _verdict(0.9)], "block").chosen_index == 1
    blocked = choose(CANDIDATES, [_verdict(0.9)] * 3, "block")
    assert blocked.chosen_index is None and blocked.used_fallback and blocked.reply == DEFAULT_SAFE_REPLY
    custom = choose(CANDIDATES, [_verdict(0.9)] * 3, "block", fallback="Sorry, could you repeat that?")
    assert custom.reply == "Sorry, could you repeat that?"


def test_penalty_is_welleck_eq1():
    # s = [-0.5, -0.9, -1.3]; s_1 - s_k with k = 3 -> 0.8; c = [0.9, 0, 0] (only flagged candidates count)
    decision = choose(CANDIDATES, [_verdict(0.9), _verdict(0.4), _verdict(0.1)], "penalty", penalty_lambda=1.0)
    assert decision.adjusted_scores == pytest.approx([-0.5 - 0.8 * 0.9, -0.9, -1.3])
    assert decision.chosen_index == 1
    # lambda = 0.5: -0.5 - 0.36 = -0.86 still beats -0.9
    assert choose(CANDIDATES, [_verdict(0.9), _verdict(0.4), _verdict(0.1)], "penalty",
                  penalty_lambda=0.5).chosen_index == 0
    # k = 2: gap 0.4, -0.5 - 0.36 = -0.86 > -0.9: stays first
    k2 = choose(CANDIDATES, [_verdict(0.9), _verdict(0.4), _verdict(0.1)], "penalty", penalty_k=2)
    assert k2.adjusted_scores[0] == pytest.approx(-0.86) and k2.chosen_index == 0
    # a certain contradiction with lambda 1 drops the top candidate to the k-th place (ties go first-listed)
    certain = choose(CANDIDATES, [_verdict(1.0), _verdict(0.0), _verdict(0.0)], "penalty")
    assert certain.adjusted_scores[0] == pytest.approx(-1.3)
    top = decision.whys[0]
    assert top.kind == WhyKind.PENALTY_LOWER and top.score - top.adjusted == pytest.approx(0.72)
    assert (top.penalty_lambda, top.gap, top.contradiction) == pytest.approx((1.0, 0.8, 0.9))


def test_the_deciding_score_is_the_check_that_decided():
    """Issue 32: a candidate whose clauses clash at 0.878 (the intra check, threshold 0.71) and which scores 0.93
    against an earlier turn (under τ 0.95) is decided by the intra check: its own score and line."""
    clash = PairScore(PremiseSource.INTRA, 7, "I have no pets", "my cat sleeps a lot.", 0.878)
    details = VerdictDetails(Method.STRUCTURED, turn_id=7, threshold=0.95, n_pairs=4, history_score=0.93,
                             intra=IntraCheck(("I have no pets", "my cat sleeps a lot."), (clash,), 0.878, 0.71))
    assert Verdict(True, 0.93, Category.INTRA, (clash,), (), details).deciding == (0.878, 0.71)
    # a history contradiction quotes its strongest pair; no contradiction, the highest score against τ
    assert _verdict(0.9).deciding == (0.9, 0.5)
    assert _verdict(0.2).deciding == (0.2, 0.5)


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="mode must be one of"):
        choose(CANDIDATES, [], "veto")
    with pytest.raises(ValueError, match="one verdict per candidate"):
        choose(CANDIDATES, [_verdict(0.1)], "rerank")
    with pytest.raises(ValueError, match="no candidates"):
        choose([], [], "block")
    with pytest.raises(ValueError, match="penalty_k"):
        choose(CANDIDATES, [_verdict(0.1)] * 3, "penalty", penalty_k=4)
    assert set(MODES) == {"off", "flag", "rerank", "penalty", "block", "repair"}


def test_policies_run_on_real_detector_verdicts(tiny_nli_model_dir):
    guard, settings = guard_over(NLIScorer.from_pretrained(tiny_nli_model_dir), threshold=0.01)
    history = [Turn(0, "bot", "I have two dogs."), Turn(1, "user", "Nice.")]
    verdicts = verdicts_of(guard, settings, history, [c.text for c in CANDIDATES])
    assert all(v.contradiction for v in verdicts)  # a threshold this low flags everything
    decision = choose(CANDIDATES, verdicts, "block")
    assert decision.used_fallback and [w.kind for w in decision.whys] == [WhyKind.REJECTED_ALL] * 3
