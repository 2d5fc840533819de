"""Stage 1 of a judgement: every pair the verdicts need, planned before anything is scored.

Each candidate is paired with the persona lines, with the prefilter's choice of its speaker's earlier sentences
(and always with the turn that asked the user back, for that check), and, with the checks on, its clauses with
each other and its sentences with the user's statements (the role reading). The drift pairs ask whether the earlier
turns a candidate is paired with contradicted the persona themselves. Every pair goes into one batch
(``PairBatch``) so the scorer sees them at once; the plan itself is frozen once made.

A sentence-transformer embedder with the settings' ``prefilter_k`` bounds the cost of long histories: each
candidate sentence is paired only with the ``prefilter_k`` most similar earlier same-speaker sentences (whole
utterances with ``pairing="utterance"``), so the pairs per turn stay flat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from guard.config import JudgeSettings
from guard.language import grammar
from guard.language import text as textsplit
from guard.language.answers import Reading, read_answer
from guard.language.exchange import Unit, asked_back_turn, both_denied, denial_support, question_before
from guard.language.fact_sheet import FactClash, persona_agreements, read_facts, sheet_of
from guard.language.grammar import after_particle
from guard.models.pair_cache import embed
from guard.records import Turn
from guard.vocabulary import Check, Pairing, PremiseSource

#: clauses of one candidate the intra check pairs: the pairs grow quadratically (6 clauses = 15 pairs)
MAX_CLAUSES = 6


@dataclass(frozen=True)
class Premise:
    """Something a candidate is paired with: an earlier turn, a persona line, or the candidate itself (intra)."""

    source: PremiseSource
    turn_id: int
    text: str
    units: tuple[Unit, ...]


@dataclass(frozen=True)
class Slot:
    """One planned pair: its premise, the two units, the pair's row in the scored batch and, when one side denies
    what the other does not, the row of the pair that asks whether the other side entails the denied statement
    (``guard.language.exchange.denial_support``)."""

    premise: Premise
    unit: Unit
    candidate_unit: Unit
    row: int
    support: int | None = None
    #: both sides deny: the row of the pair of what each denies (``guard.language.exchange.both_denied``)
    affirmed: int | None = None


@dataclass(frozen=True)
class DriftPair:
    """Did an earlier turn (``premise``, through ``unit``) contradict a persona line (``persona``, through
    ``persona_unit``)? ``slot`` is that pair, the persona line as premise."""

    premise: Premise
    unit: Unit
    persona: Premise
    persona_unit: Unit
    slot: Slot


@dataclass(frozen=True)
class CandidatePlan:
    """Everything planned for one candidate reply before any pair is scored."""

    text: str
    reading: Reading | None
    units: tuple[Unit, ...]
    slots: tuple[Slot, ...]
    kept_turns: tuple[int, ...]
    clauses: tuple[str, ...] = ()
    intra: tuple[Slot, ...] = ()
    role: tuple[Slot, ...] = ()
    #: the fact sheet's clashes with this candidate (the facts check; no pair to score)
    fact_clashes: tuple[FactClash, ...] = ()
    #: the persona facts it states again: (persona line, the candidate's sentence that states it) (the facts check)
    persona_facts: tuple[tuple[int, str], ...] = ()


def same_time(a: str, b: str) -> bool:
    """Whether two clauses can clash in time: not the past or a wish beside the present ("I used to live in Rome,
    I live in Oslo now", "I don't have a dog, I'd love one someday"), told by their words ("used to", "originally",
    "one day", "I'd love to"), not by a past tense alone: "I'm 30, I just turned 45." still clashes."""
    return grammar.time_of(a, tense=False) == grammar.time_of(b, tense=False)


@dataclass(frozen=True)
class TurnPlan:
    """Every pair a judgement needs (``pairs``, scored in one batch) and what each candidate's verdict reads."""

    pairs: tuple[tuple[str, str], ...]
    candidates: tuple[CandidatePlan, ...]
    same_speaker: tuple[Premise, ...]
    asked: int | None
    drift: tuple[DriftPair, ...]
    #: the other speaker's message the candidates answer (None: the turn before is the speaker's own, or none)
    question: str | None = None


class PairBatch:
    """The pairs of one judgement as they are planned: each added once to the batch, its row kept."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def add(self, premise: str, hypothesis: str) -> int:
        self.pairs.append((premise, hypothesis))
        return len(self.pairs) - 1

    def slot(self, premise: Premise, unit: Unit, candidate_unit: Unit) -> Slot:
        """A contradiction pair, with its denial's support pair where one side denies (``denial_support``), or the
        pair of both affirmations where both deny (``both_denied``)."""
        support = denial_support(unit.text, candidate_unit.text)
        affirmed = None if support is not None else both_denied(unit.text, candidate_unit.text)
        return Slot(premise, unit, candidate_unit, self.add(unit.text, candidate_unit.text),
                    None if support is None else self.add(*support),
                    None if affirmed is None else self.add(*affirmed))


def units_of(text: str, pairing: Pairing, reading: Reading | None = None, claims_only: bool = True
             ) -> tuple[Unit, ...]:
    """The pieces of a turn that are paired: its sentences (those that claim something, with ``claims_only``:
    "What do you do?", "Thanks!" have nothing to contradict or be contradicted by), and first the statement its
    answer makes when it is read with a question."""
    if not text.strip():
        return ()  # an empty candidate has nothing to contradict with
    if pairing == Pairing.SENTENCE:
        pieces = textsplit.sentences(text) or (text,)
        if claims_only:
            pieces = tuple(u for u in pieces if not textsplit.asserts_nothing(u))
    else:
        pieces = (text,)
    units = tuple(Unit(p, p) for p in pieces)
    if reading is not None and reading.statement not in pieces:
        said = reading.answer if pairing == Pairing.SENTENCE else text
        units = (Unit(reading.statement, said), *units)
    return units


def clauses_of(text: str, claims_only: bool = True) -> tuple[str, ...]:
    """The clauses the intra-sentence check pairs (those that assert something, with ``claims_only``)."""
    found = textsplit.clauses(text)
    if claims_only:
        found = tuple(c for c in found if not textsplit.asserts_nothing(c))
    return found


def paired_with(candidate_units: tuple[Unit, ...], premises: Sequence[Premise], settings: JudgeSettings,
                embedder) -> list[tuple[Premise, Unit, Unit]]:
    """(premise, premise unit, candidate unit) pairs to score for one candidate.

    Exhaustive: every premise unit with every candidate unit (DECODE pairs every earlier utterance). With a
    prefilter: for each candidate unit, only the ``prefilter_k`` most similar premise units (cosine of MiniLM
    embeddings), so the number of pairs no longer grows with the history."""
    if not candidate_units:  # a reply that asserts nothing ("What about you?") pairs with nothing
        return []
    flat = [(p, u) for p in premises for u in p.units]
    texts = list(dict.fromkeys(u.text for _, u in flat))  # a sentence said twice is one slot (and one pair) of k
    k = settings.prefilter_k
    if k is None or len(texts) <= k:
        return [(p, u, cu) for p, u in flat for cu in candidate_units]
    sims = embed(embedder, texts) @ embed(embedder, [cu.text for cu in candidate_units]).T
    plan = []
    for j, cu in enumerate(candidate_units):
        top = {texts[i] for i in np.argsort(-sims[:, j], kind="stable")[:k]}
        plan.extend((p, u, cu) for p, u in flat if u.text in top)
    return plan


def plan_turn(history: Sequence[Turn], candidates: Sequence[str], speaker: str, persona: Sequence[str],
              settings: JudgeSettings, embedder=None, claims_only: bool = True) -> TurnPlan:
    """Every pair the verdicts on ``candidates`` need (module docstring), nothing scored yet."""
    if settings.prefilter_k is not None and embedder is None:
        raise ValueError("the prefilter needs an embedder (guard.models.loading.load_embedder())")
    pairing = settings.pairing
    same = [t for t in history if t.agent_id == speaker and t.text.strip()]
    textsplit.prepare([t.text for t in history] + list(persona) + list(candidates))
    before = {t.turn_id: prev for prev, t in zip(history, history[1:]) if prev.agent_id != t.agent_id}
    premises = [Premise(PremiseSource.HISTORY, t.turn_id, t.text,
                        units_of(t.text, pairing, read_answer(before[t.turn_id].text, t.text)
                                 if t.turn_id in before else None, claims_only)) for t in same]
    persona_premises = [Premise(PremiseSource.PERSONA, i, p, units_of(p, pairing, None, claims_only))
                        for i, p in enumerate(persona) if p.strip()]
    asked = asked_back_turn(history, speaker) if Check.OWN_QUESTION in settings.checks else None
    question = question_before(history, speaker)
    user_premises = []
    if Check.ROLE in settings.checks:
        others = [t for t in history if t.agent_id != speaker and t.text.strip()]
        user_premises = [Premise(PremiseSource.HISTORY, t.turn_id, t.text, units_of(t.text, pairing, None,
                                                                                     claims_only)) for t in others]
    sheet = sheet_of(history, persona, speaker) if Check.FACTS in settings.checks else None
    batch = PairBatch()
    planned_candidates = []
    for cand in candidates:
        reading = read_answer(question, cand)
        units = units_of(cand, pairing, reading, claims_only)
        planned = paired_with(units, premises, settings, embedder)
        always = [p for p in premises if p.turn_id == asked] + persona_premises
        planned += [(p, u, cu) for p in always for u in p.units for cu in units
                    if not any(q is p and qu == u and qcu == cu for q, qu, qcu in planned)]
        slots = tuple(batch.slot(p, u, cu) for p, u, cu in planned)
        kept = tuple(sorted({s.premise.turn_id for s in slots if s.premise.source == PremiseSource.HISTORY}))
        clauses: tuple[str, ...] = ()
        intra: tuple[Slot, ...] = ()
        if Check.INTRA in settings.checks:
            # with a reading, the answer's statement against what the reply says after its particle
            rest = clauses_of(after_particle(cand), claims_only) if reading else clauses_of(cand, claims_only)
            clauses = ((reading.statement, *rest) if reading else rest)[:MAX_CLAUSES]
            itself = Premise(PremiseSource.INTRA, -1, cand, ())
            intra = tuple(batch.slot(itself, Unit(a, a), Unit(b, b)) for i, a in enumerate(clauses)
                          for b in clauses[i + 1:] if same_time(a, b))
        role = tuple(Slot(p, u, cu, batch.add(u.text, cu.text))
                     for p, u, cu in paired_with(units, user_premises, settings, embedder)) if user_premises else ()
        # read with the question, as the sheet reads an earlier turn ("How many kids?" "One son.": the whole count)
        said = () if sheet is None else read_facts(cand, PremiseSource.HISTORY, -1,
                                                     reading.statement if reading else None, question)
        clashes = () if sheet is None else sheet.clashes(said)
        agrees = () if sheet is None else tuple(dict.fromkeys((old.turn_id, new.said)
                                                             for old, new in persona_agreements(sheet, said)))
        planned_candidates.append(CandidatePlan(cand, reading, units, slots, kept, clauses, intra, role, clashes,
                                                agrees))
    drift: list[DriftPair] = []
    if persona_premises:  # did an earlier turn a candidate is paired with contradict the persona itself?
        paired = {s.premise.turn_id for c in planned_candidates for s in c.slots
                  if s.premise.source == PremiseSource.HISTORY}
        for premise in premises:
            if premise.turn_id in paired:
                drift.extend(DriftPair(premise, u, pp, pu, batch.slot(pp, pu, u))
                             for u in premise.units for pp in persona_premises for pu in pp.units)
    return TurnPlan(tuple(batch.pairs), tuple(planned_candidates), tuple(premises), asked, tuple(drift), question)
