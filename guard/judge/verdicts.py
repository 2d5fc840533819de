"""What a detector decides and what the decision rests on: plain records, no model.

``guard.judge.detector`` produces them; the policies, the conversation's reports (``conversation``), the
studio's database and the pages read them. They live apart from the detector so that reading a
verdict (or a stored one) never loads torch or a checkpoint. Each is frozen: built once, when the
detector has every score it rests on, and never changed after (its sequences are tuples).
"""

from __future__ import annotations

from dataclasses import dataclass

from guard.config import FACT_LINE
from guard.language.answers import AnswerCheck
from guard.language.fact_sheet import FactClash
from guard.vocabulary import Category, Method, Pairing, PremiseSource


@dataclass(frozen=True)
class PairScore:
    """One scored (premise, hypothesis) pair: exact texts compared, P(contradiction), and where the
    premise comes from.

    ``turn_id`` goes with ``source``: the earlier turn's id for ``history``, the persona line's
    0-based index for ``persona``, the judged turn's own id for ``intra`` (a clause pair inside it),
    None for ``whole_history`` (the unstructured method's one pair).
    """

    source: PremiseSource
    turn_id: int | None
    premise: str
    hypothesis: str
    score: float
    #: an answer read with its question (``guard.language.answers``): the statement the model compared in place of the words
    #: above ("Yes, I am." read as "I am a teacher."); "" when the words themselves were compared. ``premise`` and
    #: ``hypothesis`` always quote the turn's own words.
    premise_reading: str = ""
    hypothesis_reading: str = ""

    @property
    def compared(self) -> tuple[str, str]:
        """The two texts the model scored: each side's reading where it has one, else its own words."""
        return self.premise_reading or self.premise, self.hypothesis_reading or self.hypothesis


@dataclass(frozen=True)
class IntraCheck:
    """What the intra-sentence check compared: the judged turn's clauses, every clause pair scored
    (earlier clause as premise), the best pair's score and the threshold it had to reach."""

    clauses: tuple[str, ...]
    pairs: tuple[PairScore, ...]
    score: float
    threshold: float


@dataclass(frozen=True)
class RoleCheck:
    """The role-confusion reading of a history contradiction (CDConv's "role"): P(entailment) of the
    turn as the other speaker's words vs as its own speaker's, from the best premise of each side."""

    decided: bool
    why: str = ""  # why it could not be decided (a 2-way checkpoint has no entailment class)
    signal: str = "nli-entailment"
    user_reading: float = 0.0
    bot_reading: float = 0.0
    user_pair: PairScore | None = None  # the other speaker's sentence that entails the turn best
    role_threshold: float = 0.5


@dataclass(frozen=True)
class PersonaSide:
    """Evidence the guard set aside because the persona outranks the bot's drift: the earlier turn ``turn_id``
    contradicted persona line ``persona_line`` (``drift``: that pair), and the judged reply agrees with the line
    (``agreement``: P(entailment) of the reply's sentence from it, 1.0 where it states the line's fact), so
    contradicting that turn is no error (``pair``: the evidence set aside). ``inferred``: the detector did not find
    the turn's clash with the line itself (its pair is under τ); the turn contradicts the reply's sentence, which the
    line supports, so it goes against the line (docs/experiments/2026-11-28-choice.md, rule 5)."""

    turn_id: int
    persona_line: int
    drift: PairScore
    agreement: float
    pair: PairScore
    inferred: bool = False


@dataclass(frozen=True)
class VerdictDetails:
    """What a verdict rests on besides its evidence: the settings it was judged with and each check's numbers."""

    method: Method
    turn_id: int  # the judged turn's id (for a candidate reply, the id it would get)
    threshold: float
    n_pairs: int  # pairs scored for this turn: history, persona and clause pairs
    history_score: float  # best history/persona pair (unstructured: its one whole-history pair)
    pairing: Pairing | None = None  # structured only
    paired_turn_ids: tuple[int, ...] = ()  # earlier turns paired (after the prefilter)
    same_speaker_turns: int = 0  # earlier turns of the judged speaker
    # best P(entailment) from the speaker's own record: the role check's "own words" reading (None: 2-way checkpoint)
    bot_entailment: float | None = None
    intra: IntraCheck | None = None  # structured, with the intra check on
    # the turn that asked the user back, when only short replies followed it, and the best pair against it
    own_question_turn: int | None = None
    own_question_score: float | None = None
    role: RoleCheck | None = None  # history contradictions, structured, with the role check on
    #: the checks that ran beside the history check (``guard.vocabulary.Check`` values)
    checks: tuple[str, ...] = ()
    #: the checks' own thresholds and the prefilter's k the turn was judged with (``guard.config.JudgeSettings``;
    #: None in verdicts stored before they were quoted here)
    intra_threshold: float | None = None
    own_question_threshold: float | None = None
    prefilter_k: int | None = None
    #: the judged turn read with the other speaker's question (``guard.language.answers.read_answer``): the statement it makes
    #: and the question's kind; "" when it is no short answer read here
    answer_reading: str = ""
    answer_kind: str = ""
    #: the turn claims nothing about its speaker ("I don't know.", "Yes." with nothing asked): the policies prefer a
    #: consistent reply that answers (``guard.language.answers.says_nothing``)
    says_nothing: bool = False
    #: evidence against earlier turns that themselves contradicted the persona, set aside (``PersonaSide``)
    persona_sides: tuple[PersonaSide, ...] = ()
    #: the best P(entailment) from a persona line to one of the candidate's sentences (None: no persona, or a 2-way
    #: checkpoint)
    persona_entailment: float | None = None
    #: the candidate's sentences the persona supports: a persona line entails it at τ_e, or it states a persona
    #: fact's value (the choice puts a candidate the persona supports first, rule 3)
    persona_supported: tuple[str, ...] = ()
    #: pairs with a persona line set aside because the candidate's sentence in the pair restates that very line's fact
    #: (the fact sheet reads the same relation and value): a line cannot deny what it says, the pair's score is the
    #: model's error ("No, I have never been on a plane." to "So you're a pilot?" scored 0.95 against "I have never
    #: been on a plane.")
    restated: tuple[PairScore, ...] = ()
    #: whether it answers the other speaker's message (``guard.language.answers.answer_check``; None: not checked, as
    #: in verdicts stored before it was)
    answer: AnswerCheck | None = None
    #: the fact sheet's clashes (``guard.language.fact_sheet``): a single-valued fact the bot stated given another value
    fact_clashes: tuple[FactClash, ...] = ()
    #: the score a clash gives (the fact check's measured precision), None when the check did not run
    fact_confidence: float | None = None


@dataclass(frozen=True)
class Verdict:
    """The detector's decision on one utterance, with what it rests on."""

    contradiction: bool
    score: float
    category: Category
    evidence: tuple[PairScore, ...]  # pairs >= threshold, best first
    pair_scores: tuple[PairScore, ...]  # every history/persona pair scored (for the heatmap)
    details: VerdictDetails

    @property
    def evidence_turn_ids(self) -> list[int]:
        """Earlier turns (not persona lines, not the utterance itself) the evidence points at."""
        return sorted({p.turn_id for p in self.evidence if p.source == PremiseSource.HISTORY})

    @property
    def evidence_persona_lines(self) -> list[int]:
        """0-based indices of the persona lines the evidence points at."""
        return sorted({p.turn_id for p in self.evidence if p.source == PremiseSource.PERSONA})

    @property
    def deciding(self) -> tuple[float, float]:
        """The score of the check that decided this verdict and the threshold that check compared it with.

        ``score`` is the highest of the checks that fired (or the history score when none did), so it can come from
        another check than the one that named the category: a candidate whose two clauses clash at 0.72 (the
        intra-sentence check, at its own threshold) may also score 0.99 against an earlier turn. What is said about
        the decision quotes the deciding check's own number, the one of its evidence row: the intra check's best
        clause pair for an intra-sentence contradiction, the pair against the turn that asked the user back for a
        bot answering its own question, the fact sheet's confidence against its line when the sheet alone decided,
        the strongest evidence pair for a history contradiction, and the highest pair at τ when nothing fired."""
        tau = self.details.threshold
        top = self.evidence[0] if self.evidence else None
        if not self.contradiction:
            return self.score, tau
        if self.category == Category.INTRA:
            intra = self.details.intra
            if intra is not None:
                return intra.score, intra.threshold
            return (top.score if top is not None else self.score), tau
        if top is None:
            return self.score, tau
        details = self.details
        if details.fact_clashes and details.history_score < tau and details.fact_confidence is not None:
            return details.fact_confidence, FACT_LINE  # the fact sheet decided: its confidence against its line
        role = details.role
        if self.category == Category.ROLE and role is not None and role.signal == "answers-own-question":
            return top.score, role.role_threshold
        return top.score, tau
