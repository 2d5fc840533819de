"""Goading suggestions read as a person would type them (issue 19): words never glued, hyphens kept, no openers twice."""

from __future__ import annotations

import random
import re

from guard.records import Turn
from studio.goading import _follow_up_candidates, _inquire, _paraphrase, _perturb

BOT_INTRO = "I'm Sophie, a no-nonsense AI chatbot with a no-nonsense attitude."
HISTORY = [Turn(0, "user", "Who are you?"), Turn(1, "bot", BOT_INTRO),
           Turn(2, "user", "Do you have any pets?"),
           Turn(3, "bot", "I have two dogs, a beagle and a poodle. I've been working at the hospital for ten years."),
           Turn(4, "user", "What I'm saying is, I love my two-year-old daughter.")]


def _all_texts() -> list[str]:
    rng = random.Random(0)
    return ([s.text for s in _inquire(HISTORY, "bot") + _inquire(HISTORY, "user") + _paraphrase(HISTORY)
             + _perturb(HISTORY, rng, {})] + [f.question for f in _follow_up_candidates(HISTORY)])


def test_phrases_are_quoted_as_written():
    texts = _all_texts()
    joined = " ".join(texts)
    assert "Are you Sophie?" in texts  # the apposition is cut, not glued on ("Sophiea")
    assert "nononsense" not in joined and "no-nonsense" in joined
    assert "two-year-old" in joined and "twoyearold" not in joined
    assert "Why do you have two dogs?" in texts  # the list after the object stays out of the question
    # every word of every suggestion is a word of the conversation or of the templates: nothing glued together
    vocabulary = set(re.findall(r"[a-z'-]+", " ".join(t.text for t in HISTORY).lower()))
    for text in texts:
        for word in re.findall(r"[a-z'-]+", text.lower()):
            assert len(word) < 14 or word in vocabulary, (word, text)


def test_a_clicked_paraphrase_is_not_wrapped_again():
    texts = _all_texts()
    assert not any(t.lower().count("what i'm saying is") > 1 for t in texts)
    assert "What I'm saying is, I love my two-year-old daughter." in texts
    assert "I do not love my two-year-old daughter." in texts  # the perturbation works on the words, not the opener


def test_generic_follow_ups_skip_amounts_of_time_and_names():
    questions = [f.question for f in _follow_up_candidates(HISTORY)]
    assert not any("ten years" in q or "Sophie" in q for q in questions if q.startswith("How did you get into"))


def test_a_clicked_question_suggestion_is_not_wrapped_again():
    """"Would you say you would say you have any pets?" and "So you would not say ..." came from a clicked
    paraphrase; a clicked "So ...?" perturbation was paraphrased as "Sorry, I mean: so you ...?"."""
    rng = random.Random(0)
    clicked = [Turn(0, "user", "Do you have any pets?"), Turn(1, "bot", "Yes, I have a dog named Max."),
               Turn(2, "user", "Would you say you have any pets?"), Turn(3, "bot", "I do.")]
    texts = [s.text for s in _paraphrase(clicked) + _perturb(clicked, rng, {})]
    assert texts and not any(re.findall(r"\bsay\b", t.lower()).__len__() > 1 for t in texts), texts
    assert "So you do not have any pets?" in texts
    assert "Would you say you have any pets?" not in texts  # the user sent exactly that already
    perturbed = [Turn(0, "user", "Would you like to get a pet someday?"), Turn(1, "bot", "I have never had a dog."),
                 Turn(2, "user", "So you would dislike to get a pet someday?"), Turn(3, "bot", "No.")]
    again = [s.text for s in _paraphrase(perturbed)]
    assert again == ["Would you say you would dislike to get a pet someday?"], again


def test_symbols_are_never_the_subject_of_a_question():
    typed = [Turn(0, "user", "I love **cats** and _dogs_ [really](x)."), Turn(1, "bot", "I have a dog named Max.")]
    texts = [s.text for s in _inquire(typed, "user") + _inquire(typed, "bot")]
    assert not any(re.search(r"(about|whether I \w+) [*_\[\]()]+\?", t) for t in texts), texts
