"""Build the project's probe suite: DECODE-shaped dialogues with planted history contradictions.

Each hand-written persona fact (below) yields two dialogues that share their shape:

    [real chit-chat exchanges]  user: question           bot: FACT
    [real chit-chat exchanges]  user: follow-up question  bot: CONTRADICTION | CONSISTENT reply

The fillers are real human chit-chat messages (the Chit Chat Challenge data, ``chitchat_dataset``
package), alternating user/bot; messages that mention the fact's content words are skipped so a
filler cannot contradict or support the fact by accident. A contradiction's evidence is the fact
turn (DECODE's ``aggregated_contradiction_indices`` also lists the last turn); a consistent
record has none and notes which turn it restates (``meta.restates``) for the perturbation probes.

The DECODE checklist variants are made from the suite by ``guard.eval.probes``: A2T (a pair of
utterances from other records inserted between fact and contradiction: still a contradiction) and
RCT (the fact turn removed with its question: no longer a contradiction); and CDConv's
negation / antonym / synonym perturbations of a restated fact. Everything is seeded.

    .venv/bin/python -m benchmarks.make_probe_suite            # writes guard/data/probe_suite*.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from guard.eval.datasets import dialogue_to_decode
from guard.eval.probes import apply_probe, make_probe
from guard.files import atomic_writer
from guard.records import Dialogue, Turn

REPO = Path(__file__).resolve().parent.parent

OUT_DIR = REPO / "guard" / "data"
MADE_BY = "benchmarks/make_probe_suite.py"

# (kind, question, fact, follow-up question, contradiction, consistent reply) — written for this suite.
FACTS: list[tuple[str, str, str, str, str, str]] = [
    ("attribute", "Do you have any pets?", "I have two dogs, a beagle and a poodle.",
     "What do you do with your free time?", "I don't have any pets, so I mostly read.",
     "I walk my two dogs every morning before work."),
    ("attribute", "What do you do for a living?", "I work as a nurse at the city hospital.",
     "Is your job stressful?", "I have never worked in a hospital.",
     "Working in a hospital is stressful, but helping patients makes it worth it."),
    ("attribute", "Where do you live?", "I live in Chicago with my parents.",
     "Do you like the city you live in?", "I have never been to Chicago.",
     "I love Chicago, even if the winters are brutal."),
    ("attribute", "Do you have any siblings?", "I have three older sisters.",
     "Was it fun growing up in your family?", "I am an only child, so it was quiet at home.",
     "With three older sisters there was always someone to talk to."),
    ("attribute", "Are you married?", "Yes, I have been married for ten years.",
     "What does your family do on weekends?", "I have never been married.",
     "My wife and I usually go hiking on weekends."),
    ("attribute", "Do you eat meat?", "No, I am a vegetarian.",
     "What did you have for dinner last night?", "I had a big steak for dinner last night.",
     "I made a vegetable curry with rice for dinner."),
    ("attribute", "How old are you?", "I am twenty years old.",
     "When did you finish school?", "I am sixty years old and retired long ago.",
     "I finished high school two years ago."),
    ("attribute", "Do you have kids?", "I have a daughter who just started school.",
     "What keeps you busy these days?", "I don't have any children.",
     "My daughter keeps me busy with her homework."),
    ("attribute", "Can you drive?", "I drive to work every day.",
     "How do you get around town?", "I don't have a driver's license.",
     "I drive everywhere, even to the grocery store."),
    ("attribute", "Are you a student?", "I study biology at the state college.",
     "What did you learn this week?", "I never went to college.",
     "This week in my biology class we learned about cell division."),
    ("attribute", "Do you have any allergies?", "I am allergic to cats.",
     "Do you visit friends who have pets?", "I have three cats at home and I love cuddling them.",
     "I avoid friends' houses when they have cats because I start sneezing."),
    ("attribute", "Where did you grow up?", "I grew up on a farm in Texas.",
     "Do you miss your childhood home?", "I have never been to Texas.",
     "I miss the farm in Texas, especially the horses."),
    ("attribute", "Do you speak other languages?", "I speak Spanish fluently.",
     "Have you ever traveled abroad?", "I only speak English, not a word of anything else.",
     "I went to Mexico last year and could talk to everyone in Spanish."),
    ("attribute", "Do you play any instruments?", "I play the piano in a jazz band.",
     "What are your hobbies?", "I can't play any instrument.",
     "Playing piano with my band is my favourite hobby."),
    ("attribute", "Are you tall?", "I am very short, just five feet tall.",
     "Did you ever play basketball?", "I am almost seven feet tall, so I was a center.",
     "Being short made basketball hard for me, so I played soccer."),
    ("attribute", "What kind of car do you have?", "I drive an old red pickup truck.",
     "How did you get here today?", "I have never owned a car in my life.",
     "I drove my old pickup truck here today."),
    ("attribute", "Do you wear glasses?", "I have worn glasses since I was six.",
     "How is your eyesight?", "My eyesight is perfect and I have never needed glasses.",
     "Without my glasses I can barely see anything."),
    ("attribute", "Do you live alone?", "I live alone in a small apartment.",
     "Who do you share your home with?", "I share a big house with my five roommates.",
     "Nobody, it is just me in my little apartment."),
    ("attribute", "Are you a morning person?", "I am a morning person, I wake up at five.",
     "What time do you usually get up?", "I never get up before noon.",
     "I am usually up before sunrise, around five."),
    ("attribute", "Do you work from home?", "I work from home as a programmer.",
     "What is your commute like?", "I commute to my office downtown every day.",
     "I have no commute since I work from home."),
    ("attribute", "Do you smoke?", "I have never smoked in my life.",
     "Do you have any bad habits?", "I smoke a pack of cigarettes every day.",
     "I drink too much coffee, but I have never touched a cigarette."),
    ("attribute", "What is your native language?", "My native language is German.",
     "Where were you born?", "I was born in Ohio and only speak English.",
     "I was born in Munich, so German came first."),
    ("attribute", "Do you have a garden?", "I have a big vegetable garden behind my house.",
     "What did you do last weekend?", "I live in an apartment with no garden at all.",
     "Last weekend I picked tomatoes from my garden."),
    ("attribute", "Are you a teacher?", "Yes, I teach math at a middle school.",
     "What do you do during the summer?", "I have never taught anything to anyone.",
     "In the summer I get a break from teaching math."),
    ("attribute", "Do you have tattoos?", "I have a tattoo of a dragon on my arm.",
     "Do you like body art?", "I don't have any tattoos and never will.",
     "I love tattoos, my dragon was my first one."),
    ("attribute", "Can you swim?", "I swim every morning at the local pool.",
     "Do you like going to the beach?", "I never learned to swim, so I stay out of the water.",
     "I love the beach because I can swim in the ocean."),
    ("attribute", "Do you own a house?", "I just bought my first house last month.",
     "Are you renting your place?", "Yes, I rent a room and have never owned a home.",
     "No, I own it, I bought it last month."),
    ("attribute", "What is your job?", "I am a firefighter.",
     "Have you ever been in danger at work?", "I work at a desk in a bank, nothing dangerous.",
     "Running into burning buildings is part of my job as a firefighter."),
    ("attribute", "Do you have brothers?", "I have one younger brother named Sam.",
     "Who do you spend the holidays with?", "I have no brothers or sisters.",
     "I spend the holidays with my parents and my little brother Sam."),
    ("attribute", "Are you retired?", "Yes, I retired from the army last year.",
     "What do you do for work these days?", "I am still in school and have never had a job.",
     "Since I retired from the army I don't work anymore."),
    ("opinion", "Do you like winter?", "I hate winter, the cold is miserable.",
     "What is your favourite season?", "Winter is my favourite season because I love the cold.",
     "Summer, because I can't stand the cold."),
    ("opinion", "What is your favourite food?", "My favourite food is pizza.",
     "What would you order at a restaurant?", "I can't stand pizza.",
     "I would order a pepperoni pizza, as always."),
    ("opinion", "Do you like spicy food?", "I love spicy food, the hotter the better.",
     "Would you try the hottest curry on the menu?", "No way, I can't eat spicy food at all.",
     "Absolutely, I would order it extra hot."),
    ("opinion", "Do you enjoy reading?", "I read a lot of books, mostly history.",
     "How do you relax in the evening?", "I never read books, they bore me.",
     "I relax with a history book and a cup of tea."),
    ("opinion", "Do you watch TV?", "I don't watch TV at all.",
     "Did you see the show last night?", "Yes, I watch TV every night, I loved it.",
     "No, I don't own a television."),
    ("opinion", "Do you like dogs?", "I love dogs, they are the best.",
     "How do you feel about big dogs?", "I hate dogs, they scare me.",
     "I adore big dogs, the bigger the better."),
    ("opinion", "Do you like coffee?", "I don't drink coffee, it makes me jittery.",
     "What do you drink in the morning?", "I drink three cups of coffee every morning.",
     "Just orange juice, since coffee makes me jittery."),
    ("opinion", "What music do you like?", "I love classical music, especially Bach.",
     "Would you go to a classical concert with me?", "I can't stand classical music.",
     "I would love to, especially if they play Bach."),
    ("opinion", "Do you like sports?", "I am a huge football fan.",
     "Did you watch the game on Sunday?", "I never watch sports, I find them boring.",
     "Of course, I never miss a football game."),
    ("opinion", "Do you like to cook?", "Cooking is my passion, I cook every day.",
     "Who makes dinner at your place?", "I never cook, I can't even boil an egg.",
     "I do, I cook dinner every single day."),
    ("opinion", "How do you feel about flying?", "I am terrified of flying.",
     "How do you usually travel for vacation?", "I love flying and take planes every month.",
     "I always take the train because planes scare me."),
    ("opinion", "Do you like horror movies?", "Horror movies are my favourite.",
     "Want to watch a scary movie tonight?", "No, I hate horror movies.",
     "Yes, the scarier the better."),
    ("opinion", "Do you like the beach?", "I don't like the beach, I hate sand.",
     "Where would you go for a summer vacation?", "The beach, I love lying in the sand all day.",
     "Somewhere in the mountains, far from any sand."),
    ("opinion", "Are you a cat person?", "I am definitely a cat person.",
     "Would you adopt a cat?", "I dislike cats a lot.",
     "I would adopt a cat in a heartbeat."),
    ("opinion", "Do you enjoy running?", "I love running, I do marathons.",
     "What do you do to stay fit?", "I hate running, my knees can't take it.",
     "I run long distances, I'm training for a marathon."),
    ("opinion", "Do you like chocolate?", "I love chocolate more than anything.",
     "Would you like some dessert?", "No thanks, I really dislike chocolate.",
     "Yes please, something with chocolate."),
    ("opinion", "Do you like living in the city?", "I hate city life, it is too noisy.",
     "Would you move downtown?", "I love the noise and buzz of the city, so yes.",
     "Never, I want somewhere quiet in the countryside."),
    ("opinion", "Do you like video games?", "I play video games every night.",
     "What do you do after work?", "I have never played a video game.",
     "After work I usually play video games for a few hours."),
    ("opinion", "Do you like tea?", "I drink green tea every day.",
     "Would you like something to drink?", "I hate tea, I never drink it.",
     "A cup of green tea would be perfect."),
    ("opinion", "Do you like camping?", "Camping is my favourite thing to do in summer.",
     "What are your plans for the summer?", "I hate camping and sleeping outside.",
     "I plan to go camping in the mountains for two weeks."),
    ("experience", "Have you ever been to Europe?", "I have never been to Europe.",
     "What was your best trip?", "My best trip was the two years I lived in Paris.",
     "My best trip was a road trip across Canada."),
    ("experience", "Have you ever broken a bone?", "I broke my leg skiing last winter.",
     "Have you ever been to the hospital?", "I have never been injured or in a hospital.",
     "Yes, after I broke my leg skiing last winter."),
    ("experience", "Did you go to college?", "I graduated from Harvard with a law degree.",
     "What is your highest education?", "I dropped out of high school.",
     "A law degree from Harvard."),
    ("experience", "Have you ever run a marathon?", "I ran the Boston Marathon last year.",
     "What is the longest distance you have run?", "I have never run more than a mile.",
     "The full marathon in Boston, last year."),
    ("experience", "Have you been to Japan?", "I lived in Tokyo for three years.",
     "Have you ever eaten real sushi?", "I have never left my home country.",
     "Yes, all the time when I lived in Tokyo."),
    ("experience", "Have you ever met a celebrity?", "I met Tom Hanks at an airport once.",
     "Have you ever seen a famous actor in person?", "I have never met anyone famous.",
     "Yes, I saw Tom Hanks at an airport."),
    ("experience", "Did you serve in the military?", "I served in the navy for eight years.",
     "Have you ever been on a ship?", "I have never been on a boat in my life.",
     "Many times, I spent years on navy ships."),
    ("experience", "Have you ever won anything?", "I won the state lottery two years ago.",
     "Have you ever been lucky with money?", "I have never won anything, not even a raffle.",
     "Very lucky, I won the lottery a couple of years ago."),
    ("experience", "Have you moved a lot?", "I have lived in the same town my whole life.",
     "How many places have you lived in?", "I have moved to a new country every two years.",
     "Just one, the town where I was born."),
    ("experience", "Did you learn to ski?", "I have skied since I was a child.",
     "Are you any good at winter sports?", "I have never been on skis.",
     "I am a pretty good skier after all these years."),
    ("experience", "Have you ever been on TV?", "I was on a cooking show last year.",
     "Have you ever been in front of a camera?", "I have never been filmed for anything.",
     "Yes, on a cooking show last year, it was nerve wracking."),
    ("experience", "Did you grow up with pets?", "We never had pets when I was a kid.",
     "What was your first pet?", "My first pet was a golden retriever when I was five.",
     "I didn't have one as a child, my parents didn't allow pets."),
    ("experience", "Have you ever been to a concert?", "I saw the Rolling Stones live in 1990.",
     "What was the best show you have seen?", "I have never been to a concert.",
     "The Rolling Stones in 1990, an amazing night."),
    ("experience", "Have you been skydiving?", "I went skydiving for my thirtieth birthday.",
     "What is the most daring thing you have done?", "I am afraid of heights and would never jump out of a plane.",
     "Jumping out of a plane on my thirtieth birthday."),
]
SPEAKERS = ("user", "bot")


def load_conversations(max_len: int = 160) -> list[tuple[str, list[str]]]:
    """(conversation id, messages) from the Chit Chat Challenge data (guard.eval.chitchat); a message is one sender's
    run. Runs without text count (and disqualify their conversation), as when the suite was made."""
    from guard.eval.chitchat import iter_chitchat

    return [(conv.conv_id, conv.utterances) for conv in iter_chitchat(keep_empty=True)
            if len(conv.utterances) >= 6 and all(3 <= len(m) <= max_len for m in conv.utterances[:8])]


def content_words(texts: list[str]) -> set[str]:
    """Lower-cased lemmas of the non-stop-word nouns, verbs and adjectives in ``texts``."""
    from embedded import spacy_nlp

    words = set()
    for doc in spacy_nlp().pipe(texts):
        for tok in doc:
            if tok.pos_ in ("NOUN", "PROPN", "VERB", "ADJ") and not tok.is_stop and len(tok.text) > 2:
                words.update({tok.lemma_.lower(), tok.text.lower()})
    return words


def filler(rng: random.Random, conversations, avoid: set[str], exchanges: int) -> tuple[list[str], dict]:
    """``exchanges`` (user, bot) message pairs from one real conversation, free of ``avoid`` words."""
    if exchanges == 0:
        return [], None
    for _ in range(200):
        conv_id, msgs = rng.choice(conversations)
        start = rng.randrange(0, max(1, min(len(msgs), 8) - 2 * exchanges + 1))
        chosen = msgs[start:start + 2 * exchanges]
        if len(chosen) < 2 * exchanges:
            continue
        words = {w.strip(".,!?'\"").lower() for m in chosen for w in m.split()}
        if words & avoid:
            continue
        return chosen, {"conversation": conv_id, "messages": list(range(start, start + 2 * exchanges))}
    raise RuntimeError("no filler without the fact's words found; widen the conversation pool")


def a2t_pool(conversations, seed: int, size: int = 400) -> list[Dialogue]:
    """Real chit-chat dialogues for A2T to sample its inserted utterance pairs from.

    DECODE inserts utterances from other human dialogues; taking them from the suite itself would
    insert other records' planted facts, which could contradict (or support) the last turn.
    """
    rng = random.Random(f"pool:{seed}")
    chosen = rng.sample(conversations, min(size, len(conversations)))
    return [Dialogue(f"chitchat:{conv_id}", [Turn(i, SPEAKERS[i % 2], m) for i, m in enumerate(msgs[:6])])
            for conv_id, msgs in chosen]


def build_suite(seed: int, conversations) -> list[Dialogue]:
    rng = random.Random(seed)
    records = []
    for k, (kind, question, fact, follow_up, contradiction, consistent) in enumerate(FACTS):
        avoid = content_words([fact, contradiction, consistent])
        before, before_src = filler(rng, conversations, avoid, rng.randint(0, 2))
        between, between_src = filler(rng, conversations, avoid, rng.randint(1, 3))
        texts = before + [question, fact] + between + [follow_up]
        fact_id = len(before) + 1
        for ending, is_contra in ((contradiction, True), (consistent, False)):
            turns = [Turn(i, SPEAKERS[i % 2], t) for i, t in enumerate(texts + [ending])]
            meta = {
                "made_by": MADE_BY, "seed": seed, "fact_id": k, "fact_kind": kind,
                "kind": "history_contradiction" if is_contra else "consistent_continuation",
                "fact_turn_id": fact_id,
                "fillers": [s for s in (before_src, between_src) if s],
                "filler_source": "chitchat_dataset (Chit Chat Challenge, BYU PCC lab)",
                "hand_written": ["question", "fact", "follow_up", "last turn"],
            }
            if not is_contra:
                meta["restates"] = fact_id
            records.append(Dialogue(
                f"probe-{k:03d}-{'contra' if is_contra else 'consistent'}", turns, label=is_contra,
                evidence=[fact_id] if is_contra else [], category="history" if is_contra else "none",
                meta=meta,
            ))
    return records


def write_jsonl(path: Path, dialogues: list[Dialogue]) -> None:
    with atomic_writer(path) as out:
        for d in dialogues:
            out.write(json.dumps(dialogue_to_decode(d)) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    conversations = load_conversations()
    suite = build_suite(args.seed, conversations)
    write_jsonl(args.out_dir / "probe_suite.jsonl", suite)
    counts = {"probe_suite": len(suite)}
    pool = a2t_pool(conversations, args.seed)
    for name in ("a2t", "rct", "negation", "antonym", "synonym"):
        cases = apply_probe(make_probe(name, pool=pool, seed=args.seed), suite)
        write_jsonl(args.out_dir / f"probe_suite_{name}.jsonl", [c.variant for c in cases])
        counts[f"probe_suite_{name}"] = len(cases)
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
