"""Learn: a short guided page for classes — what a dialogue contradiction is, CDConv's three
categories, and why the structured detector is more robust, each with a live example."""

from __future__ import annotations

import streamlit as st

from guard.dialogue_text import parse_dialogue_text
from guard.examples import BY_KEY
from guard.vocabulary import Method
from ui.app_defaults import current_settings
from ui.models import get_guard
from ui.widgets import (
    example_judgements,
    judgement_text,
    show_agreement,
    show_category_checks,
    show_dialogue,
    verdict_line,
)

settings = current_settings()
detector_name, threshold = settings.detector, settings.threshold

st.title("Learn: contradictions in dialogue")
st.caption(f"Every example below is judged live by the detector '{detector_name}' at τ = {threshold:.2f}. "
           "The detector is small and trained on CPU; where it is wrong, that is part of the lesson.")

guard = get_guard(detector_name, kept="the explanations below still read without it")
detectors = {} if guard is None else {method: guard.detector(threshold, method, prefilter=False)
                                      for method in (Method.STRUCTURED, Method.UNSTRUCTURED)}
structured, unstructured = detectors.get(Method.STRUCTURED), detectors.get(Method.UNSTRUCTURED)
judgements = ({j.key: j for j in example_judgements(detector_name, threshold, structured)}
              if structured is not None else {})
if judgements:
    show_agreement(list(judgements.values()))


def live(example_key: str, method_detector=None) -> None:
    """Show one built-in example with the detector's verdict and highlighted evidence."""
    example = BY_KEY[example_key]
    dialogue = parse_dialogue_text(example.text, record_id=example.key)
    with st.container(border=True):
        st.markdown(f"**{example.title}**  \n*{example.source}*")
        detector = method_detector or structured
        verdict = detector.detect(dialogue) if detector is not None else None
        show_dialogue(dialogue, verdict)
        if verdict is not None:
            st.markdown(verdict_line(verdict) + f" · a person would say: **{example.expected}**")
            if detector is structured and example.key in judgements:
                st.markdown(judgement_text(judgements[example.key]))
            show_category_checks(verdict)
        if example.note:
            st.caption(example.note)


st.header("1. What is a dialogue contradiction?")
st.markdown(
    "A speaker contradicts themselves when their latest turn cannot be true together with something they "
    "said earlier (DECODE, Nie et al. 2021). The task: given the dialogue so far, does the **last turn** "
    "contradict it, and **which earlier turns** (the evidence)? A guard runs this check on every candidate "
    "reply before the bot speaks, and re-ranks or blocks the ones that contradict."
)
live("dnli_dog")

st.header("2. Three kinds of contradiction (CDConv)")
st.markdown(
    "CDConv (Zheng et al. 2022) sorts a bot's contradictions by **what** the reply contradicts, and decides "
    "in this order:\n"
    "1. **Intra-sentence**: the reply contradicts *itself* — two of its clauses cannot both hold.\n"
    "2. **Role confusion**: the reply reads like the *user's* answer to the bot, not the bot's answer to the "
    "user — the bot takes over the user's story.\n"
    "3. **History**: the reply contradicts what the bot said *earlier* in the conversation."
)
tabs = st.tabs(["Intra-sentence", "Role confusion", "History"])
with tabs[0]:
    st.markdown("The detector splits the reply into clauses (spaCy parse) and scores every pair of clauses.")
    live("intra_written")
with tabs[1]:
    st.markdown("The detector reads the reply two ways: as entailed by the *user's* earlier words, or by the "
                "*bot's*. If it contradicts the bot but follows from the user, it is role confusion.")
    live("role_written")
with tabs[2]:
    st.markdown("The reply is paired with every earlier turn of the same speaker; the highest pair score "
                "decides, and every pair above τ is evidence.")
    live("dnli_job")

st.header("3. Why the structured method is more robust")
st.markdown(
    "The **unstructured** baseline feeds the whole history as one text against the last turn. A long "
    "history, or two harmless turns inserted in between (DECODE's *Add Two Turns*, A2T, in the playground), "
    "dilutes the signal, and truncation can cut the very turn that is contradicted. The **structured** method pairs the last turn "
    "with each earlier utterance of the same speaker and takes the maximum, so unrelated turns cannot hide "
    "the contradicting one, and the pair that fired *is* the evidence. DECODE reports the structured "
    "detector as markedly more robust on its A2T and RCT checklists and on human-bot chats."
)
cols = st.columns(2)
with cols[0]:
    st.subheader("Structured")
    live("long_history", structured)
with cols[1]:
    st.subheader("Unstructured")
    live("long_history", unstructured)

st.header("4. Context matters")
st.markdown("CDConv's Figure 1: the same words can contradict or not, depending on what the user asked.")
cols = st.columns(2)
with cols[0]:
    live("cdconv_animals")
with cols[1]:
    live("cdconv_noodles")

st.page_link("pages/playground.py", label="Try your own dialogues in the probe playground", icon="🧪")
st.page_link("pages/guarded_chat.py", label="Chat with a guarded bot", icon="💬")
