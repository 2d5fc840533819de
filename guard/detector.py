"""Contradiction detectors over any NLI checkpoint, with evidence.

* ``structured`` (DECODE, Nie et al. 2021, eq. 2-3): the candidate is paired with every earlier
  utterance of the same speaker (and the bot's persona lines); the contradiction score is the
  maximum pair probability and the evidence is every turn whose pair score reaches the threshold.
  Pairs are built per sentence on both sides (``pairing="sentence"``) because a long bot reply
  contradicts in one clause and a whole-turn pair dilutes it; ``pairing="utterance"`` keeps
  DECODE's whole-utterance pairs so the two can be compared.
* ``unstructured`` (DECODE's baseline): the whole history with speaker markers against the
  candidate, one pair.

A turn is read in the conversation: a short answer ("Yes, I am." to "Aren't you a teacher?") is paired as the
statement it makes with its question (``guard.answers``), its own words kept beside the reading in the evidence.

The structured detector may run checks beside the history check (``guard.vocabulary.Check``, CDConv's categories,
Zheng et al. 2022, decided in the paper's order): intra-sentence (two clauses of the candidate contradict each
other), the bot answering the question it asked the user back, and the role reading of a history contradiction (it
reads as the user's side of the conversation). Which run is the caller's (``checks``); the chat runs those its
checkpoint's calibration kept (``guard.config.GuardConfig.checks``).

The persona outranks the bot's drift: evidence against an earlier turn that itself contradicted a persona line is
set aside when the candidate agrees with that line (``guard.verdicts.PersonaSide``).

Judging runs in three stages: plan every pair (history, persona, the checks', the drift pairs), score them in one
batch (pairs scored before are taken from a bounded cache), build each verdict once from the scores.

A sentence-transformer ``embedder`` with ``prefilter_k`` bounds the cost of long histories: each
candidate sentence is paired only with the ``prefilter_k`` most similar earlier same-speaker
sentences (whole utterances with ``pairing="utterance"``), so the pairs per turn stay flat.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from embedded.turns import cpu_turn
from guard import text as textsplit
from guard.answers import Reading, affirmative, after_particle, read_answer, says_nothing
from guard.config import GuardConfig
from guard.nli import NLIScorer
from guard.records import Dialogue, Turn
from guard.verdicts import IntraCheck, PairScore, PersonaSide, RoleCheck, Verdict, VerdictDetails
from guard.vocabulary import CHECKS, METHODS, PAIRINGS, Category, Check, Method, Pairing, PremiseSource

_EMBED_CACHE_LIMIT = 50_000
#: scored pairs kept per scorer: a conversation pairs the same persona lines and earlier sentences every turn
PAIR_CACHE_LIMIT = 20_000
#: P(entailment) from a persona line at which a candidate agrees with it (the persona outranks the bot's drift)
PERSONA_AGREEMENT = 0.5
_YOU = re.compile(r"\b(?:you|your|yours|yourself|u)\b", re.IGNORECASE)


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


def resolve_checks(categories: bool | Collection[Check | str] | None, default: Collection[Check] = CHECKS
                   ) -> frozenset[Check]:
    """The checks a detector runs: all of them (True), none (False), those named, or ``default`` (None)."""
    if categories is None:
        return frozenset(default)
    if isinstance(categories, bool):
        return frozenset(CHECKS) if categories else frozenset()
    unknown = [c for c in categories if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown check(s) {unknown}; choose among {', '.join(CHECKS)}")
    return frozenset(Check(c) for c in categories)


def question_before(history: Sequence[Turn], speaker: str) -> str | None:
    """The other speaker's turn right before ``speaker``'s next one (what a reply answers), or None."""
    return history[-1].text if history and history[-1].agent_id != speaker else None


@dataclass(frozen=True)
class Unit:
    """A piece of a turn as it is paired: ``text`` is what the model reads, ``said`` the turn's own words it stands
    for (the same text, or the answer whose reading ``text`` is)."""

    text: str
    said: str

    @property
    def reading(self) -> str:
        return self.text if self.text != self.said else ""


@dataclass
class _Premise:
    source: PremiseSource
    turn_id: int
    text: str
    units: tuple[Unit, ...]


@dataclass
class _Slot:
    """One planned pair: its premise, the two units, the pair's row in the scored batch and, when one side denies
    what the other does not, the row of the pair that asks whether the other side entails the denied statement
    (``denial_support``)."""

    premise: _Premise
    unit: Unit
    candidate_unit: Unit
    row: int
    support: int | None = None


def denial_support(premise: str, hypothesis: str) -> tuple[str, str] | None:
    """The pair with the denial replaced by what it denies, or None when neither or both sides deny.

    "I'm not a teacher." contradicts "I work as a nurse." only if the statement agrees with "I'm a teacher."; a
    statement that clashes with the denial *and* with what it denies just talks of something else. An NLI model
    trained on DECODE's negation-heavy contradictions scores nearly any denial against any statement as a clash
    (v4: "I work as a nurse." / "I am not a teacher." 0.99), so a denial's contradiction score is capped by how much
    the other side agrees with the affirmation: 1 - P(contradiction) of this pair (``ContradictionDetector``)."""
    denied_h, denied_p = affirmative(hypothesis), affirmative(premise)
    if denied_h and not denied_p:
        return premise, denied_h
    if denied_p and not denied_h:
        return denied_p, hypothesis
    return None


@dataclass
class _CandidatePlan:
    """Everything planned for one candidate reply before any pair is scored."""

    text: str
    reading: Reading | None
    units: tuple[Unit, ...]
    slots: list[_Slot]
    kept_turns: list[int]
    clauses: tuple[str, ...] = ()
    intra: list[_Slot] = field(default_factory=list)
    role: list[_Slot] = field(default_factory=list)


@dataclass
class _Plan:
    """Every pair a judgement needs, planned at once so they are scored in one batch."""

    pairs: list[tuple[str, str]]
    candidates: list[_CandidatePlan]
    same_speaker: list[_Premise]
    asked: int | None
    #: (earlier turn premise, its unit, persona premise, persona unit, slot): did that turn contradict the persona?
    drift: list[tuple[_Premise, Unit, _Premise, Unit, _Slot]]

    def add(self, premise: str, hypothesis: str) -> int:
        self.pairs.append((premise, hypothesis))
        return len(self.pairs) - 1

    def slot(self, premise: _Premise, unit: Unit, candidate_unit: Unit) -> _Slot:
        """A contradiction pair, with its denial's support pair where one side denies (``denial_support``)."""
        support = denial_support(unit.text, candidate_unit.text)
        return _Slot(premise, unit, candidate_unit, self.add(unit.text, candidate_unit.text),
                     None if support is None else self.add(*support))


#: scorer -> (premise, hypothesis) -> probabilities; shared by every detector over one scorer (they take turns on it)
_PAIR_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PAIR_CACHES_LOCK = threading.Lock()


def pair_cache(scorer) -> OrderedDict:
    """The bounded cache of scored pairs kept for ``scorer`` (cleared by ``clear_pair_cache``)."""
    with _PAIR_CACHES_LOCK:
        try:
            return _PAIR_CACHES.setdefault(scorer, OrderedDict())
        except TypeError:  # a scorer that cannot be weakly referenced: no cache
            return OrderedDict()


def clear_pair_cache(scorer=None) -> None:
    """Forget scored pairs (of one scorer, or of all): benchmarks time a turn as if its pairs were new."""
    with _PAIR_CACHES_LOCK:
        for key in [scorer] if scorer is not None else list(_PAIR_CACHES.keys()):
            if key in _PAIR_CACHES:
                _PAIR_CACHES[key].clear()


class ContradictionDetector:
    """Detects whether a (candidate) utterance contradicts what its speaker said before."""

    def __init__(
        self,
        scorer: NLIScorer,
        method: Method | str = Method.STRUCTURED,
        threshold: float | None = None,
        embedder=None,
        prefilter_k: int | None = None,
        categories: bool | Collection[Check | str] | None = True,
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
        self.checks = resolve_checks(categories, config.checks)
        self.pairing = Pairing(pairing)
        self.role_threshold = role_threshold
        self.max_clauses = max_clauses  # intra pairs grow quadratically; 6 clauses = 15 pairs
        # questions to the other speaker, greetings and thanks assert nothing: paired with nothing
        self.claims_only = claims_only
        self._embeddings: dict[str, np.ndarray] = {}

    @property
    def categories(self) -> bool:
        """Whether any check runs beside the history check."""
        return bool(self.checks)

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
            self._embed([u.text for t in texts for u in self._units(t)])

    # ------------------------------------------------------------------ units and pairs
    def _units(self, text: str, reading: Reading | None = None) -> tuple[Unit, ...]:
        """The pieces of a turn that are paired: its sentences (those that claim something, with ``claims_only``),
        and first the statement its answer makes when it is read with a question."""
        if not text.strip():
            return ()  # an empty candidate has nothing to contradict with
        if self.pairing == Pairing.SENTENCE:
            pieces = textsplit.sentences(text) or (text,)
            if self.claims_only:  # "What do you do?", "Thanks!": nothing to contradict or be contradicted by
                pieces = tuple(u for u in pieces if not textsplit.asserts_nothing(u))
        else:
            pieces = (text,)
        units = tuple(Unit(p, p) for p in pieces)
        if reading is not None and reading.statement not in pieces:
            said = reading.answer if self.pairing == Pairing.SENTENCE else text
            units = (Unit(reading.statement, said), *units)
        return units

    def _clauses(self, text: str) -> tuple[str, ...]:
        """The clauses the intra-sentence check pairs (those that assert something, with ``claims_only``)."""
        found = textsplit.clauses(text)
        if self.claims_only:
            found = tuple(c for c in found if not textsplit.asserts_nothing(c))
        return found

    def _score_pairs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Full softmax for each pair: pairs scored before come from the scorer's cache, the rest are scored once
        each, similar lengths batched together."""
        width = self.scorer.layout.num_labels
        if not pairs:
            return np.zeros((0, width), dtype=np.float32)
        cache = pair_cache(self.scorer)
        found: dict[tuple[str, str], np.ndarray] = {}
        for pair in dict.fromkeys(pairs):
            if pair in cache:
                cache.move_to_end(pair)  # least recently used leaves first
                found[pair] = cache[pair]
        missing = [p for p in dict.fromkeys(pairs) if p not in found]
        if missing:
            order = sorted(range(len(missing)), key=lambda i: len(missing[i][0]) + len(missing[i][1]))
            scored = self.scorer.predict_proba([missing[i] for i in order])
            for i, row in zip(order, scored):
                found[missing[i]] = cache[missing[i]] = np.asarray(row, dtype=np.float32)
            while len(cache) > PAIR_CACHE_LIMIT:
                cache.popitem(last=False)
        return np.stack([found[p] for p in pairs]).reshape(len(pairs), width)

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

    def _pair_plan(self, candidate_units: tuple[Unit, ...], premises: list[_Premise]
                   ) -> list[tuple[_Premise, Unit, Unit]]:
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
        texts = list(dict.fromkeys(u.text for _, u in flat))  # a sentence said twice is one slot (and one pair) of k
        if self.prefilter_k is None or len(texts) <= self.prefilter_k:
            return [(p, u, cu) for p, u in flat for cu in candidate_units]
        sims = self._embed(texts) @ self._embed([cu.text for cu in candidate_units]).T
        plan = []
        for j, cu in enumerate(candidate_units):
            top = {texts[i] for i in np.argsort(-sims[:, j], kind="stable")[: self.prefilter_k]}
            plan.extend((p, u, cu) for p, u in flat if u.text in top)
        return plan

    # ------------------------------------------------------------------ judging
    def _judge(self, history: list[Turn], candidates: list[str], speaker: str,
               persona: Sequence[str], own_turn_id: int) -> list[Verdict]:
        for c in candidates:
            if not isinstance(c, str):
                raise TypeError(f"each candidate must be a string, got {type(c).__name__}")
        with cpu_turn(self.scorer):  # sessions and requests sharing the scorer take turns (embedded.turns)
            if self.method == Method.UNSTRUCTURED:
                return self._judge_unstructured(history, candidates, persona, own_turn_id)
            plan = self._plan(history, candidates, speaker, persona)
            probs = self._score_pairs(plan.pairs)
            return [self._verdict(c, plan, probs, own_turn_id) for c in plan.candidates]

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

    def _plan(self, history: list[Turn], candidates: list[str], speaker: str, persona: Sequence[str]) -> _Plan:
        """Stage 1: every pair the verdicts need, nothing scored yet.

        Each candidate is paired with the persona lines, with the prefilter's choice of its speaker's earlier
        sentences (and always with the turn that asked the user back, for that check), and, with the checks on,
        its clauses with each other and its sentences with the user's statements (the role reading). The drift
        pairs ask whether the earlier turns a candidate is paired with contradicted the persona themselves."""
        same = [t for t in history if t.agent_id == speaker and t.text.strip()]
        textsplit.prepare([t.text for t in history] + list(persona) + candidates)
        before = {t.turn_id: prev for prev, t in zip(history, history[1:]) if prev.agent_id != t.agent_id}
        premises = [_Premise(PremiseSource.HISTORY, t.turn_id, t.text,
                             self._units(t.text, read_answer(before[t.turn_id].text, t.text)
                                         if t.turn_id in before else None)) for t in same]
        persona_premises = [_Premise(PremiseSource.PERSONA, i, p, self._units(p)) for i, p in enumerate(persona)
                            if p.strip()]
        asked = asked_back_turn(history, speaker) if Check.OWN_QUESTION in self.checks else None
        question = question_before(history, speaker)
        user_premises = []
        if Check.ROLE in self.checks:
            others = [t for t in history if t.agent_id != speaker and t.text.strip()]
            user_premises = [_Premise(PremiseSource.HISTORY, t.turn_id, t.text, self._units(t.text)) for t in others]
        plan = _Plan([], [], premises, asked, [])
        for cand in candidates:
            reading = read_answer(question, cand)
            units = self._units(cand, reading)
            planned = self._pair_plan(units, premises)
            always = [p for p in premises if p.turn_id == asked] + persona_premises
            planned += [(p, u, cu) for p in always for u in p.units for cu in units
                        if not any(q is p and qu == u and qcu == cu for q, qu, qcu in planned)]
            slots = [plan.slot(p, u, cu) for p, u, cu in planned]
            kept = sorted({s.premise.turn_id for s in slots if s.premise.source == PremiseSource.HISTORY})
            cplan = _CandidatePlan(cand, reading, units, slots, kept)
            if Check.INTRA in self.checks:
                # with a reading, the answer's statement against what the reply says after its particle
                rest = self._clauses(after_particle(cand)) if reading else self._clauses(cand)
                cplan.clauses = ((reading.statement, *rest) if reading else rest)[: self.max_clauses]
                intra = _Premise(PremiseSource.INTRA, -1, cand, ())
                cplan.intra = [plan.slot(intra, Unit(a, a), Unit(b, b)) for i, a in enumerate(cplan.clauses)
                               for b in cplan.clauses[i + 1:]]
            if user_premises:
                cplan.role = [_Slot(p, u, cu, plan.add(u.text, cu.text))
                              for p, u, cu in self._pair_plan(units, user_premises)]
            plan.candidates.append(cplan)
        if persona_premises:  # did an earlier turn a candidate is paired with contradict the persona itself?
            paired = {s.premise.turn_id for c in plan.candidates for s in c.slots
                      if s.premise.source == PremiseSource.HISTORY}
            for premise in premises:
                if premise.turn_id in paired:
                    plan.drift.extend((premise, u, pp, pu, plan.slot(pp, pu, u))
                                      for u in premise.units for pp in persona_premises for pu in pp.units)
        return plan

    def _verdict(self, cand: _CandidatePlan, plan: _Plan, probs: np.ndarray, own_turn_id: int) -> Verdict:
        """Stage 3: one candidate's verdict, built once from the scored batch (nothing edits it afterwards)."""
        ent = self.scorer.layout.entailment
        tau = self.threshold

        def pair(slot: _Slot) -> PairScore:
            return PairScore(slot.premise.source, slot.premise.turn_id, slot.unit.said, slot.candidate_unit.said,
                             self._contradiction(slot, probs), slot.unit.reading, slot.candidate_unit.reading)

        pair_scores = [pair(s) for s in cand.slots]
        sides = self._persona_sides(cand, plan, probs, pair_scores)
        set_aside = {id(side.pair) for side in sides}
        standing = [p for p in pair_scores if id(p) not in set_aside]
        best: dict[tuple[PremiseSource, int | None], PairScore] = {}
        for ps in standing:
            key = (ps.source, ps.turn_id)
            if key not in best or ps.score > best[key].score:
                best[key] = ps
        history_score = max((p.score for p in standing), default=0.0)
        evidence = sorted((p for p in best.values() if p.score >= tau), key=lambda p: -p.score)

        intra = None
        if Check.INTRA in self.checks:
            intra_pairs = [PairScore(PremiseSource.INTRA, own_turn_id, s.unit.text, s.candidate_unit.text,
                                     self._contradiction(s, probs)) for s in cand.intra]
            intra = IntraCheck(clauses=list(cand.clauses), pairs=intra_pairs,
                               score=max((p.score for p in intra_pairs), default=0.0), threshold=self.intra_threshold)
        asked = plan.asked
        asked_pairs = [p for p in standing if p.source == PremiseSource.HISTORY and p.turn_id == asked]
        own_score = max((p.score for p in asked_pairs), default=0.0) if asked is not None else None
        details = VerdictDetails(
            method=Method.STRUCTURED, pairing=self.pairing, turn_id=own_turn_id, threshold=tau,
            history_score=history_score, paired_turn_ids=cand.kept_turns, same_speaker_turns=len(plan.same_speaker),
            n_pairs=len(cand.slots) + len(cand.intra) + len(cand.role),
            # the speaker's own statements that support the candidate (the role reading's "own words" side)
            bot_entailment=max((float(probs[s.row, ent]) for s in cand.slots), default=0.0) if ent is not None else None,
            intra=intra, own_question_turn=asked, own_question_score=own_score,
            checks=sorted(str(c) for c in self.checks),
            answer_reading=cand.reading.statement if cand.reading else "",
            answer_kind=str(cand.reading.kind) if cand.reading else "",
            says_nothing=says_nothing(cand.text, cand.reading), persona_sides=sides,
        )
        intra_fires = intra is not None and intra.score >= self.intra_threshold
        own_fires = asked is not None and own_score >= self.own_question_threshold
        score = max(history_score, intra.score if intra_fires else 0.0, own_score if own_fires else 0.0)
        if intra_fires:
            intra_evidence = sorted((p for p in intra.pairs if p.score >= self.intra_threshold), key=lambda p: -p.score)
            return Verdict(True, score, Category.INTRA, intra_evidence + evidence, pair_scores, details)
        if own_fires:
            top = max(asked_pairs, key=lambda p: p.score)
            details.role = RoleCheck(
                decided=True, signal="answers-own-question",
                why=f"it contradicts turn {asked}, which asked the user back, after a short reply: it answers "
                    "its own question as the user would", role_threshold=self.own_question_threshold)
            return Verdict(True, score, Category.ROLE, [top] + [p for p in evidence if p.turn_id != asked
                                                                or p.source != PremiseSource.HISTORY],
                           pair_scores, details)
        if history_score < tau:
            return Verdict(False, score, Category.NONE, evidence, pair_scores, details)
        category = Category.HISTORY
        if Check.ROLE in self.checks:
            details.role = self._role_reading(cand, probs, evidence, details.bot_entailment or 0.0)
            if details.role.decided and details.role.user_reading >= self.role_threshold \
                    and details.role.user_reading > details.role.bot_reading:
                category = Category.ROLE
        return Verdict(True, score, category, evidence, pair_scores, details)

    def _contradiction(self, slot: _Slot, probs: np.ndarray) -> float:
        """A planned pair's contradiction score: the model's, capped for a denial by how far the other side agrees
        with what the denial denies (``denial_support``: 1 - P(contradiction) of the pair with the denial affirmed)."""
        contra = self.scorer.layout.contradiction
        score = float(probs[slot.row, contra])
        if slot.support is None:
            return score
        return min(score, 1.0 - float(probs[slot.support, contra]))

    def _role_reading(self, cand: _CandidatePlan, probs: np.ndarray, evidence: list[PairScore],
                      bot_reading: float) -> RoleCheck:
        """Role confusion: the contradicting sentences restate the *user's* side as the bot's own.

        Two readings of the sentences that contradict (the evidence's hypotheses), both NLI entailment: as the
        bot's reply (best entailment from the bot's own earlier sentences and persona) and as the user's words
        (best entailment from the user's earlier claims; questions are no premises). A contradicting sentence that
        the user's own statements entail reads as the user's reply, so CDConv files it as role confusion rather
        than history contradiction; the bot's other sentences about itself do not count.
        """
        ent = self.scorer.layout.entailment
        if ent is None:
            return RoleCheck(decided=False, why="a 2-way checkpoint has no entailment class",
                             role_threshold=self.role_threshold)
        contradicting = {p.hypothesis for p in evidence if p.source in (PremiseSource.HISTORY, PremiseSource.PERSONA)}
        slots = [s for s in cand.role if s.candidate_unit.said in contradicting] or cand.role
        best = max(slots, key=lambda s: probs[s.row, ent], default=None)
        user_pair = None if best is None else PairScore(best.premise.source, best.premise.turn_id, best.unit.said,
                                                        best.candidate_unit.said, float(probs[best.row, ent]),
                                                        best.unit.reading, best.candidate_unit.reading)
        return RoleCheck(decided=True, user_reading=user_pair.score if user_pair else 0.0, bot_reading=bot_reading,
                         user_pair=user_pair, role_threshold=self.role_threshold)

    def _persona_sides(self, cand: _CandidatePlan, plan: _Plan, probs: np.ndarray,
                       pair_scores: list[PairScore]) -> list[PersonaSide]:
        """The evidence pairs to set aside: against an earlier turn that contradicted a persona line (at τ) when
        this candidate agrees with that line (P(entailment) ≥ ``PERSONA_AGREEMENT`` for one of its units)."""
        ent = self.scorer.layout.entailment
        if ent is None or not plan.drift:
            return []
        drifted: dict[int, PairScore] = {}  # earlier turn -> its strongest pair against a persona line
        for premise, unit, pp, pu, slot in plan.drift:
            score = self._contradiction(slot, probs)
            if score >= self.threshold and (premise.turn_id not in drifted or score > drifted[premise.turn_id].score):
                drifted[premise.turn_id] = PairScore(PremiseSource.PERSONA, pp.turn_id, pu.said, unit.said, score,
                                                     pu.reading, unit.reading)
        if not drifted:
            return []
        agreement: dict[int, float] = {}  # persona line -> the candidate's best entailment from it
        for slot in cand.slots:
            if slot.premise.source == PremiseSource.PERSONA:
                line = slot.premise.turn_id
                agreement[line] = max(agreement.get(line, 0.0), float(probs[slot.row, ent]))
        sides = []
        for ps in pair_scores:
            drift = drifted.get(ps.turn_id) if ps.source == PremiseSource.HISTORY else None
            if drift is None or ps.score < self.threshold:
                continue
            agrees = agreement.get(drift.turn_id, 0.0)
            if agrees >= PERSONA_AGREEMENT:
                sides.append(PersonaSide(turn_id=ps.turn_id, persona_line=drift.turn_id, drift=drift,
                                         agreement=agrees, pair=ps))
        return sides
