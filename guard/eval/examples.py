"""Built-in dialogues for the playground, the Learn page and the detector benchmark (bench_detector_data).

Each says where it comes from: quoted from a paper (named, with the table or figure), or written
for this app to illustrate a category. ``expected`` is what a person would judge, not what the
detector says; the pages run the detector live and show both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from guard.eval.dialogue_text import parse_dialogue_text
from guard.vocabulary import Category, category_name

if TYPE_CHECKING:  # loads torch
    from guard.config import JudgeSettings
    from guard.judge.pipeline import Guard


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    source: str
    text: str  # 'Speaker: text' lines; the last line is judged
    expected: Category
    note: str = ""
    # the same for a class (the Learn page): a title, a source and a note without the papers' vocabulary
    plain_title: str = ""
    plain_source: str = ""
    plain_note: str = ""


EXAMPLES: tuple[Example, ...] = (
    Example(
        key="decode_human_bot",
        title="DECODE human-bot: the stay-at-home mom without kids",
        source="Nie et al. 2021 (DECODE), Table 3, Human-Bot example",
        text=(
            "Human: It's a beautiful day. I'm going to take a walk later.\n"
            "Bot: What do you do for a living?\n"
            "Human: I work in a doctor's office. How about yourself?\n"
            "Bot: I am a stay at home mom.\n"
            "Human: That's great! How many kids do you have?\n"
            "Bot: I don't have any kids yet, but I plan on getting married soon."
        ),
        expected=Category.HISTORY,
        note="The last bot turn contradicts 'I am a stay at home mom' (turn 3).",
        plain_title="The stay-at-home mom without kids",
    ),
    Example(
        key="decode_a2t",
        title="DECODE A2T: ash stains (two turns inserted)",
        source="Nie et al. 2021 (DECODE), Table 3, Add Two Turns example",
        text=(
            "Human1: i hate when ash from my cigarette drops in my work pants\n"
            "Human2: oof that sucks really bad\n"
            "Human1: yeah, i haave to wait till i get home to get the stain off, it is really embarrasing\n"
            "Human2: yea i can imagine it is\n"
            "Human1: Every time I look at it I remember the good times we had together.\n"
            "Human2: well thats nice\n"
            "Human1: I will have to wash the stain with soap and water.\n"
            "Human2: Ash stains on your pants is not a big deal though."
        ),
        expected=Category.HISTORY,
        note="Turns 4-5 were inserted from another dialogue; the contradiction with turns 1/3 must survive.",
        plain_title="Ash stains, with two unrelated turns slipped in",
    ),
    Example(
        key="decode_human_human",
        title="DECODE human-human: friends growing apart",
        source="Nie et al. 2021 (DECODE), Table 3, Main (Human-Human) example",
        text=(
            "Human1: I recently had a long weekend with some old friends. It was fantastic.\n"
            "Human2: It must have been fun to catch up with them.\n"
            "Human1: it was. We've spent a lot of time together and apart now, so it was good to catchup.\n"
            "Human2: Well I hope you guys continue to stay in touch.\n"
            "Human1: Sometimes friends grow apart over time though.\n"
            "Human2: Yeah, that's true. You should forget about them and go on with your life."
        ),
        expected=Category.HISTORY,
        note="Human2 first hopes they stay in touch, then says to forget them.",
        plain_title="Friends growing apart",
    ),
    Example(
        key="dnli_job",
        title="DNLI: lawyer, then doctor",
        source="Welleck et al. 2019 (Dialogue NLI), introduction (example from Li et al. 2016)",
        text=(
            "User: what is your job?\n"
            "Bot: i'm a lawyer.\n"
            "User: what do you do?\n"
            "Bot: i'm a doctor."
        ),
        expected=Category.HISTORY,
        plain_title="Lawyer, then doctor",
        plain_source="Li et al. 2016, quoted by Welleck et al. 2019",
    ),
    Example(
        key="dnli_dog",
        title="DNLI: I have a dog / I do not have a dog",
        source="Welleck et al. 2019 (Dialogue NLI), §3: 'I have a dog vs. I do not have a dog'",
        text=(
            "User: do you have any pets?\n"
            "Bot: I have a dog.\n"
            "User: what do you do on weekends?\n"
            "Bot: I go hiking. I do not have a dog."
        ),
        expected=Category.HISTORY,
        plain_title="I have a dog / I do not have a dog",
        plain_source="Welleck et al. 2019",
    ),
    Example(
        key="cdconv_animals",
        title="CDConv Figure 1: dogs, cats (contradiction)",
        source="Zheng et al. 2022 (CDConv), Figure 1, English gloss of the Chinese example",
        text=(
            "User: What animals do you like?\n"
            "Bot: I like dogs and cats.\n"
            "User: What animals do you dislike?\n"
            "Bot: I dislike cats. I like all the other animals."
        ),
        expected=Category.HISTORY,
        note="The paper's b1 is just 'Dogs, cats'; it means 'I like dogs and cats' only in context, so the "
             "gloss spells it out. The unspelled version is the paper's point: the bot's turns alone are not enough.",
        plain_title="Dogs and cats (a contradiction)",
        plain_source="Zheng et al. 2022, translated from Chinese",
        plain_note=(
            "In the paper the bot only says “Dogs, cats”, which means “I like dogs and cats” because of the "
            "question before it; here it is spelled out. The paper's point: the bot's own turns are not enough, "
            "the user's questions matter too."
        ),
    ),
    Example(
        key="cdconv_noodles",
        title="CDConv Figure 1: noodles (non-contradiction)",
        source="Zheng et al. 2022 (CDConv), Figure 1, English gloss of the Chinese example",
        text=(
            "User: Do you like noodles?\n"
            "Bot: I love to eat rice!\n"
            "User: Don't you like noodles?\n"
            "Bot: I dislike noodles."
        ),
        expected=Category.NONE,
        note="'love' vs 'dislike' look opposed, but they are about different foods.",
        plain_title="Noodles (no contradiction)",
        plain_source="Zheng et al. 2022, translated from Chinese",
        plain_note=(
            "“love” and “dislike” look opposite, but they are about different foods."
        ),
    ),
    Example(
        key="decode_title",
        title="DECODE's title: I like fish, especially dolphins",
        source="Nie et al. 2021 (DECODE), title (dolphins are mammals, not fish)",
        text=(
            "User: What do you like to eat?\n"
            "Bot: I like fish, especially dolphins."
        ),
        expected=Category.INTRA,
        note="A contradiction inside one sentence that needs world knowledge; NLI models trained on "
             "SNLI-style data usually miss it.",
        plain_title="I like fish, especially dolphins",
    ),
    Example(
        key="intra_written",
        title="Intra-sentence: a dog, and never a pet",
        source="written for this app in the style of CDConv's intra-sentence category",
        text=(
            "User: Do you have any pets?\n"
            "Bot: I have a dog, but I have never had a pet."
        ),
        expected=Category.INTRA,
        note="The two clauses cannot both hold. Compare 'I am a vegetarian, but I eat chicken every day': "
             "just as contradictory, but only with the world knowledge that chicken is meat, which a small "
             "NLI model trained on sentence pairs mostly lacks.",
        plain_title="A dog, and never a pet",
        plain_source="written for this app",
        plain_note=(
            "The two parts cannot both be true. Compare “I am a vegetarian, but I eat chicken every day”: just as "
            "contradictory, but only if you know that chicken is meat, which a small detector trained on pairs of "
            "sentences mostly does not."
        ),
    ),
    Example(
        key="role_written",
        title="Role confusion: the bot takes over the user's job",
        source="written for this app in the style of CDConv's role-confusion category",
        text=(
            "User: I work as a nurse at the city hospital.\n"
            "Bot: I am a teacher. What is your job like?\n"
            "User: I love my job, I help patients every day.\n"
            "Bot: I work as a nurse and I help patients every day."
        ),
        expected=Category.ROLE,
        note="The last bot turn contradicts 'I am a teacher' because it answers as if it were the user: the "
             "user's own words entail it. The detector calls a history contradiction role confusion when that "
             "user reading wins.",
        plain_title="The bot takes over the user's job",
        plain_source="written for this app",
        plain_note=(
            "The last bot turn clashes with “I am a teacher” because the bot answers as if it were the user: what "
            "it says follows from the user's own words."
        ),
    ),
    Example(
        key="long_history",
        title="A fact from the start of a long chat",
        source="written for this app (DECODE's point about long histories, Nie et al. 2021 §6)",
        text=(
            "User: Do you have any pets?\n"
            "Bot: Yes, I have a dog named Max.\n"
            "User: Nice! What do you do for work?\n"
            "Bot: I work as a librarian in a small town library.\n"
            "User: Do you like reading then?\n"
            "Bot: I love reading, mostly mystery novels and old science fiction.\n"
            "User: What did you do last weekend?\n"
            "Bot: I went to a farmers market and bought fresh tomatoes and bread.\n"
            "User: Sounds lovely. Do you cook a lot?\n"
            "Bot: I cook almost every evening, my favourite dish is a spicy vegetable curry.\n"
            "User: Would you ever want a pet?\n"
            "Bot: I have never had a dog. Maybe one day."
        ),
        expected=Category.HISTORY,
        note="The contradicted fact is ten turns back; the whole-history (unstructured) pair dilutes it.",
        plain_title="A fact from the start of a long chat",
        plain_source="written for this app",
        plain_note=(
            "The fact it contradicts was said ten turns earlier. Read all at once, that turn is a small part of a "
            "long text, and its clash gets lost."
        ),
    ),
    Example(
        key="consistent_written",
        title="Consistent: a restatement",
        source="written for this app",
        text=(
            "User: Do you have any pets?\n"
            "Bot: Yes, I have two cats named Luna and Max.\n"
            "User: What do you like to do at home?\n"
            "Bot: I like reading with my two cats on my lap."
        ),
        expected=Category.NONE,
        plain_title="Saying the same thing again",
    ),
)

#: Examples only the Learn page shows, outside the measured set above (the detector benchmarks and the docs count
#: EXAMPLES' right and wrong). "role_hobby" teaches role confusion with a clash the shipped detector catches (role,
#: 0.9821 against the shipped τ 0.9361, and 0.98 against the earlier 0.9493; measured 2026-11-27, structured method,
#: every check on): EXAMPLES' own "role_written", a job-vs-job clash, scores 0.9214 with detector v4 (under both τ) and
#: is shown after it as one the detector gets wrong.
CLASS_EXAMPLES: tuple[Example, ...] = (
    Example(
        key="role_hobby",
        title="Role confusion: the bot takes over the user's hobby",
        source="written for this app in the style of CDConv's role-confusion category",
        text=(
            "User: I play the guitar in a band.\n"
            "Bot: I can't play any instrument. What music does your band play?\n"
            "User: We play rock, mostly old songs.\n"
            "Bot: I play the guitar in a rock band."
        ),
        expected=Category.ROLE,
        note="The last bot turn contradicts 'I can't play any instrument' because it answers as if it were the user: "
             "the user's own words entail it.",
        plain_title="The bot takes over the user's hobby",
        plain_source="written for this app",
        plain_note="The last bot turn clashes with “I can't play any instrument” because the bot answers as if it "
                   "were the user: what it says follows from the user's own words.",
    ),
)

BY_KEY = {example.key: example for example in EXAMPLES + CLASS_EXAMPLES}


@dataclass(frozen=True)
class ExampleJudgement:
    """The detector's verdict on one built-in example next to what people say about it.

    ``agrees``: both say "contradiction" or both say "none" (the guard acts on that decision);
    ``same_category``: the CDConv category matches too.
    """

    key: str
    title: str
    expected: Category
    said: Category
    score: float

    @property
    def agrees(self) -> bool:
        return (self.said == Category.NONE) == (self.expected == Category.NONE)

    @property
    def same_category(self) -> bool:
        return self.said == self.expected

    def mark(self) -> str:
        """'✔ right', '✔ right (calls it history, people say role)' or '✘ wrong'."""
        if not self.agrees:
            return "✘ wrong"
        if self.same_category:
            return "✔ right"
        return f"✔ right (calls it {category_name(self.said)}; people say {category_name(self.expected)})"


def judge_examples(guard: Guard, settings: JudgeSettings, examples: tuple[Example, ...] = EXAMPLES
                   ) -> list[ExampleJudgement]:
    """Every example judged live by ``guard`` with ``settings``, its score the deciding check's (``Verdict.deciding``):
    the number the verdict line prints for the same example (issue 54: a table said 0.92, the highest check's score,
    beside the verdict's p = 0.83 for the role-confusion example)."""
    judgements = []
    for example in examples:
        verdict = guard.verdict_on_dialogue(parse_dialogue_text(example.text, record_id=example.key), settings)
        judgements.append(ExampleJudgement(example.key, example.title, example.expected, Category(verdict.category),
                                           float(verdict.deciding[0])))
    return judgements


def agreement_line(judgements: list[ExampleJudgement]) -> str:
    """'the detector agrees with people on 9 of 12 examples' (and on how many it names the category)."""
    agree = sum(j.agrees for j in judgements)
    same = sum(j.agrees and j.same_category for j in judgements)
    line = f"the detector agrees with people on {agree} of {len(judgements)} examples"
    if same != agree:
        line += f" ({same} with the same category)"
    return line
