"""Contradiction detectors over any NLI checkpoint, with evidence.

* ``structured`` (DECODE, Nie et al. 2021, eq. 2-3): the candidate is paired with every earlier
  utterance of the same speaker (and the bot's persona lines); the contradiction score is the
  maximum pair probability and the evidence is every turn whose pair score reaches the threshold.
  Pairs are built per sentence on both sides (``pairing="sentence"``) because a long bot reply
  contradicts in one clause and a whole-turn pair dilutes it; ``pairing="utterance"`` keeps
  DECODE's whole-utterance pairs so the two can be compared.
* ``unstructured`` (DECODE's baseline): the whole history with speaker markers against the
  candidate, one pair.

With ``categories=True`` the structured detector also names the CDConv category (Zheng et al.
2022), decided in the paper's order: intra-sentence (two clauses of the candidate contradict each
other), role confusion (a history contradiction that reads as the user's side of the
conversation), history contradiction.

A sentence-transformer ``embedder`` with ``prefilter_k`` bounds the cost of long histories: each
candidate sentence is paired only with the ``prefilter_k`` most similar earlier same-speaker
sentences (whole utterances with ``pairing="utterance"``), so the pairs per turn stay flat.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from embedded.turns import cpu_turn
from guard import text as textsplit
from guard.answers import after_particle
from guard.answers import resolve as resolve_answer
from guard.config import GuardConfig
from guard.nli import NLIScorer
from guard.records import Dialogue, Turn
from guard.verdicts import IntraCheck, PairScore, RoleCheck, Verdict, VerdictDetails
from guard.vocabulary import METHODS, PAIRINGS, Category, Method, Pairing, PremiseSource

_EMBED_CACHE_LIMIT = 50_000
_YOU = re.compile(r"\b(?:you|your|yours|yourself|u)\b", re.IGNORECASE)


def _answered_questions(history: Sequence[Turn]) -> dict[int, str]:
    """Turn id -> the statement its opening yes/no particle makes about its speaker (``guard.answers``)."""
    answered = {}
    for before, turn in zip(history, history[1:]):
        if before.agent_id != turn.agent_id:
            statement = resolve_answer(before.text, turn.text)
            if statement:
                answered[turn.turn_id] = statement
    return answered


def _with_answer(statement: str | None, units: tuple[str, ...]) -> tuple[str, ...]:
    """A turn's units with the statement its answer particle makes put first (when there is one)."""
    return (statement, *units) if statement and statement not in units else units


def asks_back(text: str) -> bool:
    """Whether a turn ends by asking the other speaker about themselves ("I'm 25. And you?", "Do you?")."""
    last = text.strip()
    if not last.endswith("?"):
        return False
    tail = last[max(last.rfind(".", 0, len(last) - 1), last.rfind("!", 0, len(last) - 1)) + 1:]
    return bool(_YOU.search(tail))


def is_short_reply(text: str, max_words: int = 4) -> bool:
    """A short, content-poor turn ("Hmm.", "ok", "lol") - CDConv's short-utterance trigger."""
    return len(text.split()) <= max_words and "?" not in text


def asked_back_turn(history: Sequence[Turn], speaker: str) -> int | None:
    """The id of ``speaker``'s latest turn when it asked the other speaker back ("I'm 25. And you?") and only short
    replies followed it - the situation where a bot answers its own question as the user would (CDConv)."""
    own = [t for t in history if t.agent_id == speaker and t.text.strip()]
    if not own:
        return None
    asked = own[-1]
    since = [t for t in history if t.turn_id > asked.turn_id]
    if asks_back(asked.text) and since and all(is_short_reply(t.text) for t in since):
        return asked.turn_id
    return None




@dataclass
class _Premise:
    source: PremiseSource
    turn_id: int
    text: str
    units: tuple[str, ...]


class ContradictionDetector:
    """Detects whether a (candidate) utterance contradicts what its speaker said before."""

    def __init__(
        self,
        scorer: NLIScorer,
        method: Method | str = Method.STRUCTURED,
        threshold: float | None = None,
        embedder=None,
        prefilter_k: int | None = None,
        categories: bool = True,
        pairing: Pairing | str | None = None,
        role_threshold: float = 0.5,
        max_clauses: int = 6,
        intra_threshold: float | None = None,
        claims_only: bool = True,
        own_question_threshold: float | None = None,
        config: GuardConfig | None = None,
    ) -> None:
        # the checkpoint's settings (guard.pipeline.Guard passes them); none: DECODE's τ 0.5, sentence pairing
        config = config or GuardConfig()
        if pairing is None:  # the pairing the checkpoint's threshold was calibrated for
            pairing = config.pairing
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        if pairing not in PAIRINGS:
            raise ValueError(f"pairing must be one of {', '.join(PAIRINGS)}, got {pairing!r}")
        if prefilter_k is not None and prefilter_k < 1:
            raise ValueError(f"prefilter_k must be a positive number of turns or None, got {prefilter_k}")
        if prefilter_k is not None and embedder is None:
            raise ValueError("prefilter_k needs an embedder (guard.loading.load_embedder())")
        if threshold is None:
            threshold = config.threshold_for(pairing)
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must lie strictly between 0 and 1, got {threshold}")
        if intra_threshold is None:  # the checkpoint's own (calibrated on its own false alarms), else τ
            intra_threshold = config.intra_threshold_at(threshold)
        if not 0.0 < intra_threshold < 1.0:
            raise ValueError(f"intra_threshold must lie strictly between 0 and 1, got {intra_threshold}")
        if own_question_threshold is None:  # the checkpoint's own (calibrated on bot turns), else τ
            own_question_threshold = config.own_question_threshold_at(threshold)
        if not 0.0 < own_question_threshold < 1.0:
            raise ValueError(f"own_question_threshold must lie strictly between 0 and 1, got {own_question_threshold}")
        self.scorer = scorer
        self.method = Method(method)
        #: CDConv's role confusion where it is read off the conversation: the bot asked the user back, got a short
        #: reply, and now contradicts the turn that asked; calibrated on its own, like the intra check
        self.own_question_threshold = float(own_question_threshold)
        self.threshold = float(threshold)
        self.intra_threshold = float(intra_threshold)
        self.embedder = embedder
        self.prefilter_k = prefilter_k
        self.categories = categories
        self.pairing = Pairing(pairing)
        self.role_threshold = role_threshold
        self.max_clauses = max_clauses  # intra pairs grow quadratically; 6 clauses = 15 pairs
        # questions to the other speaker, greetings and thanks assert nothing: paired with nothing
        self.claims_only = claims_only
        self._embeddings: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ public API
    def detect(self, dialogue: Dialogue) -> Verdict:
        """Judge ``dialogue.turns[-1]`` against the turns before it (and the persona)."""
        if not dialogue.turns:
            raise ValueError(f"dialogue {dialogue.record_id!r} has no turns to judge")
        last = dialogue.last
        return self._judge(dialogue.history, [last.text], last.agent_id, dialogue.persona, last.turn_id)[0]

    def detect_candidates(
        self, history: list[Turn], candidates: list[str], speaker: str, persona: Sequence[str] = ()
    ) -> list[Verdict]:
        """Judge each candidate reply of ``speaker``; every candidate's pairs go in one batch."""
        if isinstance(candidates, str):
            raise TypeError("candidates must be a list of strings, not one string")
        next_id = (max(t.turn_id for t in history) + 1) if history else 0
        return self._judge(list(history), list(candidates), speaker, list(persona), next_id)

    def prepare(self, history: Sequence[Turn], persona: Sequence[str] = ()) -> None:
        """Split (and, with a prefilter, embed) a conversation's texts ahead of the next turn.

        Results are cached by text, so an app that calls this when a turn arrives pays only for
        the candidates when it asks for verdicts.
        """
        texts = [t.text for t in history if t.text.strip()] + [p for p in persona if p.strip()]
        textsplit.prepare(texts)
        if self.embedder is not None and self.prefilter_k is not None:
            self._embed([u for t in texts for u in self._units(t)])

    # ------------------------------------------------------------------ internals
    def _units(self, text: str) -> tuple[str, ...]:
        if not text.strip():
            return ()  # an empty candidate has nothing to contradict with
        if self.pairing == Pairing.SENTENCE:
            units = textsplit.sentences(text) or (text,)
            if self.claims_only:  # "What do you do?", "Thanks!": nothing to contradict or be contradicted by
                units = tuple(u for u in units if not textsplit.asserts_nothing(u))
            return units
        return (text,)

    def _clauses(self, text: str) -> tuple[str, ...]:
        """The clauses the intra-sentence check pairs (those that assert something, with ``claims_only``)."""
        found = textsplit.clauses(text)
        if self.claims_only:
            found = tuple(c for c in found if not textsplit.asserts_nothing(c))
        return found

    def _score_pairs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Full softmax for each pair; duplicates scored once, similar lengths batched together."""
        if not pairs:
            return np.zeros((0, self.scorer.layout.num_labels), dtype=np.float32)
        unique = list(dict.fromkeys(pairs))
        order = sorted(range(len(unique)), key=lambda i: len(unique[i][0]) + len(unique[i][1]))
        probs_sorted = self.scorer.predict_proba([unique[i] for i in order])
        probs = np.empty_like(probs_sorted)
        probs[order] = probs_sorted
        index = {pair: i for i, pair in enumerate(unique)}
        return probs[[index[p] for p in pairs]]

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised embeddings, each text encoded once (cached by text)."""
        with cpu_turn(self.embedder):
            missing = [t for t in dict.fromkeys(texts) if t not in self._embeddings]
            if missing:
                if len(self._embeddings) + len(missing) > _EMBED_CACHE_LIMIT:
                    self._embeddings.clear()
                vectors = self.embedder.encode(
                    missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                    show_progress_bar=False,
                )
                self._embeddings.update(zip(missing, vectors))
            return np.stack([self._embeddings[t] for t in texts]) if texts else np.zeros((0, 1))

    def _pair_plan(self, candidate_units: tuple[str, ...], premises: list[_Premise]
                   ) -> list[tuple[_Premise, str, str]]:
        """(premise, premise unit, candidate unit) pairs to score for one candidate.

        Exhaustive: every premise unit with every candidate unit (DECODE pairs every earlier
        utterance). With a prefilter: for each candidate unit, only the ``prefilter_k`` most
        similar premise units (cosine of MiniLM embeddings), so the number of pairs no longer
        grows with the history. With ``pairing="utterance"`` a unit is a whole turn, i.e. the
        ``prefilter_k`` most similar earlier utterances.
        """
        if not candidate_units:  # a reply that asserts nothing ("What about you?") pairs with nothing
            return []
        flat = [(p, u) for p in premises for u in p.units]
        texts = list(dict.fromkeys(u for _, u in flat))  # a sentence said twice is one slot (and one pair) of k
        if self.prefilter_k is None or len(texts) <= self.prefilter_k:
            return [(p, u, cu) for p, u in flat for cu in candidate_units]
        sims = self._embed(texts) @ self._embed(list(candidate_units)).T
        plan = []
        for j, cu in enumerate(candidate_units):
            top = {texts[i] for i in np.argsort(-sims[:, j], kind="stable")[: self.prefilter_k]}
            plan.extend((p, u, cu) for p, u in flat if u in top)
        return plan

    def _judge(self, history: list[Turn], candidates: list[str], speaker: str,
               persona: Sequence[str], own_turn_id: int) -> list[Verdict]:
        for c in candidates:
            if not isinstance(c, str):
                raise TypeError(f"each candidate must be a string, got {type(c).__name__}")
        with cpu_turn(self.scorer):  # sessions and requests sharing the scorer take turns (embedded.turns)
            if self.method == Method.UNSTRUCTURED:
                return self._judge_unstructured(history, candidates, persona, own_turn_id)
            return self._judge_structured(history, candidates, speaker, persona, own_turn_id)

    def _judge_unstructured(self, history: list[Turn], candidates: list[str],
                            persona: Sequence[str], own_turn_id: int) -> list[Verdict]:
        pairs = [(self._flat_context(history, persona, c), c) for c in candidates]
        scores = self._score_pairs(pairs)[:, self.scorer.layout.contradiction] if pairs else []
        verdicts = []
        for (context, cand), s in zip(pairs, scores):
            pair = PairScore(PremiseSource.WHOLE_HISTORY, None, context, cand, float(s))
            hit = float(s) >= self.threshold
            verdicts.append(Verdict(
                contradiction=hit, score=float(s), category=Category.HISTORY if hit else Category.NONE,
                evidence=[], pair_scores=[pair],
                details=VerdictDetails(method=Method.UNSTRUCTURED, turn_id=own_turn_id, threshold=self.threshold,
                                       n_pairs=1, history_score=float(s)),
            ))
        return verdicts

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

    def _judge_structured(self, history: list[Turn], candidates: list[str], speaker: str,
                          persona: Sequence[str], own_turn_id: int) -> list[Verdict]:
        same = [t for t in history if t.agent_id == speaker and t.text.strip()]
        textsplit.prepare([t.text for t in same] + list(persona) + candidates)
        answered = _answered_questions(history)  # "No." to "Do you have kids?" read as "I do not have kids."
        turns = [_Premise(PremiseSource.HISTORY, t.turn_id, t.text,
                          _with_answer(answered.get(t.turn_id), self._units(t.text))) for t in same]
        question = history[-1].text if history and history[-1].agent_id != speaker else None
        asked = asked_back_turn(history, speaker) if self.categories else None
        persona_premises = [_Premise(PremiseSource.PERSONA, i, p, self._units(p))
                            for i, p in enumerate(persona) if p.strip()]
        contra, ent = self.scorer.layout.contradiction, self.scorer.layout.entailment

        # Collect every candidate's pairs, then score them in one batch.
        pairs: list[tuple[str, str]] = []
        plan = []  # per candidate: (history/persona pair slots, intra pair slots, clauses, kept turn ids)
        for cand in candidates:
            answer = resolve_answer(question, cand)
            cand_units = _with_answer(answer, self._units(cand))
            # persona lines are few and always paired; the history is prefiltered
            planned = self._pair_plan(cand_units, turns) + [
                (p, u, cu) for p in persona_premises for u in p.units for cu in cand_units]
            slots = []
            for premise, pu, cu in planned:
                slots.append((premise, pu, cu, len(pairs)))
                pairs.append((pu, cu))
            kept = sorted({p.turn_id for p, _, _ in planned if p.source == PremiseSource.HISTORY})
            intra_slots, clauses = [], ()
            if self.categories:
                # with a resolved particle, the particle's statement against what the reply says after it
                clauses = (_with_answer(answer, self._clauses(after_particle(cand))) if answer
                           else self._clauses(cand))[: self.max_clauses]
                for i in range(len(clauses)):
                    for j in range(i + 1, len(clauses)):
                        intra_slots.append((clauses[i], clauses[j], len(pairs)))
                        pairs.append((clauses[i], clauses[j]))
            plan.append((slots, intra_slots, clauses, kept))
        probs = self._score_pairs(pairs)

        verdicts = []
        for cand, (slots, intra_slots, clauses, kept_ids) in zip(candidates, plan):
            pair_scores = [PairScore(premise.source, premise.turn_id, pu, cu, float(probs[k, contra]))
                           for premise, pu, cu, k in slots]
            best_per_premise: dict[tuple[PremiseSource, int | None], PairScore] = {}
            for ps in pair_scores:
                key = (ps.source, ps.turn_id)
                if key not in best_per_premise or ps.score > best_per_premise[key].score:
                    best_per_premise[key] = ps
            history_score = max((p.score for p in pair_scores), default=0.0)
            history_evidence = sorted(
                (p for p in best_per_premise.values() if p.score >= self.threshold), key=lambda p: -p.score
            )
            details = VerdictDetails(
                method=Method.STRUCTURED, pairing=self.pairing, turn_id=own_turn_id, threshold=self.threshold,
                history_score=history_score, paired_turn_ids=kept_ids, same_speaker_turns=len(turns),
                n_pairs=len(slots) + len(intra_slots),
                # the bot's own statements that support the candidate (used by the role reading)
                bot_entailment=max((float(probs[k, ent]) for _, _, _, k in slots), default=0.0)
                if ent is not None else None,
                own_question_turn=asked,
                own_question_score=max((p.score for p in pair_scores if p.source == PremiseSource.HISTORY
                                        and p.turn_id == asked), default=0.0) if asked is not None else None,
            )
            if self.categories:
                intra_pairs = [PairScore(PremiseSource.INTRA, own_turn_id, a, b, float(probs[k, contra]))
                               for a, b, k in intra_slots]
                details.intra = IntraCheck(clauses=list(clauses), pairs=intra_pairs,
                                           score=max((p.score for p in intra_pairs), default=0.0),
                                           threshold=self.intra_threshold)
            verdicts.append(Verdict(
                contradiction=False, score=history_score, category=Category.NONE,
                evidence=history_evidence, pair_scores=pair_scores, details=details,
            ))
        self._decide_categories(verdicts, history, candidates, speaker)
        return verdicts

    def _decide_categories(self, verdicts: list[Verdict], history: list[Turn],
                           candidates: list[str], speaker: str) -> None:
        """CDConv's order: intra-sentence, then role confusion, then history contradiction.

        Each category is decided at its own threshold: the intra check at ``intra_threshold``, the bot answering the
        question it asked back at ``own_question_threshold``, a history contradiction at τ (and its role reading).
        """
        tau, intra_tau, own_tau = self.threshold, self.intra_threshold, self.own_question_threshold
        role_todo = []
        for i, v in enumerate(verdicts):
            intra = v.details.intra  # None without categories
            intra_fires = intra is not None and intra.score >= intra_tau
            own_score = v.details.own_question_score or 0.0
            own_fires = v.details.own_question_turn is not None and own_score >= own_tau
            # contradiction == a check fired: the score is the history score, or a category check's where it fires
            v.score = max(v.details.history_score, intra.score if intra_fires else 0.0, own_score if own_fires else 0.0)
            if intra_fires:
                intra_evidence = sorted((p for p in intra.pairs if p.score >= intra_tau), key=lambda p: -p.score)
                v.contradiction, v.category = True, Category.INTRA
                v.evidence = intra_evidence + v.evidence
            elif own_fires:
                asked = v.details.own_question_turn
                pair = max((p for p in v.pair_scores if p.source == PremiseSource.HISTORY and p.turn_id == asked),
                           key=lambda p: p.score)
                v.contradiction, v.category = True, Category.ROLE
                v.evidence = [pair] + [p for p in v.evidence if p is not pair and p.turn_id != asked]
                v.details.role = RoleCheck(
                    decided=True, signal="answers-own-question",
                    why=f"it contradicts turn {asked}, which asked the user back, after a short reply: it answers "
                        "its own question as the user would", role_threshold=own_tau)
            elif v.details.history_score >= tau:
                v.contradiction, v.category = True, Category.HISTORY
                if self.categories:
                    role_todo.append(i)
        if role_todo:
            self._role_confusion(verdicts, role_todo, history, candidates, speaker)

    def _role_confusion(self, verdicts: list[Verdict], todo: list[int], history: list[Turn],
                        candidates: list[str], speaker: str) -> None:
        """Role confusion: the contradicting candidate restates the *user's* side as its own.

        Two readings of the sentences that contradict (the evidence's hypotheses), both NLI entailment: as the
        bot's reply (best entailment from the bot's own earlier sentences and persona, already scored) and as the
        user's words (best entailment from the user's earlier claims; questions are no premises). A contradicting
        sentence that the user's own statements entail reads as the user's reply, so CDConv files it as role
        confusion rather than history contradiction; the bot's other sentences about itself do not count.
        """
        ent = self.scorer.layout.entailment
        if ent is None:
            for i in todo:
                verdicts[i].details.role = RoleCheck(decided=False, why="a 2-way checkpoint has no entailment class",
                                                     role_threshold=self.role_threshold)
            return
        others = [t for t in history if t.agent_id != speaker and t.text.strip()]
        textsplit.prepare([t.text for t in others])
        user_premises = [_Premise(PremiseSource.HISTORY, t.turn_id, t.text, self._units(t.text)) for t in others]
        pairs, slots = [], []
        for i in todo:
            contradicting = tuple(dict.fromkeys(p.hypothesis for p in verdicts[i].evidence
                                                if p.source in (PremiseSource.HISTORY, PremiseSource.PERSONA)))
            for premise, pu, cu in self._pair_plan(contradicting or self._units(candidates[i]), user_premises):
                slots.append((i, premise, pu, cu, len(pairs)))
                pairs.append((pu, cu))
        probs = self._score_pairs(pairs)
        best: dict[int, PairScore] = {}
        for i, premise, pu, cu, k in slots:
            s = float(probs[k, ent])
            if i not in best or s > best[i].score:
                best[i] = PairScore(premise.source, premise.turn_id, pu, cu, s)
        for i in todo:
            v = verdicts[i]
            user_reading = best[i].score if i in best else 0.0
            bot_reading = v.details.bot_entailment or 0.0
            is_role = user_reading >= self.role_threshold and user_reading > bot_reading
            v.details.role = RoleCheck(decided=True, user_reading=user_reading, bot_reading=bot_reading,
                                       user_pair=best.get(i), role_threshold=self.role_threshold)
            if is_role:
                v.category = Category.ROLE
