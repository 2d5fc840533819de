"""The repair mode's plan: the generator's best reply with the one sentence its contradiction runs through removed.

A long reply that goes wrong in one sentence keeps the rest of what the generator liked best instead of being swapped
for a weaker candidate (``guard.judge.policies``, the ``repair`` mode). Here only the plan and why a reply cannot be
repaired, as records; ``guard.judge.wording`` words them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from guard.judge.verdicts import PairScore, Verdict
from guard.language.grammar import particle
from guard.vocabulary import PremiseSource


@dataclass(frozen=True)
class Repair:
    """A candidate sent with its one contradicting sentence removed (the repair mode), and why.

    Kept with the turn's report (``guard.judge.report.CandidateReport.repair``) so the transcript and the studio can
    show what the user did not see: the sentence removed and what it contradicted.
    """

    index: int  # the candidate repaired
    removed: str  # the sentence taken out, as the candidate said it
    reply: str  # what was sent: the candidate's other sentences
    why: str = ""  # what the removed sentence contradicts, in describe_verdict's words (filled when the turn is decided)
    evidence: tuple[PairScore, ...] = ()  # the detector's pairs through the removed sentence


class DeclinedKind(StrEnum):
    """Why a contradicting reply could not be repaired."""

    NO_EVIDENCE = "no-evidence"  # the detector gave no pair pointing at a sentence
    UNSTRUCTURED = "unstructured"  # the unstructured method judges the whole reply
    NOT_A_SENTENCE = "not-a-sentence"  # a pair's hypothesis is no sentence of the reply (``detail``: it)
    SEVERAL_SENTENCES = "several-sentences"  # the contradiction runs through more than one (``detail``: how many)
    WHOLE_REPLY = "whole-reply"  # the contradicting sentence is all there is
    NOTHING_ANSWERS = "nothing-answers"  # what would remain only asks or greets (``detail``: what would remain)


@dataclass(frozen=True)
class Declined:
    """A repair declined: why (``kind``), with the one value the words quote (``detail``)."""

    kind: DeclinedKind
    detail: str = ""


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


def plan_repair(index: int, reply: str, verdict: Verdict) -> tuple[Repair | None, Declined | None]:
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
        return None, Declined(DeclinedKind.NO_EVIDENCE)
    if any(p.source == PremiseSource.WHOLE_HISTORY for p in verdict.evidence):
        return None, Declined(DeclinedKind.UNSTRUCTURED)
    over = [p for p in verdict.pair_scores if p.score >= verdict.details.threshold]
    pairs = list(verdict.evidence) + [p for p in over if p not in verdict.evidence]
    units = list(split(reply))
    hit: set[int] = set()
    for pair in pairs:
        found = _locate(pair.hypothesis, units, reply)
        if not found:
            return None, Declined(DeclinedKind.NOT_A_SENTENCE, pair.hypothesis)
        hit.update(found)
    removed = {_words(units[i]) for i in hit}
    if len(removed) > 1:
        return None, Declined(DeclinedKind.SEVERAL_SENTENCES, str(len(removed)))
    kept = [s for s in units if _words(s) not in removed]
    if not kept:
        return None, Declined(DeclinedKind.WHOLE_REPLY)
    if not still_answers(kept):
        return None, Declined(DeclinedKind.NOTHING_ANSWERS, " ".join(kept))
    return Repair(index=index, removed=units[min(hit)], reply=" ".join(kept), evidence=tuple(verdict.evidence)), None
