"""What the guard does with the detector's verdicts on N candidate replies.

Modes:
* ``off``     the generator's best candidate, verdicts ignored.
* ``flag``    the generator's best candidate, contradictions only reported.
* ``rerank``  DECODE §5.3 (Nie et al. 2021), among the candidates the detector does not flag that answer: the
              one the detector suspects least, the generator's best (the bot's favourite) only while its score
              is under a low band set on the calibration halves (``rerank_band``); if every candidate is
              flagged, the generator's best (as DECODE's re-ranked beam does).
* ``penalty`` Dialogue NLI re-ranking (Welleck et al. 2019, eq. 1):
              s'_i = s_i - λ·(s_1 - s_k)·c_i, with s_1 the top generator score, s_k the k-th best
              (k = ``penalty_k``, default the last candidate) and c_i the candidate's contradiction
              probability when the detector flags it, else 0. With λ = 1 a certainly-contradicting
              top candidate drops to the k-th place.
* ``block``   like ``rerank``, but when every candidate is flagged the bot says a safe reply
              instead (the MuTual-plus idea, Cui et al. 2020: a safe response should win when
              every other candidate is wrong).
* ``repair``  the generator's best, and when it contradicts through one sentence (or a clause of one
              sentence), that sentence removed, provided what remains still answers (``plan_repair``);
              otherwise ``repair_fallback`` (rerank, penalty or block) decides. A long reply that goes
              wrong in one sentence keeps the rest of what the generator liked best instead of being
              swapped for a weaker candidate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from guard.config import DEFAULT_SAFE_REPLY, FACT_LINE
from guard.judge.verdicts import PairScore, Verdict
from guard.records import Candidate
from guard.vocabulary import GUARD_MODES, Category, GuardMode, PremiseSource, describe_source

MODES = GUARD_MODES  # the modes choose() takes
#: The policies repair falls back to when the generator's best cannot be repaired: those that look at every
#: candidate (off and flag would send the contradiction unchanged).
REPAIR_FALLBACKS: tuple[GuardMode, ...] = (GuardMode.RERANK, GuardMode.PENALTY, GuardMode.BLOCK)


@dataclass(frozen=True)
class Repair:
    """A candidate sent with its one contradicting sentence removed (the repair mode), and why.

    Kept with the conversation's report (``conversation.records.CandidateReport.repair``) so the transcript and
    the studio can show what the user did not see: the sentence removed and what it contradicted.
    """

    index: int  # the candidate repaired
    removed: str  # the sentence taken out, as the candidate said it
    reply: str  # what was sent: the candidate's other sentences
    why: str  # what the removed sentence contradicts, in describe_verdict's words
    evidence: tuple[PairScore, ...] = ()  # the detector's pairs through the removed sentence


@dataclass(frozen=True)
class PolicyDecision:
    """The reply to send and why each candidate was or was not sent."""

    chosen_index: int | None  # None = the fallback reply was used
    reply: str
    used_fallback: bool
    reasons: tuple[str, ...]  # one per candidate, in the candidates' order
    adjusted_scores: tuple[float, ...]
    repair: Repair | None = None  # repair mode: the chosen candidate was sent without its contradicting sentence
    # repair mode: why the generator's best contradicting candidate could not be repaired ("" when it was, or
    # when it did not contradict); the fallback policy then decided
    repair_declined: str = ""
    decided_by: GuardMode | None = None  # repair mode: the policy that decided when no repair was made


def score_and_threshold(score: float, threshold: float) -> tuple[str, str]:
    """A score and the threshold it is compared with, written with enough digits (2 to 6) that the written
    numbers differ and compare the way the real ones do: 0.9306 vs 0.9315, 0.9403 vs 0.9361, never "0.93 (threshold
    0.93)" beside "no contradiction" nor "0.94 (threshold 0.94)" beside a flag. Only a score equal to its threshold
    to six digits is written as the same number (``describe_verdict`` then says it is at the line)."""
    for digits in (2, 3, 4, 5, 6):
        a, b = f"{score:.{digits}f}", f"{threshold:.{digits}f}"
        if a != b and (float(a) >= float(b)) == (score >= threshold):
            return a, b
    return f"{score:.4f}", f"{threshold:.4f}"


def deciding_score(verdict: Verdict) -> tuple[float, float]:
    """The score of the check that decided ``verdict`` and the threshold that check compared it with.

    ``verdict.score`` is the highest of the checks that fired (or the history score when none did), so it can come
    from another check than the one that named the category: a candidate whose two clauses clash at 0.72 (the
    intra-sentence check, at its own threshold) may also score 0.99 against an earlier turn. What is said about the
    decision quotes the deciding check's own number, the one of its evidence row: the intra check's best clause pair
    for an intra-sentence contradiction, the pair against the turn that asked the user back for a bot answering its
    own question, the strongest evidence pair for a history contradiction, and the highest pair at τ when nothing
    fired."""
    tau = verdict.details.threshold
    top = verdict.evidence[0] if verdict.evidence else None
    if not verdict.contradiction:
        return verdict.score, tau
    if verdict.category == Category.INTRA:
        intra = verdict.details.intra
        if intra is not None:
            return intra.score, intra.threshold
        return (top.score if top is not None else verdict.score), tau
    if top is None:
        return verdict.score, tau
    details = verdict.details
    if details.fact_clashes and details.history_score < tau and details.fact_confidence is not None:
        return details.fact_confidence, FACT_LINE  # the fact sheet decided: its confidence against its line
    role = verdict.details.role
    if verdict.category == Category.ROLE and role is not None and role.signal == "answers-own-question":
        return top.score, role.role_threshold
    return top.score, tau


def describe_verdict(verdict: Verdict) -> str:
    """One plain sentence on what the detector found, with the strongest evidence; the score quoted is the deciding
    check's (``deciding_score``), the same number as its evidence row."""
    def probability(score: float, threshold: float) -> str:
        shown, limit = score_and_threshold(score, threshold)
        if shown == limit:  # equal to six digits: it flags, at the very line
            return f"probability {shown}, right at its threshold"
        return f"probability {shown} (threshold {limit})"

    tau = verdict.details.threshold
    sides = verdict.details.persona_sides
    if sides:
        side = sides[0]
        turns = sorted({s.turn_id for s in sides})
        took = (f"; the guard sided with the persona: turn{'s' if len(turns) > 1 else ''} "
                f"{', '.join(map(str, turns))} contradicted persona line {side.persona_line + 1} "
                f'("{side.drift.premise}"), which this reply agrees with, so contradicting '
                f"{'them' if len(turns) > 1 else 'it'} is no error")
    else:
        took = ""
    if not verdict.contradiction:
        return f"no contradiction found: highest contradiction {probability(verdict.score, tau)}{took}"
    score, limit = deciding_score(verdict)
    top = verdict.evidence[0] if verdict.evidence else None
    if verdict.category == Category.INTRA:
        where = f': "{top.premise}" vs "{top.hypothesis}"' if top and top.source == PremiseSource.INTRA else ""
        said = f"contradicts itself with {probability(score, limit)}{where}"
        # the history or persona pairs that reached τ too: named with their own scores
        outside = [e for e in verdict.evidence if e.source in (PremiseSource.HISTORY, PremiseSource.PERSONA)]
        if outside:
            said += (f'; it also contradicts {describe_source(outside[0])} ("{outside[0].premise}") with '
                     f"{probability(outside[0].score, tau)}"
                     + (f", and {len(outside) - 1} more" if len(outside) > 1 else ""))
        return said
    if top is None:
        return f"contradicts the conversation with {probability(score, limit)}"
    clashes = verdict.details.fact_clashes
    if clashes and verdict.details.history_score < tau:  # the fact sheet decided: in the sheet's words
        clash = clashes[0]
        more = f", and {len(clashes) - 1} more" if len(clashes) > 1 else ""
        measured = verdict.details.fact_confidence
        return (f'contradicts what the bot said about itself in {describe_source(top)} ("{top.premise}"): '
                f"{clash.why}{more} (the fact sheet, at confidence {measured:.2f})" + took)
    what = "role confusion: reads as the user's reply and contradicts" if verdict.category == Category.ROLE \
        else "contradicts"
    return (f'{what} {describe_source(top)} ("{top.premise}") with {probability(score, limit)}'
            + (f", and {len(verdict.evidence) - 1} more" if len(verdict.evidence) > 1 else "") + took)


def _check(candidates: Sequence[Candidate], verdicts: Sequence[Verdict] | None, mode: GuardMode) -> GuardMode:
    """``mode`` as a GuardMode, once the inputs are known to fit together (a clear ValueError otherwise)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if len(candidates) == 0:
        raise ValueError("no candidates to choose from: generate at least one candidate reply")
    for c in candidates:
        if not isinstance(c, Candidate) or not isinstance(c.text, str) or not isinstance(c.score, (int, float)) \
                or math.isnan(c.score):
            raise ValueError(f"each candidate must be a guard.records.Candidate (text, generator score), got {c!r}")
    if mode != GuardMode.OFF and (verdicts is None or len(verdicts) != len(candidates)):
        n = 0 if verdicts is None else len(verdicts)
        raise ValueError(f"mode {mode!r} needs one verdict per candidate: {len(candidates)} candidates, {n} verdicts")
    return GuardMode(mode)


def choose(
    candidates: Sequence[Candidate],
    verdicts: Sequence[Verdict] | None,
    mode: GuardMode,
    penalty_lambda: float = 1.0,
    fallback: str = DEFAULT_SAFE_REPLY,
    penalty_k: int | None = None,
    repair_fallback: GuardMode = GuardMode.RERANK,
    rerank_band: float | None = None,
) -> PolicyDecision:
    """Pick the reply for ``mode``; a candidate's generator score is higher when better. ``verdicts`` are the
    detector's, one per candidate (None or empty when the mode is off). ``repair_fallback``: the policy the
    repair mode falls back to (one of ``REPAIR_FALLBACKS``). ``rerank_band``: re-rank sends the generator's best
    while its score is under it, else the least suspected (None: always the least suspected)."""
    mode = _check(candidates, verdicts, mode)
    if mode == GuardMode.REPAIR:
        return _repair_or_fall_back(candidates, verdicts, repair_fallback, penalty_lambda=penalty_lambda,
                                    fallback=fallback, penalty_k=penalty_k, rerank_band=rerank_band)
    scores = [float(c.score) for c in candidates]
    n = len(candidates)
    best_gen = max(range(n), key=lambda i: scores[i])  # first of equals wins
    flagged = [bool(v.contradiction) for v in verdicts] if mode != GuardMode.OFF else [False] * n

    if mode in (GuardMode.OFF, GuardMode.FLAG):
        reasons = []
        for i in range(n):
            head = "chosen: the generator's best" if i == best_gen else "not chosen: a lower generator score"
            line = f"{head} ({scores[i]:.3f})"
            if mode == GuardMode.FLAG:
                line += ("; FLAGGED, " if flagged[i] else "; ") + describe_verdict(verdicts[i])
            reasons.append(line)
        return PolicyDecision(best_gen, candidates[best_gen].text, False, tuple(reasons), tuple(scores))

    if mode == GuardMode.PENALTY:
        if penalty_lambda < 0:
            raise ValueError(f"penalty_lambda must be >= 0, got {penalty_lambda}")
        k = n if penalty_k is None else penalty_k
        if not 1 <= k <= n:
            raise ValueError(f"penalty_k must be between 1 and the number of candidates ({n}), got {k}")
        ranked = sorted(scores, reverse=True)
        gap = ranked[0] - ranked[k - 1]
        contra = [v.score if v.contradiction else 0.0 for v in verdicts]
        adjusted = [s - penalty_lambda * gap * c for s, c in zip(scores, contra)]
        chosen = max(range(n), key=lambda i: adjusted[i])
        reasons = []
        for i in range(n):
            head = "chosen: highest adjusted score" if i == chosen else "not chosen: a lower adjusted score"
            penalty = scores[i] - adjusted[i]
            reasons.append(
                f"{head} {adjusted[i]:.3f} = generator {scores[i]:.3f} - penalty {penalty:.3f}"
                f" (λ={penalty_lambda:g} × gap {gap:.3f} × contradiction {contra[i]:.2f}); "
                + describe_verdict(verdicts[i])
            )
        return PolicyDecision(chosen, candidates[chosen].text, False, tuple(reasons), tuple(adjusted))

    # rerank / block: the best generator score among the candidates the detector does not flag, those that answer
    # before those that say nothing ("I don't know." must not beat a consistent answer: the guard would teach dodging)
    clean = [i for i in range(n) if not flagged[i]]
    answering = [i for i in clean if not verdicts[i].details.says_nothing]
    pool = answering or clean
    favourite = max(pool, key=lambda i: scores[i]) if pool else None
    suspected = [float(deciding_score(v)[0]) for v in verdicts]
    least = favourite
    if pool and mode == GuardMode.RERANK and not (rerank_band is not None and suspected[favourite] < rerank_band):
        least = min(pool, key=lambda i: (suspected[i], -scores[i]))  # ties: the generator's order
    if clean:
        chosen = least if mode == GuardMode.RERANK else favourite
    elif mode == GuardMode.RERANK:
        chosen = best_gen
    else:
        chosen = None
    reasons = []
    for i in range(n):
        if i == chosen and flagged[i]:
            head = "chosen although flagged: every candidate contradicts, so the generator's best is kept"
        elif i == chosen and answering and mode == GuardMode.RERANK and i == favourite:
            head = (f"chosen: the bot's favourite (generator score {scores[i]:.3f}) among candidates without a "
                    f"contradiction" + (f", its score {suspected[i]:.3f} under the band {rerank_band:.3f}"
                                        if rerank_band is not None and suspected[i] < rerank_band else
                                        ", and the one the detector suspects least"))
        elif i == chosen and answering and mode == GuardMode.RERANK:
            head = (f"chosen: the one the detector suspects least ({suspected[i]:.3f}) among candidates without a "
                    "contradiction that answer" + (f"; the bot's favourite scored {suspected[favourite]:.3f}, over "
                                                  f"the band {rerank_band:.3f}" if rerank_band is not None else ""))
        elif i == chosen and answering:
            head = f"chosen: the best generator score ({scores[i]:.3f}) among candidates without a contradiction"
        elif i == chosen:
            head = (f"chosen: the best generator score ({scores[i]:.3f}) among candidates without a contradiction; "
                    "it says nothing, but no consistent candidate answers")
        elif not flagged[i] and answering and i not in answering:
            head = "not chosen: it says nothing, and a consistent candidate answers"
        elif flagged[i] and chosen is None:
            head = "rejected: every candidate contradicts, so the safe reply is sent"
        elif flagged[i]:
            head = "rejected"
        elif mode == GuardMode.RERANK and chosen is not None and i in pool and scores[i] > scores[chosen]:
            head = f"not chosen: the detector suspects it more ({suspected[i]:.3f})"
        else:
            head = f"not chosen: a lower generator score ({scores[i]:.3f})"
        reasons.append(f"{head}; {describe_verdict(verdicts[i])}")
    if chosen is None:
        return PolicyDecision(None, fallback, True, tuple(reasons), tuple(scores))
    return PolicyDecision(chosen, candidates[chosen].text, False, tuple(reasons), tuple(scores))


def _repair_or_fall_back(candidates: Sequence[Candidate], verdicts: Sequence[Verdict], repair_fallback: GuardMode,
                         **options) -> PolicyDecision:
    """The repair mode: the generator's best, repaired when it contradicts through one sentence; else the
    fallback policy's decision, with the reason the repair was declined in front of that candidate's reason."""
    if repair_fallback not in REPAIR_FALLBACKS:
        raise ValueError(f"repair_fallback must be one of {', '.join(REPAIR_FALLBACKS)}, got {repair_fallback!r}")
    repair_fallback = GuardMode(repair_fallback)
    scores = [float(c.score) for c in candidates]
    best = max(range(len(candidates)), key=lambda i: scores[i])
    declined = ""
    if verdicts[best].contradiction:
        repair, declined = plan_repair(best, candidates[best].text, verdicts[best])
        if repair is not None:
            reasons = []
            for i, verdict in enumerate(verdicts):
                if i == best:
                    head = f'chosen and repaired: "{repair.removed}" removed, the rest of the generator\'s best sent'
                else:
                    head = f"not chosen: the generator's best ({scores[best]:.3f}) could be repaired"
                reasons.append(f"{head}; {describe_verdict(verdict)}")
            return PolicyDecision(best, repair.reply, False, tuple(reasons), tuple(scores), repair=repair)
    decision = choose(candidates, verdicts, repair_fallback, **options)
    if not declined:
        return replace(decision, decided_by=repair_fallback)
    reasons = list(decision.reasons)
    reasons[best] = f"not repaired ({declined}), so {repair_fallback} decided: {reasons[best]}"
    return replace(decision, decided_by=repair_fallback, repair_declined=declined, reasons=tuple(reasons))


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _words(text: str) -> tuple[str, ...]:
    """A text compared as its words: the detector's units are cleaned copies of the reply's sentences and clauses
    (spacing, joiners and punctuation may differ), so they are found again by their words."""
    return tuple(_WORD.findall(text.lower().replace("\u2019", "'")))


def _contains(words: tuple[str, ...], part: tuple[str, ...]) -> bool:
    return any(words[i:i + len(part)] == part for i in range(len(words) - len(part) + 1))


def _locate(unit: str, sentences: Sequence[str], reply: str) -> list[int]:
    """The indices of the reply's sentences that a detector unit (a pair's hypothesis) comes from.

    Best match first: the sentence itself (every copy of it), a sentence holding the unit's words in a row (a
    clause), the sentences a whole-utterance unit spans, a sentence holding all its words (a clause cut from
    around another), and last the reply's opening answer particle ("No." read as "I do not have pets.",
    guard.language.answers), which sits in its first sentence. Empty when the unit is nowhere in the reply.
    """
    from guard.language.grammar import particle

    unit_words = _words(unit)
    words = [_words(s) for s in sentences]
    if not unit_words:
        return []
    for found in ([i for i, w in enumerate(words) if w == unit_words],
                  [i for i, w in enumerate(words) if _contains(w, unit_words)],
                  [i for i, w in enumerate(words) if w and len(w) < len(unit_words) and _contains(unit_words, w)],
                  [i for i, w in enumerate(words) if set(unit_words) <= set(w)]):
        if found:
            return found
    return [0] if sentences and particle(reply) is not None else []


def still_answers(sentences: Sequence[str]) -> bool:
    """Whether sentences left after a repair still answer: at least one states something, i.e. is neither a
    question nor a greeting, thanks or backchannel (guard.language.text.asserts_nothing) - "Do you?" or "Haha!" alone
    would leave the user's message unanswered."""
    from guard.language.text import asserts_nothing

    return any(not s.strip().endswith("?") and not asserts_nothing(s) for s in sentences)


def plan_repair(index: int, reply: str, verdict: Verdict) -> tuple[Repair | None, str]:
    """The candidate ``reply`` with the one sentence its contradiction runs through removed, or None and why not.

    The verdict says where: each pair's hypothesis is the candidate's sentence (or clause, for the intra-sentence
    check, whose later clause is the hypothesis) that contradicts. Every pair at or over the threshold counts, not
    only the evidence (which keeps the best pair per earlier turn): a repair needs them all to point into the same
    sentence (repeated copies of it count as one) and the other sentences to still answer (``still_answers``).
    Not re-checked by the detector: the removed sentence carried every pair over the threshold, and the pairs of
    the sentences left were all below it.
    """
    from guard.language.text import sentences as split

    if not verdict.evidence:
        return None, "the detector gave no evidence pointing at a sentence"
    if any(p.source == PremiseSource.WHOLE_HISTORY for p in verdict.evidence):
        return None, "the unstructured detector judges the whole reply, not its sentences"
    over = [p for p in verdict.pair_scores if p.score >= verdict.details.threshold]
    pairs = list(verdict.evidence) + [p for p in over if p not in verdict.evidence]
    units = list(split(reply))
    hit: set[int] = set()
    for pair in pairs:
        found = _locate(pair.hypothesis, units, reply)
        if not found:
            return None, f'"{pair.hypothesis}" is not a sentence of the reply'
        hit.update(found)
    removed = {_words(units[i]) for i in hit}
    if len(removed) > 1:
        return None, f"the contradiction runs through {len(removed)} sentences, not one"
    kept = [s for s in units if _words(s) not in removed]
    if not kept:
        return None, "the contradicting sentence is the whole reply"
    if not still_answers(kept):
        return None, f'what would remain ("{" ".join(kept)}") only asks or greets, it does not answer'
    return Repair(index=index, removed=units[min(hit)], reply=" ".join(kept), why=describe_verdict(verdict),
                  evidence=tuple(verdict.evidence)), ""
