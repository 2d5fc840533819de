"""Replies end where a sentence ends (bots.base.complete_sentences), whichever backend wrote them."""

from __future__ import annotations

import pytest

from bots.base import complete_sentences


@pytest.mark.parametrize("text, expected", [
    ("I've got a few furry", "I've got a few…"),  # no sentence complete: whole words and an ellipsis
    ("I love dogs! I've got a few furry", "I love dogs!"),
    ("I saw Dr. Smith today. He was", "I saw Dr. Smith today."),  # an abbreviation is no sentence end
    ("I met J. Smith there. We", "I met J. Smith there."),
    ("Great! 😄 I have", "Great! 😄"),  # an emoji after the full stop stays with its sentence
    ('He said "no." Then he', 'He said "no."'),
    ("I like 3.5 apples and", "I like 3.5 apples…"),
    ("I have a dog,", "I have a dog…"),  # the last word is whole (a comma follows it)
    ("Yes, I do. My dog, Max,", "Yes, I do."),
    ("Hi.", "Hi."),
    ("ok", "ok…"),
])
def test_a_cut_reply_keeps_its_complete_sentences(text, expected):
    assert complete_sentences(text, cut=True) == expected


def test_a_reply_that_ended_on_its_own_is_kept():
    assert complete_sentences("  Sure thing  ", cut=False) == "Sure thing"
    assert complete_sentences("I love dogs! And cats", cut=False) == "I love dogs! And cats"


def test_a_cut_inside_an_emoji_leaves_no_replacement_character():
    from tiny_models import byte_level_tokenizer

    tokenizer = byte_level_tokenizer()
    ids = tokenizer("I love it 😄 so much", add_special_tokens=False)["input_ids"]
    # decode every prefix: some end inside the emoji's four UTF-8 bytes and decode to U+FFFD
    prefixes = [tokenizer.decode(ids[:k]) for k in range(1, len(ids) + 1)]
    broken = [p for p in prefixes if "\ufffd" in p]
    assert broken, "the byte-level tokenizer splits the emoji across tokens"
    for text in broken:
        trimmed = complete_sentences(text, cut=True)
        assert "\ufffd" not in trimmed and trimmed.endswith("…")
        assert "\ufffd" not in complete_sentences(text, cut=False)
