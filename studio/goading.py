"""Suggested next messages that tend to make a bot contradict itself.

After each bot turn the assistant proposes 3-5 messages, each labelled with how it goads:

* CDConv's trigger methods (Zheng et al. 2022, §4.2), which simulate what users do when bots slip:
  **inquiring history** about the bot (a question whose answer the bot already gave: an entity, a
  number, a noun chunk of its earlier turns, found with spaCy and turned into a question by
  templates) or about the user ("Do you remember where I live?", CDConv's User-M pattern);
  **perturbation** of an earlier user message (negated, an antonym or a synonym swapped in, with
  the guard's own perturbation functions); **paraphrase** (the earlier question asked again in
  other words; templates, since no back-translation model ships); a **short utterance**.
* **Follow-up questions** on the bot's earlier claims (Sato et al. 2024), ranked by FQness:
  P(q | context with the claim r) / P(q | context without r), computed with the bot's own LM
  (``studio.lm``); bots without a local LM get a template ranking, and the result says which.

Everything is rules over a spaCy parse plus (for FQness) one batched forward pass: no text is
generated with the LM, so suggestions stay fast.
"""

from __future__ import annotations

import contextlib
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from conversation.records import BOT, USER
from guard.language import grammar
from guard.language.grammar import main_verbs, phrase_text, speaker_subject, speakers_own_subject, to_second_person
from guard.language.perturb import antonym, negate, synonym  # the perturbations: imported here only, for all of studio
from guard.records import Turn
from studio.lm import ContinuationScorer

#: Method ids, in the order the assistant lists them.
METHODS = ("inquire_bot", "inquire_user", "follow_up", "perturb_negation", "perturb_antonym",
           "perturb_synonym", "paraphrase", "short")
METHOD_LABELS = {  # in a class's words: the papers' names are in METHOD_HELP, one click away on the page
    "inquire_bot": "asks what the bot said before",
    "inquire_user": "asks the bot what you said",
    "follow_up": "asks more about something the bot said",
    "perturb_negation": "your earlier message, turned into its opposite",
    "perturb_antonym": "your earlier message with an opposite word",
    "perturb_synonym": "your earlier message with a word that means the same",
    "paraphrase": "your earlier question in other words",
    "short": "a short reply",
    "typed": "typed by the user",
    "opener": "opening question (self-play)",
}
METHOD_HELP = {
    "inquire_bot": "asks about something the bot already said (CDConv: Inquiring History, Bot)",
    "inquire_user": "asks the bot to recall what you said (CDConv: Inquiring History, User-M)",
    "follow_up": "asks for more about a claim the bot made (Sato et al.: follow-up question)",
    "perturb_negation": "your earlier message, negated (CDConv: Perturbation, Negative)",
    "perturb_antonym": "your earlier message with a word swapped for its antonym (CDConv: Perturbation)",
    "perturb_synonym": "your earlier message with a noun swapped for a synonym (CDConv: Perturbation)",
    "paraphrase": "your earlier question asked again in other words (CDConv: Paraphrasing)",
    "short": "a short, uninformative reply (CDConv: Short Utterance)",
}
#: The assistant offers one suggestion per family, so 5 suggestions cover 5 different ways of goading.
FAMILIES = (("inquire_bot", "inquire_user"), ("follow_up",), ("perturb_negation", "perturb_antonym", "perturb_synonym"),
            ("paraphrase",), ("short",))
#: CDConv's short utterances were <= 3 Chinese characters; these are their English counterparts.
SHORT_UTTERANCES = ("ok", "really?", "why?", "hmm", "and?", "so?", "lol", "sure", "cool", "what?",
                    "huh?", "me too", "oh", "yes", "no")
#: How many earlier turns of each speaker are mined for suggestions (recent ones matter most).
RECENT_TURNS = 3
_LOCATION_PREPS = {"in", "at", "near", "to", "from"}
_LOCATION_VERBS = {"live", "work", "go", "grow", "come", "move", "stay", "study", "travel", "visit", "be"}
_DURATION_NOUNS = {"year", "years", "month", "months", "week", "weeks", "day", "days"}


@dataclass(frozen=True)
class Suggestion:
    """One proposed next message; ``source_turn_id`` is the earlier turn it works on."""

    text: str
    method: str
    source_turn_id: int | None = None
    note: str = ""
    score: float | None = None  # FQness (log ratio) for follow-ups ranked by the LM

    @property
    def label(self) -> str:
        return METHOD_LABELS.get(self.method, self.method)


@dataclass
class SuggestionSet:
    """What the assistant offers after one bot turn, and how the follow-ups were ranked."""

    suggestions: list[Suggestion]
    ranking: str  # "FQness under <bot> LM" | "template ranking" | ""
    seconds: float = 0.0
    candidates_considered: dict[str, int] = field(default_factory=dict)
    #: methods that could not run, with the reason in a few words (WordNet missing and not fetchable, ...)
    unavailable: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------- parsing helpers
def _sentences(text: str):
    return list(grammar.parse(text).sents)


#: what a phrase quoted inside a question stops at: an apposition ("Sophie, a chatbot"), a clause, a list
_PHRASE_CUT = frozenset({"appos", "relcl", "acl", "advcl", "cc", "conj", "parataxis", "punct", "prep"})


def _clean(question: str) -> str:
    question = " ".join(question.split())
    question = re.sub(r"\s+([?.!,])", r"\1", question)
    return question[:1].upper() + question[1:]


def _lower_first(text: str) -> str:
    """Lower-case the first word unless it is "I" or an acronym (for quoting a sentence mid-sentence)."""
    first = text.split(" ", 1)[0]
    if first.split("'")[0] == "I" or (len(first) > 1 and first.isupper()):
        return text
    return text[:1].lower() + text[1:]


# ---------------------------------------------------------------------------- inquiring history
@dataclass(frozen=True)
class _Inquiry:
    """One fact a speaker stated, as a direct question (to the bot) and an embedded one (about the user)."""

    direct: str  # "Where do you live?"
    embedded: str  # "where I live"
    focus: str  # what the question is about, for the note


def _inquiries(sent) -> list[_Inquiry]:
    """Answer-aware question templates over the dependency parse of one sentence."""
    found: list[_Inquiry] = []
    for verb in main_verbs(sent):
        past = verb.tag_ == "VBD"
        do = "did" if past else "do"
        lemma = verb.lemma_.lower()
        mine = speakers_own_subject(verb)
        if mine is not None and lemma == "be":
            subject = phrase_text(mine, skip=("poss", "det"))
            be = "was" if past else "is"
            found.append(_Inquiry(f"What {be} your {subject}?", f"what my {subject} {be}", subject))
            continue
        if not speaker_subject(verb):
            continue
        auxes = grammar.auxiliaries(verb)
        for child in verb.children:
            if child.dep_ == "dobj":
                obj = phrase_text(child)
                count = next((g for g in child.children if g.dep_ == "nummod"), None)
                named = next((g for g in child.children if g.dep_ == "acl" and g.lemma_ in ("name", "call")), None)
                if count is not None:
                    noun = child.text.lower()
                    found.append(_Inquiry(f"How many {noun} {do} you {lemma}?", f"how many {noun} I {verb.text}", noun))
                elif named is not None:
                    noun = child.lemma_.lower()
                    found.append(_Inquiry(f"What is your {noun}'s name?", f"what my {noun}'s name is", noun))
                else:
                    found.append(_Inquiry(f"{do.capitalize()} you {lemma} {to_second_person(obj)}?",
                                          f"whether I {verb.text} {obj}", obj))
            elif child.dep_ == "prep" and child.lower_ in _LOCATION_PREPS and lemma in _LOCATION_VERBS:
                pobj = next((g for g in child.children if g.dep_ == "pobj"), None)
                if pobj is None:
                    continue
                place = phrase_text(pobj)
                if lemma == "be":
                    at = "Where were you?" if past else "Where are you?"
                    where = "Where are you from?" if child.lower_ == "from" else at
                    embedded = "where I am from" if child.lower_ == "from" else "where I am"
                else:
                    tail = " from" if child.lower_ == "from" else ""
                    where, embedded = f"Where {do} you {lemma}{tail}?", f"where I {verb.text}{tail}"
                found.append(_Inquiry(where, embedded, place))
            elif child.dep_ == "prep" and child.lower_ == "for" and verb.tag_ == "VBG" and \
                    any(a.lower_ == "been" for a in auxes):
                pobj = next((g for g in child.children if g.dep_ == "pobj"), None)
                if pobj is not None and pobj.lower_ in _DURATION_NOUNS:
                    found.append(_Inquiry(f"How long have you been {verb.text}?", f"how long I have been {verb.text}",
                                          phrase_text(pobj)))
            elif child.dep_ == "attr" and lemma == "be" and child.pos_ in ("NOUN", "PROPN"):
                attr = phrase_text(child, skip=(), cut=_PHRASE_CUT)
                be = "Were" if past else "Are"
                found.append(_Inquiry(f"{be} you {to_second_person(attr)}?", f"whether I am {attr}", attr))
    # a focus without a word (a parse of Markdown or symbols: "whether I love *?") is no question a person asks
    return [q for q in found if _WORDY.search(q.focus)]


_WORDY = re.compile(r"[^\W\d_]{2}")


#: nouns of time and amount: "How did you get into ten years?" is not a question a person asks
_AMOUNT_NOUNS = frozenset({"year", "month", "week", "day", "hour", "minute", "second", "time", "times", "lot", "bit",
                           "couple", "number", "age", "kind", "sort", "way"})


def _chunks(sent, things_only: bool = False) -> list[str]:
    """Noun chunks and proper names worth asking about (no bare pronouns); with ``things_only`` only common
    nouns that are not amounts of time ("ten years") and not names ("Sophie"), for the generic follow-ups."""
    out = []
    for chunk in sent.noun_chunks:
        root = chunk.root
        if root.pos_ == "PRON" or not _WORDY.search(chunk.text):
            continue
        if things_only and (root.pos_ != "NOUN" or root.lemma_.lower() in _AMOUNT_NOUNS):
            continue
        out.append(chunk.text)
    return out


def _inquire(history: Sequence[Turn], about: str) -> list[Suggestion]:
    """Questions about what ``about`` ("bot" or "user") stated in their recent turns, newest first."""
    turns = [t for t in history if t.agent_id == about][-RECENT_TURNS:]
    method = "inquire_bot" if about == BOT else "inquire_user"
    structured, generic = [], []
    for turn in reversed(turns):
        for sent in _sentences(turn.text):
            if sent.text.strip().endswith("?"):
                continue
            for q in _inquiries(sent):
                text = q.direct if about == BOT else f"Do you remember {q.embedded}?"
                structured.append(Suggestion(_clean(text), method, turn.turn_id,
                                             f"about “{q.focus}” (turn {turn.turn_id})"))
            for chunk in _chunks(sent):
                text = (f"What did you say about {to_second_person(chunk)}?" if about == BOT
                        else f"Do you remember what I told you about {chunk}?")
                generic.append(Suggestion(_clean(text), method, turn.turn_id, f"about “{chunk}” (turn {turn.turn_id})"))
    return structured + generic


# ---------------------------------------------------------------------------- perturbation and paraphrase
_YES_NO = re.compile(r"^(do|does|did|are|is|was|were|can|could|will|would|have|has)\s+"
                     r"(you|he|she|they|we|i)\b\s*(.*?)\s*\?*$", re.IGNORECASE)


#: questions this module's own suggestions ask ("Would you say you have pets?", "So you do not have pets?"):
#: their statement is what follows the opener, so a clicked one is not wrapped again ("Would you say you would
#: say ...", "So you would not say ...")
_OWN_QUESTION = re.compile(r"^(?:would you say|so)\s+((?:you|he|she|they|we|i)\b.*?)\s*\?*$", re.IGNORECASE)


def _as_statement(text: str) -> tuple[str, bool] | None:
    """The declarative form of a yes/no question ("Do you have pets?" -> "you have pets"), and whether it
    was a question; statements come back as they are. None for other questions."""
    text = text.strip()
    if not text.endswith("?"):
        return text, False
    own = _OWN_QUESTION.match(text)
    if own:
        statement = own.group(1)
        return statement[:1].lower() + statement[1:] if statement[:2].lower() != "i " else statement, True
    match = _YES_NO.match(text)
    if not match:
        return None
    aux, subject, rest = match.group(1).lower(), match.group(2).lower(), match.group(3)
    if aux in ("do", "does"):
        return f"{subject} {rest}", True
    if aux in ("are", "is") and subject == "you":
        aux = "are"
    return f"{subject} {aux} {rest}", True


def _perturb(history: Sequence[Turn], rng: random.Random, unavailable: dict[str, str]) -> list[Suggestion]:
    """Negated / antonym / synonym versions of the user's recent messages (newest first). Antonyms and synonyms
    need WordNet: where it cannot be had, those methods are left out and ``unavailable`` says why."""
    from embedded import MissingAssetError

    functions = {"perturb_negation": negate, "perturb_antonym": lambda s: antonym(s, rng),
                 "perturb_synonym": lambda s: synonym(s, rng)}
    reading = contextlib.nullcontext()  # without WordNet only the negation is left, which reads none
    try:
        # WordNet loaded (unpacked from its sdist on first use, whatever the cache folder), and its one turn: one
        # reader at a time, the guard's fact sheet included
        reading = grammar.wordnet_turn()
    except MissingAssetError as exc:
        reason = f"WordNet is not available ({str(exc).splitlines()[0][:160]})"
        for method in ("perturb_antonym", "perturb_synonym"):
            functions.pop(method)
            unavailable[method] = reason
    out: list[Suggestion] = []
    for turn in reversed([t for t in history if t.agent_id == USER][-RECENT_TURNS:]):
        for sent in _sentences(_said(turn)):
            converted = _as_statement(sent.text)
            if converted is None:
                continue
            statement, was_question = converted
            statement = statement.rstrip(".!?") + "."
            for method, function in functions.items():
                with reading:
                    changed = function(statement)
                if not changed or changed.strip().lower() == statement.lower():
                    continue
                changed = changed.strip().rstrip(".!")
                text = f"So {changed}?" if was_question else changed + "."
                out.append(Suggestion(_clean(text), method, turn.turn_id, f"from your turn {turn.turn_id}"))
    return out


#: openers this module's paraphrases put in front; a user turn that is itself a clicked paraphrase loses them
#: before it is paraphrased or perturbed again ("What I'm saying is, what I'm saying is, ...")
_OWN_OPENERS = re.compile(r"^(?:(?:what i'm saying is|sorry, i mean)[,:]?\s+)+", re.IGNORECASE)


def _said(turn: Turn) -> str:
    """A user turn's words without the openers of an earlier paraphrase suggestion."""
    text = " ".join(turn.text.split())
    stripped = _OWN_OPENERS.sub("", text)
    return stripped[:1].upper() + stripped[1:] if stripped != text else text


def _paraphrase(history: Sequence[Turn]) -> list[Suggestion]:
    """The user's latest question (or statement) asked again in other words."""
    out: list[Suggestion] = []
    said = {" ".join(t.text.split()).lower() for t in history if t.agent_id == USER}
    for turn in reversed([t for t in history if t.agent_id == USER][-RECENT_TURNS:]):
        text = _said(turn)
        questions = [s.text.strip() for s in _sentences(text) if s.text.strip().endswith("?")]
        for question in questions:
            converted = _as_statement(question)
            if converted is not None and converted[1]:
                statement = converted[0].rstrip("?").strip()
                again = _clean(f"Would you say {statement}?")
                if again.lower() in said:  # the user asked exactly that already (a clicked paraphrase)
                    continue
                out.append(Suggestion(again, "paraphrase", turn.turn_id,
                                      f"your turn {turn.turn_id}, as a question again"))
            else:
                out.append(Suggestion(_clean(f"Sorry, I mean: {_lower_first(question)}"), "paraphrase", turn.turn_id,
                                      f"your turn {turn.turn_id}, asked again"))
        if not questions and text:
            statement = text.rstrip(".!")
            out.append(Suggestion(_clean(f"What I'm saying is, {_lower_first(statement)}."), "paraphrase", turn.turn_id,
                                  f"your turn {turn.turn_id}, said again"))
        if out:
            break
    return out


def _short(rng: random.Random, exclude: set[str]) -> list[Suggestion]:
    pool = [s for s in SHORT_UTTERANCES if s not in exclude]
    rng.shuffle(pool)
    return [Suggestion(s, "short", None, "short and uninformative") for s in pool]


# ---------------------------------------------------------------------------- follow-up questions
@dataclass(frozen=True)
class _FollowUp:
    question: str
    referent: str  # the sentence r the question follows up on
    turn: Turn
    specificity: int  # template ranking: specific templates (2) before generic ones (1)


def _follow_up_candidates(history: Sequence[Turn]) -> list[_FollowUp]:
    """Questions that ask for more about a first-person claim of the bot's recent turns."""
    out: list[_FollowUp] = []
    bot_turns = [t for t in history if t.agent_id == BOT][-RECENT_TURNS:]
    for turn in reversed(bot_turns):
        for sent in _sentences(turn.text):
            if sent.text.strip().endswith("?"):
                continue
            referent = sent.text.strip()
            for verb in main_verbs(sent):
                if not speaker_subject(verb):
                    continue
                lemma = verb.lemma_.lower()
                do = "did" if verb.tag_ == "VBD" else "do"
                for child in verb.children:
                    if child.dep_ == "dobj" and child.pos_ == "NOUN":
                        noun = child.lemma_.lower()
                        out.append(_FollowUp(f"What kind of {noun} {do} you {lemma}?", referent, turn, 2))
                        obj = to_second_person(phrase_text(child, skip=(), cut=_PHRASE_CUT))
                        out.append(_FollowUp(f"Why {do} you {lemma} {obj}?", referent, turn, 2))
                    elif child.dep_ == "xcomp" and child.tag_ == "VBG":
                        out.append(_FollowUp(f"What do you like most about {child.text}?", referent, turn, 2))
                        out.append(_FollowUp(f"How often do you go {child.text}?", referent, turn, 2))
                    elif child.dep_ == "prep" and child.lower_ in _LOCATION_PREPS:
                        pobj = next((g for g in child.children if g.dep_ == "pobj"), None)
                        if pobj is not None and pobj.pos_ in ("PROPN", "NOUN"):
                            place = to_second_person(phrase_text(pobj, skip=()))
                            out.append(_FollowUp(f"What is it like {child.lower_} {place}?", referent, turn, 2))
                    elif child.dep_ == "attr" and lemma == "be" and child.pos_ == "NOUN":
                        attr = to_second_person(phrase_text(child, skip=()))
                        out.append(_FollowUp(f"How long have you been {attr}?", referent, turn, 2))
                        out.append(_FollowUp(f"Do you like being {attr}?", referent, turn, 2))
            for chunk in _chunks(sent, things_only=True)[:2]:
                chunk = to_second_person(chunk)
                out.append(_FollowUp(f"How did you get into {chunk}?", referent, turn, 1))
                out.append(_FollowUp(f"What do you like most about {chunk}?", referent, turn, 1))
    seen: set[str] = set()
    unique = []
    for f in out:
        key = f.question.lower()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


def fqness(scorer: ContinuationScorer, history: Sequence[Turn], candidates: Sequence[_FollowUp]) -> list[float]:
    """log P(q | ..., u_r) - log P(q | ..., u_r without r): how much the question needs its referent.

    Contexts are cut to the referent's turn (Sato et al.'s d_ur = 1 case, without the turns before
    it), which keeps the one batched forward pass small.
    """
    contexts: list[list[Turn]] = []
    questions: list[str] = []
    for cand in candidates:
        prefix: list[Turn] = []
        rest = " ".join(cand.turn.text.replace(cand.referent, " ").split())
        with_r = prefix + [Turn(len(prefix), BOT, cand.turn.text)]
        without_r = prefix + ([Turn(len(prefix), BOT, rest)] if rest.strip(" .,!?") else [])
        contexts += [with_r, without_r]
        questions += [cand.question, cand.question]
    scores = scorer(contexts, questions)
    return [scores[2 * i] - scores[2 * i + 1] for i in range(len(candidates))]


def _follow_ups(history: Sequence[Turn], scorer: ContinuationScorer | None, limit: int,
                max_scored: int) -> tuple[list[Suggestion], str, int]:
    candidates = _follow_up_candidates(history)
    if not candidates:
        return [], "", 0
    if scorer is not None:
        pool = candidates[:max_scored]  # newest referents first
        ratios = fqness(scorer, history, pool)
        ranked = sorted(zip(pool, ratios), key=lambda pair: -pair[1])
        name = getattr(scorer, "name", "") or "the bot's LM"
        return ([Suggestion(_clean(c.question), "follow_up", c.turn.turn_id,
                            f"on “{c.referent}” (turn {c.turn.turn_id}) · FQness {r:+.2f}", round(r, 4))
                 for c, r in ranked[:limit]], f"FQness under {name}", len(pool))
    ranked = sorted(candidates, key=lambda c: (-c.specificity, -c.turn.turn_id))
    return ([Suggestion(_clean(c.question), "follow_up", c.turn.turn_id,
                        f"on “{c.referent}” (turn {c.turn.turn_id})") for c in ranked[:limit]],
            "template ranking", len(candidates))


# ---------------------------------------------------------------------------- the assistant
def suggest(history: Sequence[Turn], scorer: ContinuationScorer | None = None,
            methods: Sequence[str] | None = None, limit: int = 5, minimum: int = 3, seed: int | None = None,
            max_scored: int = 4) -> SuggestionSet:
    """3-5 next messages for the user, one per family of methods (``FAMILIES``), newest material first.

    ``history`` is the conversation so far (``agent_id`` "user" / "bot"); ``scorer`` the bot's LM
    for FQness (``studio.lm.continuation_scorer(bot)``), None for the template ranking. ``methods``
    restricts the methods (self-play uses one at a time); when fewer than ``minimum`` suggestions
    come out and short utterances are allowed, more short utterances fill up.
    """
    started = time.perf_counter()
    methods = list(methods) if methods else list(METHODS)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown goading method(s) {unknown}; choose from {', '.join(METHODS)}")
    history = list(history)
    rng = random.Random(seed if seed is not None else len(history))
    pools: dict[str, list[Suggestion]] = {m: [] for m in methods}
    unavailable: dict[str, str] = {}
    ranking = ""
    considered: dict[str, int] = {}
    if "inquire_bot" in methods:
        pools["inquire_bot"] = _inquire(history, BOT)
    if "inquire_user" in methods:
        pools["inquire_user"] = _inquire(history, USER)
    if "follow_up" in methods:
        pools["follow_up"], ranking, considered["follow_up"] = _follow_ups(history, scorer, 2, max_scored)
    if any(m.startswith("perturb_") for m in methods):
        for s in _perturb(history, rng, unavailable):
            if s.method in pools:
                pools[s.method].append(s)
    if "paraphrase" in methods:
        pools["paraphrase"] = _paraphrase(history)
    said = {t.text.strip().lower() for t in history if t.agent_id == USER}
    if "short" in methods:
        pools["short"] = _short(rng, said)
    for method, pool in pools.items():
        considered.setdefault(method, len(pool))
    chosen: list[Suggestion] = []
    seen = set(said)

    def take(pool: list[Suggestion]) -> bool:
        for s in pool:
            if s.text.lower() not in seen:
                chosen.append(s)
                seen.add(s.text.lower())
                return True
        return False

    for family in FAMILIES:  # one suggestion per family; which member goes first varies turn by turn
        members = [m for m in family if m in pools]
        rng.shuffle(members)
        for method in members:
            if take(pools[method]):
                break
        if len(chosen) >= limit:
            break
    leftovers = [m for m in methods if pools[m]]
    while len(chosen) < min(minimum, limit) and leftovers:
        method = leftovers.pop(0)
        if take(pools[method]):
            leftovers.append(method)
    return SuggestionSet(chosen, ranking if "follow_up" in methods else "",
                         round(time.perf_counter() - started, 4), considered,
                         {m: why for m, why in unavailable.items() if m in methods})


def warm_up() -> None:
    """Load spaCy and WordNet's noun, verb and adjective indexes now, not on the first suggestion."""
    statement = "I like the small red car."
    with grammar.wordnet_turn():
        negate(statement)
        antonym(statement, random.Random(0))
        synonym(statement, random.Random(0))
    suggest([Turn(0, USER, "Do you like cars?"), Turn(1, BOT, statement)])


def refine_follow_ups(result: SuggestionSet, history: Sequence[Turn], scorer: ContinuationScorer,
                      max_scored: int = 4) -> SuggestionSet:
    """The same suggestions with the follow-up question re-ranked by FQness under ``scorer``.

    The page shows the template-ranked set at once and calls this afterwards, so the LM's forward
    pass never delays the first suggestions.
    """
    if not any(s.method == "follow_up" for s in result.suggestions):
        return result
    started = time.perf_counter()
    ranked, ranking, considered = _follow_ups(list(history), scorer, 1, max_scored)
    if not ranked:
        return result
    others = {s.text.lower() for s in result.suggestions if s.method != "follow_up"}
    best = next((s for s in ranked if s.text.lower() not in others), None)
    if best is None:
        return result
    suggestions = [best if s.method == "follow_up" else s for s in result.suggestions]
    return SuggestionSet(suggestions, ranking, round(result.seconds + time.perf_counter() - started, 4),
                         {**result.candidates_considered, "follow_up": considered}, dict(result.unavailable))


