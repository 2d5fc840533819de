"""Stage 3 of a judgement: each candidate's verdict, built once from the scored batch, frozen when built.

The structured verdict (DECODE, Nie et al. 2021, eq. 2-3): the candidate's score is its best pair against its
speaker's earlier sentences and persona lines, its evidence every earlier turn or line whose best pair reaches τ.
Beside it the checks the settings run (CDConv's categories, Zheng et al. 2022, decided in the paper's order):
intra-sentence (two clauses of the candidate contradict each other, at their own threshold), the bot answering the
question it asked the user back (its own threshold), and the role reading of a history contradiction (it reads as
the user's side of the conversation). The persona outranks the bot's drift: evidence against an earlier turn that
itself contradicted a persona line is set aside when the candidate agrees with that line, and so is a pair through
a sentence of the candidate the persona supports (a line entails it at τ_e, or it states a persona fact): the
earlier turn that contradicts such a sentence went against the persona (``PersonaSide``).
The unstructured verdict (DECODE's baseline) rests on its one whole-history pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from guard.config import FACT_LINE, JudgeSettings
from guard.judge.planning import CandidatePlan, Slot, TurnPlan
from guard.judge.verdicts import IntraCheck, PairScore, PersonaSide, RoleCheck, Verdict, VerdictDetails
from guard.language.answers import answer_check, says_nothing
from guard.language.fact_sheet import FactClash
from guard.vocabulary import Category, Check, Method, PremiseSource

#: P(entailment) from a persona line at which a candidate agrees with it (the persona outranks the bot's drift)
PERSONA_AGREEMENT = 0.5
#: the role reading: the user's words entail the contradicting sentences at least this much, and more than the bot's
ROLE_THRESHOLD = 0.5


def contradiction(slot: Slot, probs: np.ndarray, layout) -> float:
    """A planned pair's contradiction score: the model's, capped for a denial by how far the other side agrees with
    what the denial denies (``guard.language.exchange.denial_support``: 1 - P(contradiction) of the pair with the denial
    affirmed), and for two denials by how far what they deny contradicts (``both_denied``: P(contradiction) of the
    pair of affirmations)."""
    score = float(probs[slot.row, layout.contradiction])
    if slot.support is not None:
        return min(score, 1.0 - float(probs[slot.support, layout.contradiction]))
    if slot.affirmed is not None:
        return min(score, float(probs[slot.affirmed, layout.contradiction]))
    return score


def _pair(slot: Slot, score: float) -> PairScore:
    return PairScore(slot.premise.source, slot.premise.turn_id, slot.unit.said, slot.candidate_unit.said, score,
                     slot.unit.reading, slot.candidate_unit.reading)


def structured_verdict(cand: CandidatePlan, plan: TurnPlan, probs: np.ndarray, layout, settings: JudgeSettings,
                       turn_id: int) -> Verdict:
    """One candidate's verdict from the scored batch (module docstring)."""
    ent = layout.entailment
    tau = settings.threshold
    pair_scores = tuple(_pair(s, contradiction(s, probs, layout)) for s in cand.slots)
    support = persona_support(cand, probs, layout, settings.persona_support)
    sides = persona_sides(cand, plan, probs, pair_scores, layout, tau, support)
    restated = tuple(p for p in pair_scores if p.source == PremiseSource.PERSONA and p.score >= tau
                     and (p.turn_id, p.hypothesis) in cand.persona_facts)
    set_aside = {id(side.pair) for side in sides} | {id(p) for p in restated}
    standing = [p for p in pair_scores if id(p) not in set_aside]
    best: dict[tuple[PremiseSource, int | None], PairScore] = {}
    for ps in standing:
        key = (ps.source, ps.turn_id)
        if key not in best or ps.score > best[key].score:
            best[key] = ps
    history_score = max((p.score for p in standing), default=0.0)
    evidence = tuple(sorted((p for p in best.values() if p.score >= tau), key=lambda p: -p.score))

    intra = None
    if Check.INTRA in settings.checks:
        intra_pairs = tuple(PairScore(PremiseSource.INTRA, turn_id, s.unit.text, s.candidate_unit.text,
                                      contradiction(s, probs, layout)) for s in cand.intra)
        intra = IntraCheck(clauses=cand.clauses, pairs=intra_pairs,
                           score=max((p.score for p in intra_pairs), default=0.0),
                           threshold=settings.intra_threshold)
    asked = plan.asked
    asked_pairs = [p for p in standing if p.source == PremiseSource.HISTORY and p.turn_id == asked]
    own_score = max((p.score for p in asked_pairs), default=0.0) if asked is not None else None
    bot_entailment = max((float(probs[s.row, ent]) for s in cand.slots), default=0.0) if ent is not None else None
    intra_fires = intra is not None and intra.score >= settings.intra_threshold
    own_fires = asked is not None and own_score >= settings.own_question_threshold
    facts_run = Check.FACTS in settings.checks
    facts_fire = facts_run and bool(cand.fact_clashes) and settings.fact_confidence >= FACT_LINE
    score = max(history_score, intra.score if intra_fires else 0.0, own_score if own_fires else 0.0,
                settings.fact_confidence if facts_fire else 0.0)

    role = None
    if intra_fires:
        category = Category.INTRA
        evidence = tuple(sorted((p for p in intra.pairs if p.score >= settings.intra_threshold),
                                key=lambda p: -p.score)) + evidence
    elif own_fires:
        category = Category.ROLE
        top = max(asked_pairs, key=lambda p: p.score)
        role = RoleCheck(decided=True, signal="answers-own-question",
                         why=f"it contradicts turn {asked}, which asked the user back, after a short reply: it "
                             "answers its own question as the user would",
                         role_threshold=settings.own_question_threshold)
        evidence = (top, *(p for p in evidence if p.turn_id != asked or p.source != PremiseSource.HISTORY))
    elif history_score < tau and not facts_fire:
        category = Category.NONE
    else:
        category = Category.HISTORY
        if facts_fire:  # the sheet's clashes, each against the turn or line that said the fact, in its own words
            cited = {(p.source, p.turn_id) for p in evidence}
            facts = tuple(fact_pair(c, settings.fact_confidence) for c in cand.fact_clashes)
            facts = tuple(p for i, p in enumerate(facts) if (p.source, p.turn_id) not in cited
                          and (p.source, p.turn_id) not in {(q.source, q.turn_id) for q in facts[:i]})
            evidence = tuple(sorted(evidence + facts, key=lambda p: -p.score)) if history_score >= tau \
                else facts + evidence
        if Check.ROLE in settings.checks:
            role = role_reading(cand, probs, evidence, bot_entailment or 0.0, layout)
            if role.decided and role.user_reading >= ROLE_THRESHOLD and role.user_reading > role.bot_reading:
                category = Category.ROLE
    details = VerdictDetails(
        method=Method.STRUCTURED, pairing=settings.pairing, turn_id=turn_id, threshold=tau,
        history_score=history_score, paired_turn_ids=cand.kept_turns, same_speaker_turns=len(plan.same_speaker),
        n_pairs=len(cand.slots) + len(cand.intra) + len(cand.role),
        # the speaker's own statements that support the candidate (the role reading's "own words" side)
        bot_entailment=bot_entailment, intra=intra, own_question_turn=asked, own_question_score=own_score,
        role=role, checks=tuple(sorted(str(c) for c in settings.checks)),
        intra_threshold=settings.intra_threshold, own_question_threshold=settings.own_question_threshold,
        prefilter_k=settings.prefilter_k,
        answer_reading=cand.reading.statement if cand.reading else "",
        answer_kind=str(cand.reading.kind) if cand.reading else "",
        says_nothing=says_nothing(cand.text, cand.reading), persona_sides=sides,
        persona_entailment=support.best_entailment, persona_supported=tuple(support.lines), restated=restated,
        answer=answer_check(plan.question, cand.text),
        fact_clashes=cand.fact_clashes if facts_run else (),
        fact_confidence=settings.fact_confidence if facts_run else None,
    )
    return Verdict(category != Category.NONE, score, category, evidence, pair_scores, details)


def fact_pair(clash: FactClash, confidence: float) -> PairScore:
    """A fact-sheet clash as an evidence row: the turn or persona line that said the fact, in its own words, against
    the candidate's sentence, at the check's confidence."""
    return PairScore(clash.sheet.source, clash.sheet.turn_id, clash.sheet.said, clash.said.said, confidence)


def unstructured_verdict(context: str, candidate: str, score: float, settings: JudgeSettings,
                         turn_id: int) -> Verdict:
    """DECODE's baseline: the whole speaker-marked history against the candidate, one pair."""
    pair = PairScore(PremiseSource.WHOLE_HISTORY, None, context, candidate, float(score))
    hit = float(score) >= settings.threshold
    return Verdict(contradiction=hit, score=float(score), category=Category.HISTORY if hit else Category.NONE,
                   evidence=(), pair_scores=(pair,),
                   details=VerdictDetails(method=Method.UNSTRUCTURED, turn_id=turn_id, threshold=settings.threshold,
                                          n_pairs=1, history_score=float(score), prefilter_k=None))


def role_reading(cand: CandidatePlan, probs: np.ndarray, evidence: tuple[PairScore, ...], bot_reading: float,
                 layout) -> RoleCheck:
    """Role confusion: the contradicting sentences restate the *user's* side as the bot's own.

    Two readings of the sentences that contradict (the evidence's hypotheses), both NLI entailment: as the bot's
    reply (best entailment from the bot's own earlier sentences and persona) and as the user's words (best
    entailment from the user's earlier claims; questions are no premises). A contradicting sentence that the user's
    own statements entail reads as the user's reply, so CDConv files it as role confusion rather than history
    contradiction; the bot's other sentences about itself do not count.
    """
    ent = layout.entailment
    if ent is None:
        return RoleCheck(decided=False, why="a 2-way checkpoint has no entailment class", role_threshold=ROLE_THRESHOLD)
    contradicting = {p.hypothesis for p in evidence if p.source in (PremiseSource.HISTORY, PremiseSource.PERSONA)}
    slots = [s for s in cand.role if s.candidate_unit.said in contradicting] or list(cand.role)
    best = max(slots, key=lambda s: probs[s.row, ent], default=None)
    user_pair = None if best is None else _pair(best, float(probs[best.row, ent]))
    return RoleCheck(decided=True, user_reading=user_pair.score if user_pair else 0.0, bot_reading=bot_reading,
                     user_pair=user_pair, role_threshold=ROLE_THRESHOLD)


@dataclass(frozen=True)
class PersonaSupport:
    """Which of a candidate's sentences the persona supports (``lines``: sentence -> (persona line, how much: its
    P(entailment), 1.0 for a restated fact)) and the best P(entailment) from a persona line to any of them."""

    lines: dict[str, tuple[int, float]]
    best_entailment: float | None


def persona_support(cand: CandidatePlan, probs: np.ndarray, layout, tau_e: float) -> PersonaSupport:
    """The candidate's sentences a persona line entails at ``tau_e`` or that state a persona fact's value (rule 3 of
    docs/experiments/2026-11-28-choice.md); persona lines are always paired with every sentence."""
    ent = layout.entailment
    lines: dict[str, tuple[int, float]] = {}
    best = None
    if ent is not None:
        for slot in cand.slots:
            if slot.premise.source != PremiseSource.PERSONA:
                continue
            p = float(probs[slot.row, ent])
            best = p if best is None else max(best, p)
            said = slot.candidate_unit.said
            if p >= tau_e and p > lines.get(said, (0, 0.0))[1]:
                lines[said] = (slot.premise.turn_id, p)
    for line, said in cand.persona_facts:
        lines[said] = (line, 1.0)
    return PersonaSupport(lines, best)


def persona_sides(cand: CandidatePlan, plan: TurnPlan, probs: np.ndarray, pair_scores: tuple[PairScore, ...],
                  layout, tau: float, support: PersonaSupport | None = None) -> tuple[PersonaSide, ...]:
    """The evidence pairs to set aside: against an earlier turn that contradicted a persona line (at τ) when this
    candidate agrees with that line (P(entailment) ≥ ``PERSONA_AGREEMENT`` for one of its units); and any pair at τ
    against an earlier bot turn through a sentence of the candidate the persona supports (``support``): that turn
    went against the persona line that supports the sentence (``PersonaSide.inferred`` where the turn's own pair
    against the line is under τ)."""
    ent = layout.entailment
    sides = list(_drifted_sides(cand, plan, probs, pair_scores, layout, tau)) if ent is not None and plan.drift else []
    taken = {id(side.pair) for side in sides}
    for ps in pair_scores if support is not None else ():
        held = support.lines.get(ps.hypothesis)
        if ps.source != PremiseSource.HISTORY or ps.score < tau or held is None or id(ps) in taken:
            continue
        line, agrees = held
        drift = _drift_pair(cand, plan, probs, layout, ps.turn_id, line)
        sides.append(PersonaSide(turn_id=ps.turn_id, persona_line=line, drift=drift, agreement=agrees, pair=ps,
                                 inferred=drift.score < tau))
        taken.add(id(ps))
    return tuple(sides)


def _drift_pair(cand: CandidatePlan, plan: TurnPlan, probs: np.ndarray, layout, turn_id: int, line: int) -> PairScore:
    """The earlier turn's strongest planned pair against persona line ``line`` (the line as premise); a pair of the
    two texts at 0.0 where none was planned."""
    best = None
    for drift in plan.drift:
        if drift.premise.turn_id == turn_id and drift.persona.turn_id == line:
            score = contradiction(drift.slot, probs, layout)
            if best is None or score > best.score:
                best = PairScore(PremiseSource.PERSONA, line, drift.persona_unit.said, drift.unit.said, score,
                                 drift.persona_unit.reading, drift.unit.reading)
    if best is not None:
        return best
    persona = next((s.premise.text for s in cand.slots if s.premise.source == PremiseSource.PERSONA
                    and s.premise.turn_id == line), "")
    turn = next((p.text for p in plan.same_speaker if p.turn_id == turn_id), "")
    return PairScore(PremiseSource.PERSONA, line, persona, turn, 0.0)


def _drifted_sides(cand: CandidatePlan, plan: TurnPlan, probs: np.ndarray, pair_scores: tuple[PairScore, ...],
                   layout, tau: float) -> tuple[PersonaSide, ...]:
    """The pairs against an earlier turn whose own pair against a persona line reaches τ, for a candidate that
    agrees with that line."""
    ent = layout.entailment
    drifted: dict[int, PairScore] = {}  # earlier turn -> its strongest pair against a persona line
    for drift in plan.drift:
        score = contradiction(drift.slot, probs, layout)
        turn = drift.premise.turn_id
        if score >= tau and (turn not in drifted or score > drifted[turn].score):
            drifted[turn] = PairScore(PremiseSource.PERSONA, drift.persona.turn_id, drift.persona_unit.said,
                                      drift.unit.said, score, drift.persona_unit.reading, drift.unit.reading)
    if not drifted:
        return ()
    agreement: dict[int, float] = {}  # persona line -> the candidate's best entailment from it
    for slot in cand.slots:
        if slot.premise.source == PremiseSource.PERSONA:
            line = slot.premise.turn_id
            agreement[line] = max(agreement.get(line, 0.0), float(probs[slot.row, ent]))
    sides = []
    for ps in pair_scores:
        drift = drifted.get(ps.turn_id) if ps.source == PremiseSource.HISTORY else None
        if drift is None or ps.score < tau:
            continue
        agrees = agreement.get(drift.turn_id, 0.0)
        if agrees >= PERSONA_AGREEMENT:
            sides.append(PersonaSide(turn_id=ps.turn_id, persona_line=drift.turn_id, drift=drift, agreement=agrees,
                                     pair=ps))
    return tuple(sides)
