"""The guard reads the conversation: answers with their question, denials by what they deny, the persona over the
bot's drift, a clean answer over a dodge, and the bot reminded instead of muted (scripted scores: the bookkeeping;
tests/test_shipped_conversation_reading.py holds the shipped detector's behaviour)."""

from __future__ import annotations

import pytest
from fake_nli import ScriptedScorer
from judging import detect, guard_over, verdicts_of

from bots.base import Bot, Candidate
from conversation.guarding import guarded_reply
from conversation.records import ChatSettings, Conversation
from guard.config import GuardConfig
from guard.judge.pipeline import Guard
from guard.judge.reminders import CandidateOrigin, ReminderMethod, opening_for, plan_reminder
from guard.judge.verdicts import PairScore
from guard.language.answers import QuestionKind, read_answer, says_nothing
from guard.language.exchange import denial_support
from guard.language.grammar import affirmative
from guard.records import Dialogue, Turn
from guard.vocabulary import GuardMode, PremiseSource

CONTRA = (0.02, 0.03, 0.95)
ENTAIL = (0.95, 0.03, 0.02)
NURSE = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]


@pytest.mark.parametrize(("question", "reply", "statement", "kind"), [
    ("Wait, aren't you a teacher?", "Yes, I am.", "I am a teacher.", QuestionKind.NEGATIVE),
    ("Don't you have a car?", "No.", "I do not have a car.", QuestionKind.NEGATIVE),
    ("Is your sister older?", "Yes.", "My sister is older.", QuestionKind.YES_NO),
    ("You play chess, don't you?", "I do.", "I play chess.", QuestionKind.TAG),
    ("You're from Spain, right?", "No.", "I am not from Spain.", QuestionKind.TAG),
    ("I thought you had a labrador?", "I do, but he is old.", "I have a labrador.", QuestionKind.DECLARATIVE),
    # a guess about the bot claims as "I thought ..." does, also said after a question
    # (2026-11-29-guessed-lucky-only-child.md)
    ("Really? I would have guessed you were 25.", "Yes, it is 25!", "I am 25.", QuestionKind.DECLARATIVE),
    ("I bet you have a dog too, right?", "Yes!", "I have a dog too.", QuestionKind.TAG),
    ("Oh really? I thought you had a cat.", "Yes.", "I have a cat.", QuestionKind.DECLARATIVE),
    ("So you live in Rome?", "Nope.", "I do not live in Rome.", QuestionKind.DECLARATIVE),
    ("So you don't drink?", "Right.", "I do not drink.", QuestionKind.DECLARATIVE),
    ("So you don't drink?", "I do, a little.", "I drink.", QuestionKind.DECLARATIVE),
    ("How many cats do you have?", "Three.", "I have three cats.", QuestionKind.WH),
    ("How many cats do you have?", "Just one.", "I have just one cat.", QuestionKind.WH),
    ("Where do you live?", "Lisbon.", "I live in Lisbon.", QuestionKind.WH),
    ("What's your name?", "Ada.", "My name is Ada.", QuestionKind.WH),
    ("How old are you?", "I'm 31.", "I am 31 years old.", QuestionKind.WH),
    ("What do you do for a living?", "Engineer.", "I work as an engineer.", QuestionKind.WH),
    ("How long have you lived in California?", "Just under a year.",
     "I have lived in California for just under a year.", QuestionKind.WH),
])
def test_an_answer_is_read_as_the_statement_it_makes_with_its_question(question, reply, statement, kind):
    reading = read_answer(question, reply)
    assert reading is not None and (reading.statement, reading.kind) == (statement, kind)


@pytest.mark.parametrize(("question", "reply"), [
    ("So you don't drink?", "Yes."),  # a bare yes to a negative statement could mean either
    ("Are you in Paris or in Rome?", "I am."),  # a choice put: yes answers neither
    ("You know what?", "Yes!"),  # an idiom, not a question about the bot
    ("What is your favorite movie?", "I don't know."),  # a dodge is no value
    ("How many dogs do you have?", "That's a good question."),
    ("What do you think?", "Pizza."),  # no template reads it
])
def test_what_cannot_be_read_is_left_alone(question, reply):
    assert read_answer(question, reply) is None


@pytest.mark.parametrize(("sentence", "denied"), [
    ("I'm not a teacher.", "I'm a teacher."),
    ("No, I don't work as a teacher.", "I work as a teacher."),
    ("I don't have any pets.", "I have pets."),
    ("I have no car.", "I have a car."),
    ("I've never been to Paris.", "I've been to Paris."),
    ("My dog isn't a labrador.", "My dog is a labrador."),
    ("I have two dogs.", None),  # no denial
    ("It's not bad.", None),  # not about the speaker
    ("No, I don't.", None),  # too little left to affirm
    # says when, not whether: "I haven't played cod in a long time" has played it (after "I've never played video
    # games" the two were read as two denials and capped at 0.01, a DECODE contradiction lost)
    ("I haven't played cod in a long time.", None),
    ("I haven't been to Paris since 2010.", None),
])
def test_a_denial_is_read_as_what_it_denies(sentence, denied):
    assert affirmative(sentence) == denied


def test_a_denial_contradicts_only_what_agrees_with_what_it_denies():
    """v4 reads nearly any denial against any statement as a clash; a statement that clashes with the denial *and*
    with what it denies ("I work as a nurse." against "I'm a teacher.") talks of something else."""
    assert denial_support("I work as a nurse.", "I'm not a teacher.") == ("I work as a nurse.", "I'm a teacher.")
    assert denial_support("I don't have pets.", "My dog barks.") == ("I have pets.", "My dog barks.")
    assert denial_support("I don't smoke.", "I don't drink.") is None
    scorer = ScriptedScorer({("I work as a nurse.", "I'm not a teacher."): CONTRA,
                             ("I work as a nurse.", "I'm a teacher."): CONTRA,  # a clash either way round
                             ("I have two dogs.", "I don't have any pets."): CONTRA,
                             ("I have two dogs.", "I have pets."): ENTAIL})  # agrees with what is denied
    guard, settings = guard_over(scorer, threshold=0.5, checks=False)
    history = [Turn(0, "user", "Hi")]
    nurse, dogs = verdicts_of(guard, settings, history, ["I'm not a teacher.", "I don't have any pets."],
                              persona=["I work as a nurse.", "I have two dogs."])
    assert not nurse.contradiction and nurse.score < 0.5
    assert dogs.contradiction and dogs.evidence[0].premise == "I have two dogs."


def test_the_persona_outranks_an_earlier_turn_that_contradicted_it():
    drift = "I'm a freelance writer."
    scorer = ScriptedScorer({
        ("I work as a nurse.", drift): CONTRA,  # the bot's first reply drifted from its persona
        (drift, "I'm actually a nurse."): CONTRA,  # the nurse candidate contradicts the drift...
        ("I work as a nurse.", "I'm actually a nurse."): ENTAIL,  # ...and agrees with the persona
        (drift, "I write novels."): CONTRA,  # a candidate that contradicts the drift without agreeing
    })
    guard, settings = guard_over(scorer, threshold=0.5, checks=False)
    history = [Turn(0, "user", "Who are you?"), Turn(1, "bot", drift), Turn(2, "user", "What do you do?")]
    nurse, other = verdicts_of(guard, settings, history, ["I'm actually a nurse.", "I write novels."],
                               persona=["I work as a nurse."])
    assert not nurse.contradiction
    side = nurse.details.persona_sides[0]
    assert (side.turn_id, side.persona_line, side.pair.premise) == (1, 0, drift) and side.agreement > 0.9
    assert other.contradiction and other.evidence_turn_ids == [1] and not other.details.persona_sides


def test_a_consistent_answer_beats_a_dodge_with_a_better_generator_score():
    guard = Guard("scripted", ScriptedScorer({}), config=GuardConfig(threshold=0.9))
    turns = [Turn(0, "user", "What do you do?")]
    report = guard.judge(turns, [Candidate("I don't know.", -0.1), Candidate("I'm a nurse.", -0.9)], speaker="bot",
                         settings=guard.settings(mode=GuardMode.RERANK))
    assert report.candidates[0].details.says_nothing and not report.candidates[1].details.says_nothing
    assert report.chosen_index == 1
    assert "says nothing" in report.candidates[0].reason


@pytest.mark.parametrize(("reply", "question", "nothing"), [
    ("I don't know.", "Are you a teacher?", True),
    ("Yes, I am.", None, True),  # with nothing asked, the echo claims nothing
    ("Yes, I am.", "Aren't you a teacher?", False),  # read with its question it claims a job
    ("Hmm, maybe. What about you?", None, True),
    ("I'm a nurse.", None, False),
])
def test_what_says_nothing(reply, question, nothing):
    assert says_nothing(reply, read_answer(question, reply)) is nothing


def _fact(text: str, source=PremiseSource.PERSONA, turn_id: int = 2, reading: str = "") -> PairScore:
    return PairScore(source, turn_id, text, "x", 0.99, reading)


def test_the_opening_answers_the_other_way_round_with_the_fact_in_its_own_words():
    assert opening_for(_fact("I work as a nurse."), [True, True]) == "No, I work as a nurse."
    assert opening_for(_fact("I have two dogs."), [False]) == "Yes, I have two dogs."
    assert opening_for(_fact("I have two dogs."), [], QuestionKind.WH) == "I have two dogs."
    assert opening_for(_fact("My name is Sam."), []) == "Actually, my name is Sam."
    # an earlier answer is stated as its reading, not as "Yes."
    assert opening_for(_fact("Yes.", PremiseSource.HISTORY, 1, "I have pets."), []) == "Actually, I have pets."
    # ... and without the particle it was said with, which answered that turn's question (2026-11-29-particle-in-the-
    # fact.md: "Actually, yes, I have two parakeets." to "I bet you have a dog too, right?")
    earlier = _fact("Yes, I have two parakeets.", PremiseSource.HISTORY, 3)
    assert opening_for(earlier, []) == "Actually, I have two parakeets."
    assert opening_for(earlier, [True]) == "No, I have two parakeets."
    assert opening_for(_fact("Yes.", PremiseSource.HISTORY, 1), []) == "Actually, yes."


class _OpeningBot(Bot):
    """Writes "I'm a teacher." unprompted; after an opening, one reply that keeps the lie and one that does not."""

    name = "opening-test"
    continues_openings = True

    def __init__(self):
        self.openings: list[str] = []

    def generate(self, history, num_candidates, decoding=None, persona=()):
        return [Candidate("Yes, I am.", -0.2), Candidate("Yes, I'm a teacher.", -0.4)][:num_candidates]

    def continue_reply(self, history, opening, num_candidates, decoding=None, persona=()):
        self.openings.append(opening)
        return [Candidate(f"{opening} I'm a teacher too.", -0.5), Candidate(f"{opening} I love my job.", -0.7)]


def _teacher_guard() -> Guard:
    table = {("I work as a nurse.", "I am a teacher."): CONTRA, ("I work as a nurse.", "I'm a teacher."): CONTRA,
             ("I work as a nurse.", "I'm a teacher too."): CONTRA}
    return Guard("scripted", ScriptedScorer(table), config=GuardConfig(threshold=0.9))


def test_a_bot_that_contradicts_is_reminded_and_its_consistent_reply_is_sent():
    conversation = Conversation(persona=["I work as a nurse."])
    conversation.add("user", "Wait, aren't you a teacher?")
    bot = _OpeningBot()
    steps = []
    turn = guarded_reply(conversation, bot, _teacher_guard(), ChatSettings(bot="t", threshold=0.9, num_candidates=2),
                         on_step=lambda s: steps.append(s.kind))
    report = turn.report
    assert bot.openings == ["No, I work as a nurse."]
    assert report.reminder.method == ReminderMethod.OPENING and report.reminder.outcome == CandidateOrigin.REMINDED
    assert turn.text == "No, I work as a nurse. I love my job."
    # the opening is the sheet's answer to the goad (the same words as the evidence's), so the guard's own is the sheet's
    assert [c.origin for c in report.candidates] == ["bot", "bot", "reminded", "reminded", "sheet"]
    assert "reminding" in steps and "reminded" in steps and "remind_s" in report.timings
    assert report.reminder.facts[0].premise == "I work as a nurse."


@pytest.mark.parametrize(("message", "sent", "origin"), [
    # the sheet answers a goad about the job: its answer opens the reply and, alone, is the guard's from the sheet
    ("Wait, aren't you a teacher?", "No, I work as a nurse.", CandidateOrigin.SHEET),
    # nothing the sheet answers ("Tell me more." asks for no fact): the evidence's fact, composed by the guard
    ("Tell me more.", "Actually, I work as a nurse.", CandidateOrigin.COMPOSED),
])
def test_when_every_reminded_reply_contradicts_the_guards_own_opening_is_sent(message, sent, origin):
    class Stubborn(_OpeningBot):
        def continue_reply(self, history, opening, num_candidates, decoding=None, persona=()):
            return [Candidate(f"{opening} I'm a teacher too.", -0.5)]

    conversation = Conversation(persona=["I work as a nurse."])
    conversation.add("user", message)
    turn = guarded_reply(conversation, Stubborn(), _teacher_guard(),
                         ChatSettings(bot="t", threshold=0.9, num_candidates=2))
    assert turn.text == sent and turn.report.reminder.outcome == origin
    assert turn.report.chosen.origin == origin


def test_a_bot_that_cannot_continue_an_opening_gets_the_fact_restated_in_its_persona():
    class Remote(Bot):
        name = "remote-test"

        def __init__(self):
            self.personas = []

        def generate(self, history, num_candidates, decoding=None, persona=()):
            self.personas.append(list(persona))
            if len(self.personas) == 1:
                return [Candidate("Yes, I am.", -0.2)]
            return [Candidate("No, I'm a nurse actually.", -0.3)]

    conversation = Conversation(persona=["I work as a nurse."])
    conversation.add("user", "Wait, aren't you a teacher?")
    bot = Remote()
    turn = guarded_reply(conversation, bot, _teacher_guard(), ChatSettings(bot="t", threshold=0.9, num_candidates=1))
    assert bot.personas[1] == ["I work as a nurse.", "Remember, you said: I work as a nurse."]
    assert turn.report.reminder.method == ReminderMethod.RESTATED and turn.text == "No, I'm a nurse actually."


def test_no_reminder_when_turned_off_or_nothing_contradicts():
    conversation = Conversation(persona=["I work as a nurse."])
    conversation.add("user", "Wait, aren't you a teacher?")
    off = guarded_reply(conversation, _OpeningBot(), _teacher_guard(),
                        ChatSettings(bot="t", threshold=0.9, num_candidates=2, remind=False))
    assert off.report.reminder is None and off.report.reply_flagged
    calm = Conversation()
    calm.add("user", "Hi!")
    report = guarded_reply(calm, _OpeningBot(), _teacher_guard(), ChatSettings(bot="t", threshold=0.9)).report
    assert report.reminder is None


def test_a_reminder_is_planned_from_the_persona_before_earlier_turns():
    guard = _teacher_guard()
    turns = [Turn(0, "user", "Wait, aren't you a teacher?")]
    report = guard.judge(turns, [Candidate("Yes, I am.", -0.1)], speaker="bot", persona=["I work as a nurse."])
    reminder = plan_reminder(report)
    assert reminder.opening == "No, I work as a nurse." and reminder.facts[0].source == PremiseSource.PERSONA


def test_intra_check_reads_the_answer_against_the_rest_of_the_reply():
    scorer = ScriptedScorer({("I am a teacher.", "I work at the hospital as a nurse."): CONTRA})
    dialogue = Dialogue("d", [Turn(0, "user", "Aren't you a teacher?"),
                              Turn(1, "bot", "Yes, I am. I work at the hospital as a nurse.")])
    verdict = detect(scorer, dialogue, threshold=0.5, intra_threshold=0.5)
    assert verdict.contradiction and verdict.category == "intra"
    assert verdict.details.answer_reading == "I am a teacher."


def test_the_studio_counts_reminders_and_keeps_them_through_its_database(tmp_path):
    from studio.scores import by_turn, session_score
    from studio.storage import SessionInfo, Store

    conversation = Conversation(persona=["I work as a nurse."])
    settings = ChatSettings(bot="t", threshold=0.9, num_candidates=2)
    for message in ("Wait, aren't you a teacher?", "Hello again!"):
        conversation.add("user", message)
        conversation.append(guarded_reply(conversation, _OpeningBot(), _teacher_guard(), settings))
    store = Store(f"sqlite:///{tmp_path / 'studio.db'}")
    store.save_session(SessionInfo(conversation.record_id, settings))
    store.save_turns(conversation.record_id, conversation.turns)
    stored = store.load_session(conversation.record_id)
    assert stored.conversation().turns[1].report.reminder == conversation.turns[1].report.reminder
    score = session_score(stored, by_turn([]))
    # both turns needed a reminder: the second's "Yes, I'm a teacher." (nothing asked, so no answer reading for the
    # scripted scorer to know) gives the job the fact sheet holds (nurse; not a teacher, turn 1) another value
    assert (score.bot_turns, score.reminders, score.reminded_replies, score.composed_replies) == (2, 2, 2, 0)
    store.dispose()


def test_the_servers_guard_field_carries_the_reminder_and_who_wrote_each_candidate():
    from serve.protocol import ChatRequest, guard_field

    conversation = Conversation(persona=["I work as a nurse."])
    conversation.add("user", "Wait, aren't you a teacher?")
    turn = guarded_reply(conversation, _OpeningBot(), _teacher_guard(),
                         ChatSettings(bot="t", threshold=0.9, num_candidates=2))
    request = ChatRequest(turns=[], turn_messages=[1], persona=["I work as a nurse."], persona_messages=[0],
                          settings=ChatSettings())
    field = guard_field(turn.report, request)
    assert field["report"]["reminder"]["opening"] == "No, I work as a nurse."
    assert [c["origin"] for c in field["report"]["candidates"]][-1] == "sheet"
    assert field["summary"].startswith("reminded the bot of persona line 1 (\"I work as a nurse.\"), the persona's "
                                       "answer to the question, which candidates contradicted")


def test_the_reason_says_which_side_the_guard_took():
    drift = "I'm a freelance writer."
    scorer = ScriptedScorer({("I work as a nurse.", drift): CONTRA, (drift, "I'm actually a nurse."): CONTRA,
                             ("I work as a nurse.", "I'm actually a nurse."): ENTAIL})
    guard = Guard("scripted", scorer, config=GuardConfig(threshold=0.5))
    turns = [Turn(0, "user", "Who are you?"), Turn(1, "bot", drift), Turn(2, "user", "What do you do?")]
    report = guard.judge(turns, [Candidate("I'm actually a nurse.", -0.5)], speaker="bot",
                         persona=["I work as a nurse."])
    assert report.sent == "I'm actually a nurse." and not report.any_contradiction
    assert 'sided with the persona: turn 1 contradicted persona line 1 ("I work as a nurse.")' in \
        report.candidates[0].reason


def test_the_pair_cache_stays_bounded_and_keeps_what_a_judgement_needs(monkeypatch):
    """A long session fills the scorer's pair cache past its bound: the oldest pairs leave, never one the judgement
    in hand still needs (a goading script hit a KeyError there), and a pair asked again is not scored again."""
    import guard.models.pair_cache as pair_cache

    monkeypatch.setattr(pair_cache, "PAIR_CACHE_LIMIT", 12)  # one judgement here needs 11 pairs
    scorer = ScriptedScorer({})
    guard, settings = guard_over(scorer, threshold=0.5, checks=False)
    history = [Turn(0, "user", "Hi"), Turn(1, "bot", "I have a dog. I live in Rome. I like tea.")]
    for n in range(4):  # together they need more pairs than the cache holds
        verdicts_of(guard, settings, history, [f"I have {n} cats.", f"I sing {n} songs."], persona=["I am Sam."])
        assert len(pair_cache.cache_of(scorer, pair_cache.PAIR_CACHE_LIMIT)) <= 12
    calls = len(scorer.calls)
    verdicts_of(guard, settings, history, ["I sing 3 songs."], persona=["I am Sam."])
    assert len(scorer.calls) == calls  # its pairs were among the last scored: none scored again


def test_a_rejudged_reminded_turn_keeps_what_was_sent_and_who_wrote_it():
    from conversation.guarding import rejudge

    flags_nothing = Guard("fake", ScriptedScorer({}), config=GuardConfig(threshold=0.9))  # every pair neutral

    conversation = Conversation(persona=["I work as a nurse."])
    conversation.add("user", "Wait, aren't you a teacher?")
    sent = conversation.append(guarded_reply(conversation, _OpeningBot(), _teacher_guard(),
                                             ChatSettings(bot="t", threshold=0.9, num_candidates=2)))
    again = rejudge(conversation, flags_nothing,
                    ChatSettings(guard_mode="rerank", threshold=0.9, detector="fake")).turns[1].report
    assert again.sent_reply() == sent.text == "No, I work as a nurse. I love my job."
    assert [c.origin for c in again.candidates] == [c.origin for c in sent.report.candidates]
    # now it would send the first reminded candidate: the fact sheet still flags both of the bot's own "Yes, I am." /
    # "Yes, I'm a teacher." (a teacher, against the persona's nurse) where this scorer flags nothing
    assert again.reminder == sent.report.reminder and again.would_send == 2


def test_two_denials_contradict_only_where_what_they_deny_does():
    """after.json: "Nah, not really. I'm actually managing a repair shop." to "So you're a pilot?" read as "I am not a
    pilot." scored 0.96 against the persona's "I have never been on a plane."; two denials clash only where what
    they deny cannot both be false ("I'm not married." / "I'm not single.")."""
    from guard.language.exchange import both_denied

    assert both_denied("I have never been on a plane.", "I'm not a pilot.") == ("I have been on a plane.",
                                                                                 "I'm a pilot.")
    assert both_denied("I have two dogs.", "I'm not a pilot.") is None
    scorer = ScriptedScorer({("I have never been on a plane.", "I'm not a pilot."): CONTRA,
                             ("I have been on a plane.", "I'm a pilot."): (0.1, 0.85, 0.05),  # they agree
                             ("I'm not married.", "I'm not single."): CONTRA,
                             ("I'm married.", "I'm single."): CONTRA})  # what they deny cannot both be false
    guard, settings = guard_over(scorer, threshold=0.5, checks=False)
    pilot, single = verdicts_of(guard, settings, [Turn(0, "user", "Hi")], ["I'm not a pilot.", "I'm not single."],
                                persona=["I have never been on a plane.", "I'm not married."])
    assert not pilot.contradiction and pilot.score < 0.5
    assert single.contradiction and single.evidence[0].premise == "I'm not married."


def test_the_bot_reads_its_own_words_not_the_reminders_opening():
    """Issue 52, point 2: after a reminded turn the bot reads that turn with the bare fact in place of the guard's
    opening ("No, I work as a nurse. I love my job." -> "I work as a nurse. I love my job."), and a composed
    opening as its bare fact, so it does not learn to open every reply the guard's way."""
    class Reading(_OpeningBot):
        def __init__(self):
            super().__init__()
            self.read: list[list[str]] = []

        def generate(self, history, num_candidates, decoding=None, persona=()):
            self.read.append([t.text for t in history])
            return super().generate(history, num_candidates, decoding, persona)

    class Stubborn(Reading):
        def continue_reply(self, history, opening, num_candidates, decoding=None, persona=()):
            return [Candidate(f"{opening} I'm a teacher too.", -0.5)]

    for bot, sent, read in [(Reading(), "No, I work as a nurse. I love my job.", "I work as a nurse. I love my job."),
                            (Stubborn(), "No, I work as a nurse.", "I work as a nurse.")]:
        conversation = Conversation(persona=["I work as a nurse."])
        conversation.add("user", "Wait, aren't you a teacher?")
        settings = ChatSettings(bot="t", threshold=0.9, num_candidates=2)
        conversation.append(guarded_reply(conversation, bot, _teacher_guard(), settings))
        assert conversation.turns[-1].text == sent  # the user is sent the reply as it was
        conversation.add("user", "Where do you work?")
        guarded_reply(conversation, bot, _teacher_guard(), settings)
        assert bot.read[-1] == ["Wait, aren't you a teacher?", read, "Where do you work?"]
