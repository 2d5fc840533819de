"""The default bot holds a conversation (issue 19): no copied turns, no duplicate candidates.

Plumbing on the tiny Llama (both engines): ``history_ngram_size`` bans the runs of earlier turns, the bans
reach CTranslate2 as ``suppress_sequences`` and transformers as ``bad_words_ids``, ``repetition_penalty`` is
passed on, candidates are de-duplicated. Then the real embedded bot, seeded, on the loop a user saw: once
it had introduced itself twice, it gave that introduction again to "Do you have any pets?".
"""

from __future__ import annotations

import pytest
from tiny_models import HISTORY

from bots import ct2
from bots.base import PRESETS, DecodingConfig
from bots.embedded import ChatTemplateBot
from bots.hf import plan_generation
from bots.local import distinct_replies
from guard.records import Candidate, Turn

pytestmark = pytest.mark.usefixtures("module_cache_dir")


def test_settings_are_validated_and_mapped_to_both_engines():
    with pytest.raises(ValueError, match="history_ngram_size"):
        DecodingConfig(history_ngram_size=1)
    with pytest.raises(ValueError, match="repetition_penalty"):
        DecodingConfig(repetition_penalty=0.0)
    decoding = PRESETS["fast"].replace(repetition_penalty=1.2)
    assert ct2.generation_options(decoding, 4).kwargs["repetition_penalty"] == 1.2
    assert plan_generation(decoding, 4).kwargs["repetition_penalty"] == 1.2
    assert "repetition_penalty" not in plan_generation(PRESETS["fast"], 4).kwargs  # 1 = off: not passed
    assert PRESETS["fast"].history_ngram_size == 4


def test_distinct_replies_drops_copies_and_what_was_already_said():
    candidates = [Candidate("I have a dog.", -0.5), Candidate("i have a DOG", -0.2), Candidate("I'm Sam.", -0.1),
                  Candidate("I live in Portland.", -0.9)]
    kept = distinct_replies(candidates, earlier_replies=["I'm Sam!"])
    assert [c.text for c in kept] == ["i have a DOG", "I live in Portland."]  # best copy kept, best first
    # when every candidate repeats an earlier reply, they stay (the bot must answer something)
    assert [c.text for c in distinct_replies([Candidate("I'm Sam.", -0.1)], ["I'm Sam"])] == ["I'm Sam."]


def test_the_bot_bans_every_run_of_the_earlier_turns(llama_dir):
    bot = ChatTemplateBot.from_pretrained(llama_dir, engine="ctranslate2")
    seen = {}
    real = bot.engine.generate

    def spy(*args, **kwargs):
        seen["banned"] = kwargs["banned_sequences"]
        return real(*args, **kwargs)

    bot.engine.generate = spy
    bot.generate(HISTORY, 2, PRESETS["fast"].replace(max_new_tokens=4, seed=1))
    banned = {tuple(b) for b in seen["banned"]}
    assert banned and all(len(b) == 4 for b in banned)
    for message in HISTORY:
        for variant in (message.text, " " + message.text):
            ids = bot.tokenizer(variant, add_special_tokens=False)["input_ids"]
            assert {tuple(ids[i:i + 4]) for i in range(len(ids) - 3)} <= banned
    bot.generate(HISTORY, 2, PRESETS["fast"].replace(max_new_tokens=4, seed=1, history_ngram_size=0))
    assert seen["banned"] == []


@pytest.mark.parametrize("engine", ["ctranslate2", "transformers"])
def test_a_banned_run_cannot_be_generated(llama_dir, engine):
    """The greedy reply changes once its opening tokens are banned, and never holds a banned run."""
    bot = ChatTemplateBot.from_pretrained(llama_dir, engine=engine)
    prompt = bot.prompt_ids(HISTORY, ())
    greedy = DecodingConfig(method="greedy", max_new_tokens=8)
    (free,) = bot.engine.generate(prompt, greedy, 1)  # no end tokens: 8 tokens each
    opening = bot.tokenizer(free.text, add_special_tokens=False)["input_ids"][:2]
    assert len(opening) == 2
    (banned,) = bot.engine.generate(prompt, greedy, 1, banned_sequences=[opening])
    assert banned.text != free.text
    ids = bot.tokenizer(banned.text, add_special_tokens=False)["input_ids"]
    assert all(ids[i:i + 2] != opening for i in range(len(ids) - 1))


SOPHIE = "I'm Sophie, a no-nonsense AI chatbot with a no-nonsense attitude."


def _word_runs(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = text.lower().replace(",", " ").replace(".", " ").split()
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_the_embedded_bot_does_not_repeat_itself(embedded_bot):
    """Issue 19's loop: the introduction said twice, then "Do you have any pets?" and "Where do you live?".
    On main (42438b7) the best candidate at this seed was the introduction again, word for word."""
    history = [Turn(0, "user", "Hi! Who are you?"), Turn(0, "bot", SOPHIE),
               Turn(0, "user", "Nice to meet you. How are you today?"), Turn(0, "bot", SOPHIE),
               Turn(0, "user", "Do you have any pets?")]
    pets = embedded_bot.generate(history, 4, PRESETS["fast"].replace(seed=1))
    assert pets and all(c.text != SOPHIE for c in pets)
    assert len({c.text for c in pets}) == len(pets)
    best = _word_runs(pets[0].text)
    assert len(best & _word_runs(SOPHIE)) <= len(best) / 2  # not the introduction again, reworded a little
    history += [Turn(0, "bot", pets[0].text), Turn(0, "user", "Where do you live?")]
    home = embedded_bot.generate(history, 4, PRESETS["fast"].replace(seed=2))
    assert home[0].text != pets[0].text and all(c.text not in (SOPHIE, pets[0].text) for c in home)
