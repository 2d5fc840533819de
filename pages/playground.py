"""Probe playground: write or pick a dialogue, compare structured and unstructured detection,
apply DECODE's A2T / RCT probes and watch the verdict hold or flip."""

from __future__ import annotations

import streamlit as st

from guard.eval import probes
from guard.eval.dialogue_text import DialogueTextError, dialogue_to_text, parse_dialogue_text
from guard.eval.examples import BY_KEY, EXAMPLES
from guard.judge.wording import score_and_threshold
from guard.records import Dialogue
from guard.vocabulary import METHODS, Method, category_name
from ui import navigation
from ui.app_defaults import current_settings, shown_threshold
from ui.class_models import shown_name
from ui.models import a2t_pool, get_guard
from ui.probe_log import METHOD_WORDS, inserted_turns_note, log_rows, removed_turns_note
from ui.render import escape_markdown, tau_words
from ui.sheet_widgets import dialogue_sheet
from ui.verdict_checks import every_check_note, show_category_checks
from ui.widgets import (
    example_judgements,
    heatmap,
    judgement_text,
    show_agreement,
    show_dialogue,
    show_evidence_table,
    show_table,
    verdict_line,
)

navigation.only_in_the_app(navigation.PLAYGROUND)  # run alone by Streamlit: the app is offered instead

settings = current_settings()
detector_name, threshold = settings.detector, settings.threshold  # None: the detector's own τ
state = st.session_state
state.setdefault("pg_example", EXAMPLES[0].key)
state.setdefault("pg_text", BY_KEY[state["pg_example"]].text)
state.setdefault("pg_log", [])  # probe history: what was applied and whether the verdict held
state.setdefault("pg_a2t_seed", 0)
if "pg_text_next" in state:  # a probe rewrote the dialogue: apply before the text area exists
    state["pg_text"] = state.pop("pg_text_next")
if "pg_a2t_seed_next" in state:
    state["pg_a2t_seed"] = state.pop("pg_a2t_seed_next")


def load_example() -> None:
    state["pg_text"] = BY_KEY[state["pg_example"]].text
    state["pg_log"] = []
    state.pop("pg_result", None)


st.title("Probe playground")
st.caption(escape_markdown(f"Detector: {shown_name(detector_name)}, flagging from {tau_words(shown_threshold(settings))} (the "
                           "threshold τ; change both in "
                           "the sidebar)"))

left, right = st.columns([3, 2])
# both methods over one guard: a detector that fails to load is reported once
guard = get_guard(detector_name, kept="your dialogue and the probe log are kept")
# every check, every earlier sentence (no prefilter), at the sidebar's τ: one settings record per method
methods = None if guard is None else {method: guard.settings(mode="flag", method=method, threshold=threshold,
                                                             prefilter=False, checks=True) for method in METHODS}
if guard is not None:
    st.caption(escape_markdown(every_check_note(guard.config.checks)))
judgements = ({j.key: j for j in example_judgements(guard, methods[Method.STRUCTURED])}
              if methods is not None else {})
with right:
    st.selectbox("Built-in example", [e.key for e in EXAMPLES], key="pg_example", on_change=load_example,
                 format_func=lambda k: BY_KEY[k].title)
    example = BY_KEY[state["pg_example"]]
    if state["pg_text"].strip() == example.text.strip():  # what people say is about the example, not a typed dialogue
        st.caption(escape_markdown(f"Source: {example.source}. A person would say: {category_name(example.expected)}."))
        if example.note:
            st.caption(escape_markdown(example.note))
        if example.key in judgements:
            st.markdown(judgement_text(judgements[example.key]))
    else:
        st.caption("This dialogue is not the example as written (typed, or changed by a probe), so what people say "
                   "about the example is not shown beside it. \"Reset to example\" brings the example back.")
    st.number_input("Which real exchange to add (A2T seed)", min_value=0, step=1, key="pg_a2t_seed",
                    help="Which pair of turns from real chats is added; each use moves it on by one, so the next one "
                         "draws another pair.\n\nTechnical: the A2T probe's seed over the chitchat-dataset package's "
                         "conversations.")
with left:
    st.text_area("Dialogue — one turn a line, `Speaker: text`; the last line is judged", key="pg_text",
                 height=220)

if judgements:
    show_agreement(list(judgements.values()))

buttons = st.columns(4)
run_detect = buttons[0].button("Detect", type="primary", icon="🔎", width="stretch")
run_a2t = buttons[1].button("Add two turns (A2T)", icon="➕", width="stretch",
                            help="Puts two turns from a real chat between the reason and the judged turn. A "
                                 "contradiction should stay a contradiction.\n\nTechnical: DECODE's Add Two Turns "
                                 "probe.")

run_rct = buttons[2].button("Remove the reason (RCT)", icon="✂️", width="stretch",
                            help="Deletes the turns the detector gave as its reason (with the other speaker's turn "
                                 "before each). The contradiction should disappear.\n\nTechnical: DECODE's Remove "
                                 "Contradicting Turns probe.")
if buttons[3].button("Reset to example", icon="↩️", width="stretch"):
    state["pg_text_next"] = BY_KEY[state["pg_example"]].text
    state["pg_log"] = []
    state.pop("pg_result", None)
    st.rerun()


def analyse(dialogue: Dialogue) -> dict | None:
    """Both methods on the dialogue, or None if the detector did not load (its error is shown above)."""
    if methods is None:
        return None
    reports = {m: guard.judge_dialogue(dialogue, settings) for m, settings in methods.items()}
    return {"text": dialogue_to_text(dialogue), "dialogue": dialogue,
            "sheet": reports[Method.STRUCTURED].sheet,  # the structured guard's reading of the speaker's facts
            **{m: report.candidates[0].verdict for m, report in reports.items()}}


def apply(kind: str, dialogue: Dialogue, before: dict) -> None:
    """Run probe ``kind`` on the dialogue (evidence = the structured detector's), judge the variant."""
    verdict = before[Method.STRUCTURED]
    labelled = Dialogue(dialogue.record_id, dialogue.turns, label=verdict.contradiction,
                        evidence=verdict.evidence_turn_ids, persona=dialogue.persona)
    if not verdict.contradiction or not labelled.evidence:
        st.warning(f"{kind.upper()} starts from a detected history contradiction with evidence turns; the "
                   "detector found none here. Pick a contradicting example or raise the stakes in the text.",
                   icon="ℹ️")
        return
    seed = int(state["pg_a2t_seed"])
    probe = probes.make_probe(kind, pool=a2t_pool() if kind == "a2t" else (), seed=seed)
    cases = probe(labelled)
    if not cases:
        st.warning(f"{kind.upper()} could not build a variant of this dialogue (A2T needs exactly two speakers; "
                   "RCT needs some history left after removing the evidence).", icon="ℹ️")
        return
    case = cases[0]
    # judged as the editor will show it: turns numbered 0..n-1 in order (the probe's own ids put A2T's inserted turns
    # after the judged one: 0, 1, 2, 4, 5, 3)
    variant = case.variant.renumbered()
    after = analyse(variant)
    if after is None:
        return
    expected = case.variant.label
    held = {m: bool(after[m].contradiction) == bool(expected) for m in METHODS}
    state["pg_log"].append({
        "probe": kind.upper(), "expectation": "stays a contradiction" if expected else "flips to no contradiction",
        "before": {m: before[m].score for m in held}, "after": {m: after[m].score for m in held},
        "held": held, "meta": {k: v for k, v in case.variant.meta.items() if k in ("inserted_at", "removed_turn_ids")},
        "changed": (inserted_turns_note(case.variant, seed) if kind == "a2t"
                    else removed_turns_note(dialogue, case.variant)),
        "text": after["text"],  # the dialogue the probe left: the log goes on only from it
    })
    if kind == "a2t":
        state["pg_a2t_seed_next"] = seed + 1  # the next A2T draws another pair; the seed box shows which
    state["pg_text_next"] = after["text"]
    state["pg_result"] = after


if run_detect or run_a2t or run_rct:
    try:
        dialogue = parse_dialogue_text(state["pg_text"], record_id=state["pg_example"])
    except DialogueTextError as exc:
        st.error(f"Cannot read the dialogue: {exc}", icon="✍️")
    else:
        log = state["pg_log"]
        if log and state["pg_text"].strip() != log[-1].get("text", "").strip():
            state["pg_log"] = []  # another dialogue than the one the last probe left: its log was about that one
        current = analyse(dialogue)
        if current is not None:
            state["pg_result"] = current
            if run_a2t or run_rct:
                apply("a2t" if run_a2t else "rct", dialogue, current)
                if "pg_text_next" in state:
                    st.rerun()

result = state.get("pg_result")
if result is not None and result["text"].strip() != state["pg_text"].strip():
    st.info("The dialogue changed since it was judged: press Detect to judge the new text.", icon="✏️")

if state["pg_log"]:
    st.subheader("Probe log")
    show_table(log_rows(state["pg_log"]), css_class="cg-probe-log")

if result is not None:
    dialogue = result["dialogue"]
    cols = st.columns(2)
    for col, method in zip(cols, METHODS):
        verdict = result[method]
        with col, st.container(border=True):
            st.subheader(f"{METHOD_WORDS[method].capitalize()} ({method})")
            st.markdown(verdict_line(verdict))
            if method == Method.STRUCTURED:
                st.caption("Each sentence of the last turn against each earlier sentence of the same speaker: the "
                           "strongest clash is the score, and every pair over the line is a reason.",
                           help="Technical: DECODE's structured method; max pair score = the verdict's score, pairs ≥ "
                                "τ = the evidence.")
                show_dialogue(dialogue, verdict)
                show_evidence_table(verdict)
                show_category_checks(verdict, said=dialogue.last.text)
            else:
                st.caption("The whole conversation as one text against the last turn: one score, no turn to point "
                           "at.", help="Technical: DECODE's unstructured method, one NLI pair of the speaker-marked "
                                       "history and the last turn.")
                show_dialogue(dialogue, None)
    structured = result[Method.STRUCTURED]
    st.subheader(f"Fact sheet: what {escape_markdown(dialogue.last.agent_id)} said about themselves before the last "
                 "turn",
                 help="Name, age, where they live or grew up, job, how many pets, children or siblings, diet and "
                      "what they never did, read from their earlier turns. The last turn clashes with the sheet when "
                      "it gives one of these facts another value.\n\nTechnical: guard.language.fact_sheet (DNLI's relation "
                      "and value triples, read with spaCy and WordNet); the fact check scores a clash at its measured "
                      "precision.")
    dialogue_sheet(dialogue, structured, result.get("sheet"))
    st.subheader("Pair scores: judged sentences × earlier ones (one turn at a time)")
    shown, _ = score_and_threshold(*structured.deciding)
    heatmap(structured.pair_scores, structured.details.threshold,
            title=f"{category_name(structured.category)} · p = {shown}")
