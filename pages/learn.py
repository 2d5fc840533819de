"""Learn: a short guided page for classes, in a class's words — what a contradiction in a conversation is, the three
ways a bot can contradict itself, why checking one earlier turn at a time works better than reading the whole
conversation at once, why what was asked matters, the bot's fact sheet (with where it stops), each with a live
example, and what the guard does with what it finds. The papers' terms (CDConv's categories, DECODE's structured and
unstructured methods, NLI, τ) stay on the playground; here each is said in plain words."""

from __future__ import annotations

import streamlit as st

from guard.config import FALLBACK_THRESHOLD
from guard.eval.dialogue_text import parse_dialogue_text
from guard.eval.examples import BY_KEY, CLASS_EXAMPLES, EXAMPLES, judge_examples
from guard.language.fact_sheet import Relation
from guard.records import Dialogue, Turn
from guard.vocabulary import Category, Method, PremiseSource
from ui import navigation
from ui.app_defaults import current_settings, shown_threshold
from ui.class_models import shown_name
from ui.fact_sheet import FACT_ICON, clash_words, distinct_clashes
from ui.models import get_guard
from ui.render import escape_markdown, evidence_marks, turn_html
from ui.sheet_widgets import dialogue_sheet
from ui.verdict_checks import every_check_note, show_category_checks
from ui.widgets import (
    example_judgements,
    judgement_text,
    plain_verdict_line,
    show_agreement,
    show_dialogue,
)

navigation.only_in_the_app(navigation.LEARN)  # run alone by Streamlit: the app is offered instead

settings = current_settings()
detector_name, threshold = settings.detector, settings.threshold  # None: the detector's own τ
shown_tau = shown_threshold(settings) or FALLBACK_THRESHOLD

st.title("Learn: contradictions in dialogue")
st.caption(escape_markdown(
    f"Every example below is checked live by the app's contradiction detector ('{shown_name(detector_name)}'), a small program "
    f"trained on an ordinary computer. It calls something a contradiction when it is at least {shown_tau * 100:.0f}% "
    "sure: that is its line, and the sidebar's threshold slider moves it. Where the detector gets an example wrong, "
    "that is part of the lesson."))

with st.expander("Why the page shows different percentages as lines"):
    st.markdown(
        f"The detector does not use one line for everything. Each check has its own, measured on real chats:\n"
        f"- **{shown_tau * 100:.0f}%** is the main line: how sure it must be that the last turn clashes with "
        "an earlier turn (the threshold in the sidebar).\n"
        "- Two parts of **the same reply** have a line of their own, measured apart on pairs of parts of one "
        "reply (the page says it beside such a clash: *its line for this kind is …*).\n"
        "- **50%** is the line for the other two: the fact sheet (its percentage is how often a clash of that "
        "kind was right on real chats, and it counts from 50%, right more often than wrong) and who is who (the "
        "user's side must reach 50% and beat the bot's).\n\n"
        "So a clash at 83% can count while one at 93% does not: each is compared with its own line.")

guard = get_guard(detector_name, kept="the explanations below still read without it")
# every check, every earlier sentence (no prefilter), at the sidebar's τ: one settings record per method
methods = {} if guard is None else {method: guard.settings(mode="flag", method=method, threshold=threshold,
                                                           prefilter=False, checks=True)
                                    for method in (Method.STRUCTURED, Method.UNSTRUCTURED)}
if guard is not None:
    st.caption(escape_markdown(every_check_note(guard.config.checks)))
structured, unstructured = methods.get(Method.STRUCTURED), methods.get(Method.UNSTRUCTURED)
judgements = ({j.key: j for j in example_judgements(guard, structured)} if structured is not None else {})
if judgements:
    show_agreement(list(judgements.values()), plain=True,
                   titles={e.key: e.plain_title or e.title for e in EXAMPLES})
    # the Learn page's own examples are graded too, outside the measured set the summary counts
    judgements.update({j.key: j for j in judge_examples(guard, structured, CLASS_EXAMPLES)})


def live(example_key: str, method_settings=None, who_speaks: str = "", note: bool = True) -> None:
    """Show one built-in example with the detector's verdict and highlighted reasons, in a class's words;
    ``method_settings``: the method's settings (None: the structured one); ``who_speaks``: the who-is-speaking
    reading under it, "explain"-ed in full (once on the page: where the mix-up of who is who is taught) or its
    "numbers" only (""; every other example: not shown); ``note``: the example's note under it (False where the same
    example is shown twice side by side: the page prints it once under both)."""
    example = BY_KEY[example_key]
    dialogue = parse_dialogue_text(example.text, record_id=example.key)
    with st.container(border=True):
        st.markdown(f"**{escape_markdown(example.plain_title or example.title)}**  \n"
                    f"*{escape_markdown(example.plain_source or example.source)}*")
        settings = method_settings or structured
        verdict = guard.verdict_on_dialogue(dialogue, settings) if settings is not None else None
        show_dialogue(dialogue, verdict, plain=True)
        if verdict is not None:
            st.markdown(plain_verdict_line(verdict, example.expected))
            if settings is structured and example.key in judgements:
                st.markdown(judgement_text(judgements[example.key], plain=True))
            for clash in distinct_clashes(verdict.details.fact_clashes):  # what the fact sheet read, both values
                st.markdown(f"{FACT_ICON} " + escape_markdown(f"The fact sheet: {clash_words(clash, plain=True)}"))
            if settings is structured:
                show_category_checks(verdict, plain=True, said=dialogue.last.text, who_speaks=who_speaks)
        if note and (example.plain_note or example.note):
            st.caption(escape_markdown(example.plain_note or example.note))


#: Section 5's example, written from a reply a small chatbot really sent: the description says two dogs, the reply 12
FACT_PERSONA = ("I have two dogs.",)
FACT_TURNS = (("User", "How many dogs do you have?"), ("Bot", "I have a team of 12 dogs."))


def fact_example(guard, settings) -> None:
    """Section 5's one example, judged live: the bot's description and the dialogue with the reason marked, the
    verdict, the fact sheet with the clash on the fact, and whether the sheet caught it."""
    dialogue = Dialogue("learn_fact_sheet", [Turn(i, who, text) for i, (who, text) in enumerate(FACT_TURNS)],
                        persona=list(FACT_PERSONA))
    with st.container(border=True):
        st.markdown("**Two dogs, or twelve?**  \n*Written for this page, after a reply a small chatbot really sent*")
        report = guard.judge_dialogue(dialogue, settings) if guard is not None and settings is not None else None
        verdict = None if report is None else report.candidates[0].verdict
        marks = evidence_marks(verdict.evidence, dialogue.last.turn_id, plain=True).persona if verdict else {}
        st.html('<div class="cg-persona"><b>The bot\'s description of itself</b>' + "".join(
            turn_html("Bot", line, marks.get(i, ()), turn_id=i, source=PremiseSource.PERSONA)
            for i, line in enumerate(dialogue.persona)) + "</div>")
        show_dialogue(dialogue, verdict, plain=True)
        if verdict is None:
            return
        st.markdown(plain_verdict_line(verdict, Category.HISTORY))
        st.markdown("**The fact sheet** before the last turn:")
        dialogue_sheet(dialogue, verdict, report.sheet, plain=True)
        caught = verdict.contradiction and any(c.relation == Relation.COUNT for c in verdict.details.fact_clashes)
        st.markdown(":green[**✔ right**: the fact sheet catches it: 2 dogs and 12 dogs cannot both be true]" if caught
                    else ":red[**✘ wrong**: the fact sheet does not catch it here]")


st.header("1. What is a contradiction in a conversation?")
st.markdown(
    "A speaker contradicts themselves when what they say now cannot be true together with something they said "
    "before: *“I have a dog.”* … *“I do not have a dog.”* The detector's question is: does the **last turn** clash "
    "with the conversation so far, and if so, **with which earlier turn**? That turn is the reason, and it is marked "
    "in red. A chatbot's guard asks this about every reply the bot is about to send, and sends another reply, or "
    "none, when it clashes. (The idea comes from researchers Nie et al. 2021.)"
)
live("dnli_dog")

st.header("2. Three ways a bot can contradict itself")
st.markdown(
    "Researchers (Zheng et al. 2022) sort a bot's contradictions by **what** its reply clashes with, and check in "
    "this order:\n"
    "1. **With itself**: two parts of the same reply cannot both be true.\n"
    "2. **Mixing up who is who**: the bot answers as if it were the user and takes over the user's story.\n"
    "3. **With something it said earlier**: the reply clashes with an earlier turn of the bot."
)
tabs = st.tabs(["With itself", "Who is who", "Something said earlier"])
with tabs[0]:
    st.markdown("The detector cuts the reply into short statements (*“I have two cats”*, *“I have no pets”*) and "
                "checks every pair of them against each other.")
    live("intra_written")
with tabs[1]:
    st.markdown("The detector reads the reply two ways: as following from what the *user* said earlier, or from "
                "what the *bot* said. If it clashes with the bot's earlier words but follows from the user's, the "
                "bot has mixed up who is who.")
    live("role_hobby", who_speaks="explain")
    st.markdown("In the next one the bot takes over the user's job. Sentence by sentence, the detector is not sure "
                "enough that being a nurse clashes with being a teacher; the bot's fact sheet (section 5) knows that "
                "someone has one job at a time: see what they say.")
    live("role_written", who_speaks="numbers")
with tabs[2]:
    st.markdown("The detector compares the reply with every earlier turn of the same speaker, one at a time. The "
                "strongest clash decides, and every earlier turn it clashes with strongly enough is marked as a "
                "reason.")
    live("dnli_job")

st.header("3. Why checking one turn at a time works better")
st.markdown(
    "There are two ways to check a reply. **All at once**: give the detector the whole conversation as one long "
    "text, next to the last turn. In a long conversation the one earlier turn that matters is a small part of that "
    "text, and its clash gets lost among the rest; two harmless turns slipped in between can be enough, and a text "
    "too long for the detector may even be cut, losing that very turn. **One turn at a time**: compare the last "
    "turn with each earlier turn of the same speaker on its own and keep the strongest clash. Other turns cannot "
    "hide the one that clashes, and the pair that clashed shows the reason. The researchers (Nie et al. 2021) found "
    "the one-at-a-time way much more reliable, also when turns were slipped in or taken out on purpose."
)
cols = st.columns(2)
with cols[0]:
    st.subheader("One turn at a time")
    live("long_history", structured, note=False)
with cols[1]:
    st.subheader("All at once")
    live("long_history", unstructured, note=False)
st.caption(escape_markdown(BY_KEY["long_history"].plain_note or BY_KEY["long_history"].note))

st.header("4. What was asked matters")
st.markdown("The same words can clash or not, depending on what the user asked (an example from Zheng et al. 2022, "
            "translated from Chinese).")
cols = st.columns(2)
with cols[0]:
    live("cdconv_animals")
with cols[1]:
    live("cdconv_noodles")

st.header("5. Plain facts: the bot's fact sheet")
st.markdown(
    "Many contradictions are about plain facts: a name, an age, a town, a job, a number of dogs. Plain facts are where "
    "the detector is weakest: it reads a reply as words, and to it *“I have two dogs”* and *“I have a team of 12 "
    "dogs”* look much alike. So the guard also keeps a **fact sheet**: every fact the bot has stated about itself, in "
    "its description of itself and in each of its replies, written as what it is about and its value (*dogs: 2*). A "
    "reply that gives one of these facts another value clashes with the sheet. (Writing facts this way comes from "
    "researchers Welleck et al. 2019.) The chat shows the sheet above the conversation."
)
fact_example(guard, structured)
st.markdown(
    "**Where the fact sheet stops.** It is a short list of rules, not a reader:\n"
    "- It reads only a few kinds of facts: a name, an age, where someone lives or grew up, a job, how many pets, "
    "children, brothers or sisters they have, a diet (vegetarian, vegan) and what they eat, and what they do or "
    "have never done (*“I play tennis”*, *“I have never flown”*). Likes and opinions are not on it.\n"
    "- It misses facts said in other ways: *“I walk my two furry friends every day”* is not read as two dogs, and "
    "*“I look after patients all day”* is not read as a job.\n"
    "- The past and wishes are no clash: *“I used to live in Rome”* does not clash with living in Paris, nor *“I'd "
    "love a cat one day”* with having no pets.\n"
    "- It knows that one thing is a kind of another (a surgeon is a kind of doctor, so *“surgeon”* after *“doctor”* "
    "is no clash) from WordNet, a big dictionary of word meanings, and that dictionary has gaps: it files a professor "
    "beside a teacher, not under it, so *“I'm a professor”* after *“I'm a teacher”* is called a clash."
)

st.header("6. What the guard does with what it finds")
st.markdown(
    "In the chat the bot writes several replies for each message (its *candidates*), and the guard checks every one "
    "before anything is sent:\n"
    "- Replies that contradict what the bot said before, or its fact sheet, are not sent.\n"
    "- Among the replies that do not contradict, the guard prefers one that answers the message and that the "
    "bot's description supports. A reply that does not answer (*“I don't know.”*, a question back) can still be "
    "sent when nothing better is there, and the chat marks it as a reply that did not answer.\n"
    "- When every reply contradicts, the guard reminds the bot of what it said and asks again; only if that fails "
    "too does a flagged reply go out, marked so you can see it.\n\n"
    "The guard can only choose among the replies the bot wrote: when all of them are wrong in ways it does not see, "
    "a contradiction still gets through. That is why the chat shows every candidate and why it says how sure it is."
)

st.page_link(navigation.page(navigation.PLAYGROUND), label="Try your own dialogues in the probe playground", icon="🧪")
st.page_link(navigation.page(navigation.CHAT), label="Chat with a guarded bot", icon="💬")
