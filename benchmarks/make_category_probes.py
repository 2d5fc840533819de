"""Build the CDConv category probes: intra-sentence and role-confusion dialogues, each with a consistent twin.

CDConv (Zheng et al. 2022, ../shared/papers/003_*) files a bot reply b_n as
* **intra-sentence** when two parts of b_n cannot both hold ("No, I only have a daughter." to "Do you have
  children?": the answer particle says no children, the rest names one);
* **role confusion** when b_n "is more likely to be a user's reply to b_{n-1} rather than a bot's to u_n": the bot
  answers its own question ("I'm in tenth grade, and you?" - "Hmm." - "I'm older than you, I'm in twelfth grade",
  CDConv's short-utterance trigger), or speaks the user's lines as its own.
Every probe below is hand-written for this project and has a consistent twin with the same history and a reply
that shares its words and its negations but holds together, so a detector that fires on everything scores 0.5.

    .venv/bin/python -m benchmarks.make_category_probes     # writes guard/data/probe_categories.jsonl
"""

from __future__ import annotations

import json
from pathlib import Path

from guard.files import atomic_writer

OUT = Path(__file__).resolve().parent.parent / "guard" / "data" / "probe_categories.jsonl"
QUANTITY_OUT = OUT.with_name("probe_quantities.jsonl")

# (user question, contradicting reply, consistent reply): the bot's first turn; judged alone (intra-sentence)
INTRA: list[tuple[str, str, str]] = [
    ("Do you have any children?", "No, I only have a daughter.", "No, I don't have kids, but I'd love to someday."),
    ("Do you like animals?", "I don't like animals. I love my dogs more than anything!",
     "I don't like snakes, but I love my dogs more than anything!"),
    ("Are you a morning person?", "I'm definitely a morning person, I never wake up before noon.",
     "I'm definitely not a morning person, I never wake up before noon."),
    ("Do you drink coffee?", "I never drink coffee, I have three cups every morning.",
     "I never drink coffee, but I have three cups of tea every morning."),
    ("Have you ever been to Paris?", "No, I have never left my country. Paris was lovely when I visited last year.",
     "No, I have never left my country. I would love to see Paris one day."),
    ("Are you married?", "I'm single, and my husband and I have been together for ten years.",
     "I'm not married, but my boyfriend and I have been together for ten years."),
    ("Do you play any sports?", "I play soccer every weekend, but I don't play any sports.",
     "I don't play soccer, but I swim every weekend."),
    ("What do you do for a living?", "I'm unemployed right now, I work as a nurse at the hospital.",
     "I'm not a doctor, I work as a nurse at the hospital."),
    ("Do you eat meat?", "I'm a vegetarian and a big steak is my favorite meal.",
     "I'm a vegetarian, so a big bowl of tofu curry is my favorite meal."),
    ("Can you swim?", "No, I can't swim. I swim laps every morning.", "Yes, I can swim. I swim laps every morning."),
    ("Where do you live?", "I live in Boston. I have never been to Boston.",
     "I live in Boston. I have never been to Chicago though."),
    ("Do you have any siblings?", "Yes, I'm an only child.", "No, I'm an only child."),
    ("How old are you?", "I'm twenty, and I just turned fifty last week.",
     "I'm twenty, I just turned twenty last week."),
    ("Do you like reading?", "I hate reading, books are my favorite thing in the world.",
     "I love reading, books are my favorite thing in the world."),
    ("Is your car new?", "I don't own a car, but my car is brand new.",
     "No, it isn't new, I bought it used five years ago."),
    ("Do you speak Spanish?", "Nope, I speak Spanish fluently.", "Yes, I speak Spanish fluently, but not French."),
]

# (user opener, bot answer + question back or first statement, user's short or informative turn,
#  role-confused reply, consistent reply, which role reading: "own-question" or "user-lines")
ROLE: list[tuple[str, str, str, str, str, str]] = [
    ("What grade are you in?", "I'm in tenth grade, and you?", "Hmm.",
     "I'm older than you, I'm in twelfth grade.", "Sorry, I didn't mean to pry. Tenth grade is a lot of work.",
     "own-question"),
    ("Where are you from?", "I'm from Texas. What about you?", "ok",
     "I'm from Ohio, born and raised.", "Texas is hot in the summer, but I miss it.", "own-question"),
    ("What do you do?", "I'm a teacher. How about you?", "haha",
     "I'm a nurse, I work night shifts at the hospital.", "I teach math to sixth graders.", "own-question"),
    ("Do you have pets?", "I have a cat. Do you?", "eh",
     "Yes, I have two dogs and no cats.", "My cat sleeps most of the day.", "own-question"),
    ("How old are you?", "I'm 25. And you?", "lol",
     "I'm 40, a lot older than you.", "I just turned 25 last month.", "own-question"),
    ("What's your favorite food?", "Pizza, for sure. Yours?", "mmm",
     "Sushi! I can't stand pizza.", "I could eat pizza every day.", "own-question"),
    ("Are you a student?", "Yes, I study law. Are you?", "well",
     "No, I finished school years ago.", "Law school keeps me very busy.", "own-question"),
    ("Where do you work?", "At a bank downtown. You?", "...",
     "I work from home as a designer.", "The bank is close to my apartment.", "own-question"),
    ("I work as a nurse.", "I'm a teacher. What's your job like?", "I love my job, I help patients every day.",
     "I work as a nurse and I help patients every day.",
     "That sounds rewarding. I love teaching for the same reason.", "user-lines"),
    ("I just got back from Japan.", "I've never been abroad. How was it?",
     "Amazing, I ate sushi every day in Tokyo.", "I ate sushi every day in Tokyo, it was amazing.",
     "That sounds amazing, I'd love to go to Tokyo one day.", "user-lines"),
    ("I have three kids.", "I don't have any children. Are they a handful?", "Yes, my three kids keep me busy.",
     "My three kids keep me busy all day.", "I bet your three kids keep you busy!", "user-lines"),
    ("I live in London.", "I live in Sydney. Do you like London?", "I love living in London.",
     "I love living in London, it's my home.", "London sounds great, but I love Sydney's beaches.", "user-lines"),
    ("I'm a vegetarian.", "I eat meat every day. Why did you stop?", "I stopped eating meat five years ago.",
     "I stopped eating meat five years ago for my health.",
     "Five years is a long time! I don't think I could give up meat.", "user-lines"),
    ("I play the guitar.", "I don't play any instruments. Is guitar hard?", "I've played guitar since I was ten.",
     "I've played guitar since I was ten years old.",
     "Wow, since you were ten! I wish I had learned an instrument.", "user-lines"),
    ("My wife is a doctor.", "I'm single. Does she like it?", "She loves it, my wife works long hours though.",
     "My wife works long hours at the hospital.", "Long hours must be hard for your family.", "user-lines"),
    ("I'm 60 years old.", "I'm 22. Are you retired?", "Yes, I retired last year at sixty.",
     "I retired last year when I turned sixty.", "Congratulations on retiring! I have a long way to go at 22.",
     "user-lines"),
]


# Quantities (issue 23): a different count of the same thing contradicts ("two dogs" / "22 dogs"); the same count
# said again, or in other words, does not ("No, my two dogs are plenty"). Three readings:
#   persona: (persona line, user question, contradicting reply, consistent reply)
QUANTITY_PERSONA: list[tuple[str, str, str, str]] = [
    ("I have two dogs.", "Tell me again, how many dogs do you have?", "I do have 22 dogs.",
     "No, my two dogs are plenty for me."),
    ("I have two dogs.", "Do you want another pet?", "I've got 3000 dogs!", "No, my two dogs keep me busy enough."),
    ("I am 34 years old.", "How old are you?", "I'm 52.", "I'm 34, turning 35 in May."),
    ("I have three sisters.", "Do you have siblings?", "Yes, I have one sister.", "Yes, three sisters, all older."),
    ("I have 2 kids.", "Any kids?", "Yes, five kids and a dog.", "Yes, two kids, a boy and a girl."),
    ("I work 40 hours a week.", "Do you work a lot?", "Not really, about ten hours a week.",
     "About forty hours a week, which is plenty."),
    ("I own one car.", "What do you drive?", "I drive one of my four cars, usually the red one.",
     "My only car is an old Honda."),
    ("I have been married for ten years.", "How long have you been married?", "Just two years now.",
     "Ten years this June."),
    ("I have two cats.", "Do you like cats?", "Yes! All six of my cats are lovely.",
     "Yes, both of my cats are lovely."),
    ("I speak three languages.", "Are you good at languages?", "Not really, I only speak one language.",
     "I speak three, English, French and Spanish."),
    ("I run 5 miles every morning.", "Do you exercise?", "I run twenty miles every morning.",
     "Yes, I run five miles every morning."),
    ("I have one brother.", "Do you have a big family?", "I have four brothers.",
     "No, it's just me and my brother."),
]
#   history: (user opener, bot turn with a count, user follow-up, contradicting reply, consistent reply)
QUANTITY_HISTORY: list[tuple[str, str, str, str, str]] = [
    ("Do you have pets?", "I have two dogs.", "Tell me again, how many dogs do you have?", "I do have 22 dogs.",
     "Just the two dogs."),
    ("How old are you?", "I'm 34.", "Sorry, how old did you say?", "I'm 52 years old.", "I'm 34."),
    ("Do you have kids?", "Yes, three kids.", "How many kids again?", "I have one kid.", "Three, all boys."),
    ("How many siblings do you have?", "I have two brothers.", "Older or younger?",
     "Both older. All five of my brothers are older.", "Both of them are older than me."),
    ("Do you travel?", "I've been to 12 countries.", "Which ones?", "Only France, it's the one country I've seen.",
     "France, Spain and ten others, twelve in all."),
    ("How long have you lived here?", "About five years.", "Do you like it?", "Yes, in my twenty years here I loved it.",
     "Yes, these five years have been great."),
    ("Do you play music?", "I play two instruments, piano and guitar.", "Which do you prefer?",
     "I only play one instrument, the violin.", "Piano, though I love both."),
    ("How many hours do you sleep?", "Usually eight hours.", "That's a lot!", "I only sleep four hours a night.",
     "Yes, eight hours keeps me sane."),
    ("Do you have cats?", "I have three cats.", "What are their names?", "My cat is called Tom, he's my only cat.",
     "Tom, Kit and Mo, all three are rescues."),
    ("How many languages do you speak?", "Two, English and German.", "Impressive!",
     "Thanks, I speak five languages.", "Thanks, German was hard to learn."),
    ("Are you married?", "Yes, for 15 years.", "Wow, congratulations!", "Thanks, two years married next week.",
     "Thanks, fifteen years and counting."),
    ("Do you run?", "I run three miles a day.", "Every day?", "Yes, ten miles every single day.",
     "Yes, three miles every single day."),
]
#   intra: (user question, contradicting reply, consistent reply)
QUANTITY_INTRA: list[tuple[str, str, str]] = [
    ("How many dogs do you have?", "I do have 22 dogs. I own 24 of them.", "I do have 22 dogs. I love all 22 of them."),
    ("How old are you?", "I'm 30, I just turned 45.", "I'm 30, I just turned 30 last week."),
    ("Do you have kids?", "I have two kids, all three of them are girls.", "I have two kids, both of them are girls."),
    ("Do you have siblings?", "I have one brother and my two brothers live in Ohio.",
     "I have one brother and he lives in Ohio."),
    ("Do you have cats?", "I have three cats, my only cat is Tom.", "I have three cats, my favorite is Tom."),
    ("How much do you work?", "I work 40 hours a week, that's ten hours every week.",
     "I work 40 hours a week, that's eight hours a day."),
    ("Do you have cars?", "I own one car, both of my cars are red.", "I own one car, and it is red."),
    ("How many languages do you speak?", "I speak four languages, just English and French.",
     "I speak four languages, English, French, Hindi and Urdu."),
    ("Do you exercise?", "I run five miles a day, I've never run more than a mile.",
     "I run five miles a day, I've never run more than ten."),
    ("Do you like your job?", "I've worked there six years, since I started two years ago.",
     "I've worked there six years, since I was twenty."),
    ("How many kids?", "Three kids, and my only child is a boy.", "Three kids, and my oldest child is a boy."),
    ("Pets?", "Two dogs, I've got five dogs at home.", "Two dogs, I've got two dogs at home and no cats."),
]


def quantity_records() -> list[dict]:
    """The quantity probes: a count contradicted against the persona, an earlier turn or inside one reply."""
    made = []
    meta = {"made_by": "benchmarks/make_category_probes.py", "hand_written": True, "probe": "quantity"}

    def add(key: str, turns: list[dict], persona: list[str], hit: bool, reading: str, evidence: list[int]) -> None:
        made.append({"record_id": key, "turns": turns, "persona": persona, "is_contradiction": hit,
                     "aggregated_contradiction_indices": evidence if hit else [],
                     "category": ("intra" if reading == "intra" else "history") if hit else "none",
                     "meta": {**meta, "reading": reading}})

    for i, (line, question, contra, consistent) in enumerate(QUANTITY_PERSONA):
        for kind, reply in (("contra", contra), ("consistent", consistent)):
            add(f"quantity-persona-{i:02d}-{kind}", [{"turn_id": 0, "agent_id": "user", "text": question},
                                                     {"turn_id": 1, "agent_id": "bot", "text": reply}],
                [line], kind == "contra", "persona", [1])
    for i, (opener, said, follow, contra, consistent) in enumerate(QUANTITY_HISTORY):
        for kind, reply in (("contra", contra), ("consistent", consistent)):
            add(f"quantity-history-{i:02d}-{kind}", [{"turn_id": 0, "agent_id": "user", "text": opener},
                                                     {"turn_id": 1, "agent_id": "bot", "text": said},
                                                     {"turn_id": 2, "agent_id": "user", "text": follow},
                                                     {"turn_id": 3, "agent_id": "bot", "text": reply}],
                [], kind == "contra", "history", [1, 3])
    for i, (question, contra, consistent) in enumerate(QUANTITY_INTRA):
        for kind, reply in (("contra", contra), ("consistent", consistent)):
            add(f"quantity-intra-{i:02d}-{kind}", [{"turn_id": 0, "agent_id": "user", "text": question},
                                                   {"turn_id": 1, "agent_id": "bot", "text": reply}],
                [], kind == "contra", "intra", [1])
    return made


def records() -> list[dict]:
    made = []
    meta = {"made_by": "benchmarks/make_category_probes.py", "hand_written": True}
    for i, (question, contra, consistent) in enumerate(INTRA):
        for kind, reply in (("contra", contra), ("consistent", consistent)):
            turns = [{"turn_id": 0, "agent_id": "user", "text": question},
                     {"turn_id": 1, "agent_id": "bot", "text": reply}]
            hit = kind == "contra"
            made.append({"record_id": f"intra-{i:02d}-{kind}", "turns": turns, "is_contradiction": hit,
                         "aggregated_contradiction_indices": [1] if hit else [],
                         "category": "intra" if hit else "none", "meta": {**meta, "probe": "intra"}})
    for i, (opener, bot, user, contra, consistent, reading) in enumerate(ROLE):
        for kind, reply in (("contra", contra), ("consistent", consistent)):
            turns = [{"turn_id": 0, "agent_id": "user", "text": opener},
                     {"turn_id": 1, "agent_id": "bot", "text": bot},
                     {"turn_id": 2, "agent_id": "user", "text": user},
                     {"turn_id": 3, "agent_id": "bot", "text": reply}]
            hit = kind == "contra"
            made.append({"record_id": f"role-{i:02d}-{kind}", "turns": turns, "is_contradiction": hit,
                         "aggregated_contradiction_indices": [1, 3] if hit else [],
                         "category": "role" if hit else "none",
                         "meta": {**meta, "probe": "role", "reading": reading}})
    return made


def main() -> None:
    for rows, out in ((records(), OUT), (quantity_records(), QUANTITY_OUT)):
        with atomic_writer(out) as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{len(rows)} records -> {out}")


if __name__ == "__main__":
    main()
