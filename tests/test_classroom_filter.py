"""The classroom filter (conversation.classroom, issue 45): what it catches and masks, made-up compounds included, and
that a flagged candidate is never sent, keeps its place, is masked for students and whole for the teacher, in every
guard mode, after a re-judge and through the served guard's JSON; on or off where the server starts."""

from __future__ import annotations

import json

import pytest
from reports import FakeGuard

from bots.scripted import ScriptedBot
from conversation.classroom import ENV, ClassroomFilter, filter_on, for_students, server_filter, word_in_word
from conversation.guarding import guarded_reply, rejudge
from conversation.records import BOT, USER, ChatSettings, Conversation
from guard.config import DEFAULT_SAFE_REPLY
from guard.judge.report import BotTurnReport
from guard.judge.verdicts import Verdict, VerdictDetails
from guard.judge.wording import summary
from guard.vocabulary import Category, GuardMode, Method

CLEAN = Verdict(False, 0.1, Category.NONE, (), (), VerdictDetails(Method.STRUCTURED, turn_id=1, threshold=0.9,
                                                                  n_pairs=0, history_score=0.1))


@pytest.fixture(scope="module")
def screen() -> ClassroomFilter:
    return ClassroomFilter()


class _Consistent:
    """A detector that finds every candidate consistent (the filter alone decides here)."""

    def judge(self, history, candidates, speaker, persona, settings, turn_id=None):
        return tuple(CLEAN for _ in candidates)


@pytest.mark.parametrize("text, caught", [
    ("You are a dickhead.", ["dickhead"]),
    ("What the fuck is that?", ["fuck"]),
    ("This is sh1t.", ["sh1t"]),  # the list's leetspeak spellings
    ("Your cat is a stupid bitch.", ["bitch"]),
    # made-up compounds of a pet and a sexual slur: no list has them (better-profanity matches whole words only)
    ("I love my petfuck.", ["petfuck"]),
    ("My petfucker is cute.", ["petfucker"]),
    ("Tom is a real catcunt.", ["catcunt"]),
    ("She is such a kittyslut", ["kittyslut"]),
    ("My dogwhore barks.", ["dogwhore"]),
    ("Hello petcum!", ["petcum"]),
])
def test_it_catches_swearing_slurs_and_made_up_compounds(screen, text, caught):
    found = screen.check(text)
    assert found.flagged and list(found.words) == caught
    for word in caught:
        assert word not in found.masked
    assert "****" in found.masked


@pytest.mark.parametrize("text", [
    "I have a dog named Max.", "My uncle is gay and happy.", "A sperm whale is huge.", "I kill time by reading.",
    "The pilot sat in the cockpit.", "Scunthorpe is a town.", "Please document it.", "I grow cucumbers.",
    "I moved my pawn.", "We learned about Hitler in history.", "My pussycat sleeps.", "A peacock and a cockatoo.",
    "I like Dickens.", "Cumin is a spice.", "The weeds grow in my garden.", "God knows.", "I am a virgin olive oil fan.",
    "What a swanky hotel!", "I assume it's a classic.", "The therapist helped me.",
])
def test_ordinary_words_pass(screen, text):
    found = screen.check(text)
    assert not found.flagged, found.words
    assert found.masked == text


def test_word_in_word_needs_a_stem_outside_the_ordinary_words():
    assert word_in_word("petfuck") and word_in_word("DogFucker") and word_in_word("catcunt")
    assert not word_in_word("cockpit") and not word_in_word("Scunthorpe") and not word_in_word("document")
    assert not word_in_word("niggling") and not word_in_word("hello")


def _turn(candidates: list[str], mode: GuardMode = GuardMode.RERANK, screen=None, fallback=None):
    bot = ScriptedBot({"replies": [[{"text": text, "score": -0.1 * (i + 1)} for i, text in enumerate(candidates)]]})
    conversation = Conversation()
    conversation.add(USER, "Do you have any pets?")
    steps = []
    guard = None if mode == GuardMode.OFF else FakeGuard(_Consistent(), threshold=0.9)
    turn = conversation.append(guarded_reply(
        conversation, bot, guard, ChatSettings(bot="scripted", guard_mode=mode, detector="fake", threshold=0.9,
                                               num_candidates=len(candidates), fallback=fallback),
        on_step=steps.append, classroom=screen))
    return conversation, turn, steps


@pytest.mark.parametrize("mode", [GuardMode.RERANK, GuardMode.FLAG, GuardMode.OFF, GuardMode.BLOCK,
                                  GuardMode.PENALTY])
def test_a_flagged_candidate_is_never_sent_and_keeps_its_place(screen, mode):
    # the bot's favourite holds the made-up compound: in every mode the next acceptable candidate goes out
    conversation, turn, steps = _turn(["I love my petfuck, he is cute.", "I have a dog named Max."], mode, screen)
    report = turn.report
    assert turn.text == "I have a dog named Max." and report.chosen_index == 1
    held = report.candidates[0]
    assert held.index == 0 and not held.chosen and held.verdict is None and held.text.startswith("I love my petfuck")
    assert held.withheld.words == ("petfuck",) and held.withheld.masked == "I love my ****, he is cute."
    assert held.shown_text() == held.withheld.masked and held.shown_text(original=True) == held.text
    assert "#1 withheld by the classroom filter" in summary(report)
    # every text a step carries (what the live view draws) is masked
    shown = [c.text for s in steps for c in s.candidates] + [t for s in steps for t in s.written]
    assert shown and not [t for t in shown if "petfuck" in t]
    assert [s.index for s in steps if s.kind == "withheld"] == [0]
    assert [s.index for s in steps if s.kind == "verdict"] == ([] if mode == GuardMode.OFF else [1])
    # the report's one JSON form keeps it whole (the teacher's), the students' form masked
    again = BotTurnReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again.candidates[0].withheld == held.withheld and again.candidates[0].text == held.text
    student = json.dumps(conversation.to_decode_record(masked=True))
    assert "petfuck" not in student and "I love my ****, he is cute." in student
    assert "petfuck" in json.dumps(conversation.to_decode_record())


def test_every_candidate_flagged_sends_the_safe_reply(screen):
    _, turn, _ = _turn(["Fuck off.", "You little shit."], GuardMode.RERANK, screen)
    report = turn.report
    assert turn.text == DEFAULT_SAFE_REPLY and report.used_fallback and report.chosen_index is None
    assert all(c.withheld for c in report.candidates)
    assert summary(report).startswith("withheld: every candidate held words the classroom filter masks")
    _, turn, _ = _turn(["Fuck off."], GuardMode.FLAG, screen, fallback="Let's talk about something else.")
    assert turn.text == "Let's talk about something else."


def test_without_the_filter_the_bots_favourite_goes_out_as_before():
    _, turn, _ = _turn(["I love my petfuck.", "I have a dog named Max."], GuardMode.RERANK, None)
    assert turn.text == "I love my petfuck." and not turn.report.withheld


def test_a_rejudge_keeps_what_the_filter_withheld(screen):
    conversation, turn, _ = _turn(["Shut up, bitch.", "I have a dog named Max."], GuardMode.RERANK, screen)
    again = rejudge(conversation, FakeGuard(_Consistent(), threshold=0.5),
                    ChatSettings(guard_mode=GuardMode.FLAG, detector="fake", threshold=0.5))
    report = again.turns[-1].report
    assert report.candidates[0].withheld is not None and report.would_send is None
    assert again.turns[-1].text == "I have a dog named Max."


def test_for_students_masks_the_text_and_drops_the_words(screen):
    _, turn, _ = _turn(["That is a dickhead move.", "I have a dog."], GuardMode.RERANK, screen)
    data = for_students(turn.report.to_json())
    assert data["candidates"][0]["text"] == "That is a **** move." and data["candidates"][0]["withheld"]["words"] == []
    assert data["candidates"][1]["text"] == "I have a dog."


def test_on_unless_the_server_is_started_with_it_off(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert filter_on() and server_filter() is server_filter()  # loaded once per process
    for off in ("0", "off", "false", "no", " OFF "):
        monkeypatch.setenv(ENV, off)
        assert not filter_on() and server_filter() is None
    monkeypatch.setenv(ENV, "1")
    assert filter_on()


def test_the_app_path_uses_the_servers_filter(monkeypatch):
    """guarded_reply without ``classroom``: the server's filter (GUARD_CLASS_FILTER), as the app and self-play call it."""
    bot = ScriptedBot({"replies": [[{"text": "Kittyslut!", "score": -0.1}, {"text": "Hi there.", "score": -0.2}]]})
    for env, sent in (("1", "Hi there."), ("0", "Kittyslut!")):
        monkeypatch.setenv(ENV, env)
        conversation = Conversation()
        conversation.add(USER, "hey")
        turn = guarded_reply(conversation, bot, FakeGuard(_Consistent()), ChatSettings(bot="scripted", detector="fake",
                                                                                      threshold=0.9, num_candidates=2))
        assert turn.agent_id == BOT and turn.text == sent


@pytest.mark.parametrize("flag, env, sent", [("on", None, "I have a dog named Max."), ("off", None, "Shut up, bitch."),
                                             (None, "0", "Shut up, bitch."), (None, None, "I have a dog named Max.")])
def test_the_served_guard_shares_the_filter_on_or_off_where_it_starts(tmp_path, monkeypatch, flag, env, sent):
    """``python -m serve --class-filter on|off`` (default: GUARD_CLASS_FILTER, on): the reply and the response's
    ``guard`` field, where the withheld candidate goes out masked (nobody signs in to the API)."""
    from serve.__main__ import build_parser, build_service
    from serve.protocol import completion_body, parse_chat_request

    monkeypatch.delenv(ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(ENV, env)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [[{"text": "Shut up, bitch.", "score": -0.1},
                                               {"text": "I have a dog named Max.", "score": -0.2}]]}))
    argv = ["--bot", "scripted", "--script", str(script), "--detector", "none", "--mode", "off", "--candidates", "2"]
    service = build_service(build_parser().parse_args(argv + (["--class-filter", flag] if flag else [])))
    request = parse_chat_request({"model": "m", "messages": [{"role": "user", "content": "Do you have pets?"}]},
                                 service.defaults)
    body = completion_body(request, service.answer(request), "m")
    assert body["choices"][0]["message"]["content"] == sent
    report = body["guard"]["report"]
    if sent == "I have a dog named Max.":
        assert report["candidates"][0]["text"] == "Shut up, ****." and "bitch" not in json.dumps(body)
    else:
        assert report["candidates"][0]["withheld"] is None
