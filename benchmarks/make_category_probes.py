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
    rows = records()
    with atomic_writer(OUT) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} records -> {OUT}")


if __name__ == "__main__":
    main()
