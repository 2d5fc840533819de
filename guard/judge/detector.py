"""Contradiction detection over any NLI checkpoint, with evidence: one detector per scorer, settings per call.

* ``structured`` (DECODE, Nie et al. 2021, eq. 2-3): the candidate is paired with every earlier utterance of the
  same speaker (and the bot's persona lines); the contradiction score is the maximum pair probability and the
  evidence is every turn whose pair score reaches the threshold. Pairs are built per sentence on both sides
  (``pairing="sentence"``) because a long bot reply contradicts in one clause and a whole-turn pair dilutes it;
  ``pairing="utterance"`` keeps DECODE's whole-utterance pairs so the two can be compared.
* ``unstructured`` (DECODE's baseline): the whole history with speaker markers against the candidate, one pair.

A turn is read in the conversation (``guard.language.exchange``, ``guard.language.answers``): a short answer ("Yes, I am." to "Aren't
you a teacher?") is paired as the statement it makes with its question, its own words kept beside the reading.

Judging runs in three stages, each in its module: plan every pair (``guard.judge.planning``), score them in one batch
(pairs and embeddings scored before come from the model's caches, ``guard.models.pair_cache``), build each verdict once
from the scores (``guard.judge.building``). The settings (τ, the checks and their thresholds, pairing, prefilter) come
with each call as one resolved ``guard.config.JudgeSettings``; the detector keeps only what belongs to its models.
``guard.judge.pipeline.Guard.judge`` is the way in; nothing else calls the detector.
"""

from __future__ import annotations

from collections.abc import Sequence

from embedded.turns import cpu_turn
from guard.config import JudgeSettings
from guard.judge.building import structured_verdict, unstructured_verdict
from guard.judge.planning import plan_turn, units_of
from guard.judge.verdicts import Verdict
from guard.language import fact_sheet
from guard.language import text as textsplit
from guard.models.nli import NLIScorer
from guard.models.pair_cache import embed, score_pairs
from guard.records import Turn
from guard.vocabulary import Check, Method


class ContradictionDetector:
    """Judges whether candidate utterances contradict what their speaker said before, with the settings of each
    call. Holds the scorer and the prefilter's embedder (None: no prefilter is possible), nothing that depends on
    a setting."""

    def __init__(self, scorer: NLIScorer, embedder=None, claims_only: bool = True) -> None:
        self.scorer = scorer
        self.embedder = embedder
        # questions to the other speaker, greetings and thanks assert nothing: paired with nothing
        self.claims_only = claims_only

    def judge(self, history: Sequence[Turn], candidates: Sequence[str], speaker: str, persona: Sequence[str],
              settings: JudgeSettings, turn_id: int | None = None) -> tuple[Verdict, ...]:
        """Each candidate reply of ``speaker`` judged against ``history`` (both speakers) and the persona, every
        candidate's pairs in one batch; ``turn_id``: the id the reply gets (None: the one after the history)."""
        if isinstance(candidates, str):
            raise TypeError("candidates must be a list of strings, not one string")
        for c in candidates:
            if not isinstance(c, str):
                raise TypeError(f"each candidate must be a string, got {type(c).__name__}")
        if settings.prefilter_k is not None and self.embedder is None:
            raise ValueError("the prefilter needs an embedder (guard.models.loading.load_embedder())")
        history = list(history)
        if turn_id is None:
            turn_id = (max(t.turn_id for t in history) + 1) if history else 0
        with cpu_turn(self.scorer):  # sessions and requests sharing the scorer take turns (embedded.turns)
            if settings.method == Method.UNSTRUCTURED:
                return self._judge_unstructured(history, list(candidates), persona, settings, turn_id)
            plan = plan_turn(history, list(candidates), speaker, persona, settings, self.embedder, self.claims_only)
            probs = score_pairs(self.scorer, plan.pairs)
            layout = self.scorer.layout
            return tuple(structured_verdict(c, plan, probs, layout, settings, turn_id) for c in plan.candidates)

    def prepare(self, history: Sequence[Turn], persona: Sequence[str], settings: JudgeSettings) -> None:
        """Split (and, with a prefilter, embed) a conversation's texts ahead of the next turn: results are cached
        by text, so an app that calls this when a turn arrives pays only for the candidates when it judges."""
        texts = [t.text for t in history if t.text.strip()] + [p for p in persona if p.strip()]
        textsplit.prepare(texts)
        if Check.FACTS in settings.checks:
            fact_sheet.prepare(history, persona)
        if self.embedder is not None and settings.prefilter_k is not None:
            embed(self.embedder, [u.text for t in texts for u in units_of(t, settings.pairing, None,
                                                                           self.claims_only)])

    def _judge_unstructured(self, history: list[Turn], candidates: list[str], persona: Sequence[str],
                            settings: JudgeSettings, turn_id: int) -> tuple[Verdict, ...]:
        pairs = [(self._flat_context(history, persona, c), c) for c in candidates]
        scores = score_pairs(self.scorer, pairs)[:, self.scorer.layout.contradiction] if pairs else []
        return tuple(unstructured_verdict(context, cand, s, settings, turn_id) for (context, cand), s in zip(pairs, scores))

    def _flat_context(self, history: list[Turn], persona: Sequence[str], candidate: str) -> str:
        """Speaker-marked history, most recent turns kept when it exceeds the model's length."""
        tok = self.scorer.tokenizer
        budget = self.scorer.max_length - len(tok.tokenize(candidate)) - 4
        lines = [f"{t.agent_id}: {t.text}" for t in history]
        head = [f"persona: {p}" for p in persona]
        kept: list[str] = []
        used = sum(len(tok.tokenize(h)) for h in head)
        for line in reversed(lines):
            n = len(tok.tokenize(line))
            if kept and used + n > budget:
                break
            kept.insert(0, line)
            used += n
        return "\n".join(head + kept)
