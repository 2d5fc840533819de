"""PLATO-style ranking with the embedded sentence embedder, and the MuTual response-selection metrics."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

import embedded
from bots.base import PRESETS, Bot, BotError, Candidate, DecodingConfig
from bots.mutual import evaluate_ranker, read_mutual, selection_metrics, split_turns
from bots.plato import EmbeddingCoherence, PlatoBot, make_plato_bot
from bots.registry import make_bot
from guard.records import Turn


@pytest.fixture(scope="module")
def coherence():
    try:
        return EmbeddingCoherence.embedded(window=2)
    except embedded.MissingAssetError as exc:
        pytest.skip(str(exc))


class ScriptedBot(Bot):
    """A base generator with fixed replies per temperature; records how PLATO called it."""

    name = "scripted"

    def __init__(self, replies: dict[float, list[Candidate]]):
        self.replies = replies
        self.calls: list[DecodingConfig] = []

    def generate(self, history, num_candidates, decoding=None, persona: Sequence[str] = ()):
        self.calls.append(decoding)
        return self.replies[decoding.temperature][:num_candidates]


def test_embedding_coherence_prefers_on_topic_replies(coherence):
    context = ["I play the guitar in a small band.", "What kind of music do you play with your band?"]
    scores = coherence.score(context, ["We mostly play blues and rock songs on guitar.",
                                       "The quarterly tax form is due on Monday."])
    assert scores[0] > scores[1]


def test_plato_ranks_diverse_samples_by_coherence(coherence):
    replies = {
        0.7: [Candidate("Our band plays mostly blues music.", -0.5), Candidate("I like turtles.", -0.2)],
        1.0: [Candidate("our band plays mostly blues music.", -0.9), Candidate("Taxes are due Monday.", -0.1)],
        1.3: [Candidate("We play rock songs with two guitars.", -1.5)],
    }
    base = ScriptedBot(replies)
    bot = PlatoBot(base, coherence, num_samples=5, temperatures=(0.7, 1.0, 1.3))
    history = [Turn(0, "user", "I play the guitar in a small band."),
               Turn(0, "bot", "Cool!"), Turn(0, "user", "What music does your band play?")]
    candidates = bot.generate(history, 3, PRESETS["fast"].replace(seed=5))
    assert [c.temperature for c in base.calls] == [0.7, 1.0, 1.3]
    assert [c.seed for c in base.calls] == [5, 6, 7]                    # a distinct seed per temperature
    assert [c.num_samples for c in base.calls] == [None] * 3
    texts = [c.text for c in candidates]
    assert len(texts) == 3 and len({t.lower() for t in texts}) == 3     # case-duplicates merged
    assert "Taxes are due Monday." not in texts and "I like turtles." not in texts[:1]
    assert [c.score for c in candidates] == sorted((c.score for c in candidates), reverse=True)
    expected = coherence.score([m.text for m in history], texts)
    assert [c.score for c in candidates] == pytest.approx(expected, abs=1e-5)


def test_registry_builds_plato_over_a_registered_base(coherence):
    bot = make_bot("plato", base="scripted", num_samples=3, window=1,
                   script={"replies": [["We play blues.", "Taxes are due Monday."]]})
    assert isinstance(bot, PlatoBot) and bot.base.name == "scripted" and bot.num_samples == 3
    assert bot.scorer.window == 1
    (best,) = bot.generate([Turn(0, "user", "What music does your band play?")], 1)
    assert best.text == "We play blues."


def test_unknown_ranker_fails_before_the_base_bot_is_built():
    def base() -> Bot:
        raise AssertionError("the base bot must not be built for an invalid ranker")

    with pytest.raises(BotError, match="unknown PLATO ranker 'nope'"):
        make_plato_bot(base, ranker="nope")
    with pytest.raises(BotError, match="unknown PLATO ranker 'nope'"):
        make_bot("plato", base="scripted", ranker="nope")


def test_split_turns_and_reader(tmp_path):
    assert split_turns("m : hi , della . f : only 4 days . m : ok .") == ["hi , della .", "only 4 days .", "ok ."]
    path = tmp_path / "mutual.jsonl"
    path.write_text(json.dumps({"id": "dev_1", "answers": "C", "article": "m : i have a dog . f : what 's its name ?",
                                "options": ["f : a .", "m : b .", "m : its name is rex .", "m : d ."]}) + "\n")
    (item,) = read_mutual(path)
    assert item.turns == ["i have a dog .", "what 's its name ?"]
    assert item.options[2] == "its name is rex ." and item.answer == 2


def test_selection_metrics_known_values():
    scores = [[0.9, 0.1, 0.2, 0.3],   # right answer 0 ranked 1st
              [0.9, 0.5, 0.2, 0.3],   # right answer 1 ranked 2nd
              [0.9, 0.5, 0.4, 0.3]]   # right answer 3 ranked 4th
    metrics = selection_metrics(scores, [0, 1, 3])
    assert metrics.r_at_1 == pytest.approx(1 / 3)
    assert metrics.r_at_2 == pytest.approx(2 / 3)
    assert metrics.mrr == pytest.approx((1 + 1 / 2 + 1 / 4) / 3)
    assert metrics.n == 3


def test_evaluate_ranker_with_the_embedder(coherence, tmp_path):
    items = [
        {"id": "a", "answers": "B", "article": "m : do you want to go swimming at the beach ? f : yes , i love the sea .",
         "options": ["m : the printer is out of paper .", "m : great , let 's bring towels to the beach .",
                     "m : my exam in algebra is tomorrow .", "m : the stock price fell ."]},
    ]
    path = tmp_path / "dev.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in items))
    metrics = evaluate_ranker(coherence, read_mutual(path))
    assert metrics.r_at_1 == 1.0 and metrics.mrr == 1.0
