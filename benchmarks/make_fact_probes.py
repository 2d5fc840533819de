"""The wordy-persona probe set (issue 41), hand-written and frozen before the fact sheet or any of its thresholds.

Each row is one fact the bot holds (in its persona, or said in an earlier turn), a user's question, a wordy reply
that gives the fact another value (a contradiction) and a wordy consistent twin. The twins include what must *not*
clash: the past and wishes, a kind of the same thing, a second value of a fact that is not single-valued, the fact
restated in other words, a vague amount. Values and templates here are never used to train a detector
(``guard/training/facts.py`` refuses them; ``tests/test_fact_training_pairs.py`` holds it).

    .venv/bin/python -m benchmarks.make_fact_probes      # writes guard/data/probe_facts.jsonl
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "guard" / "data" / "probe_facts.jsonl"
FROZEN = "2026-11-27, written before the fact sheet, its rules or its thresholds (issue 41)"

# (relation, where the fact is, the fact's sentence, the user's question, contradiction, consistent twin,
#  the fact's value, the contradiction's value, what the twin shows)
ROWS: list[tuple[str, str, str, str, str, str, str, str, str]] = [
    # --- name
    ("name", "persona", "My name is Margaret.", "Sorry, what was your name again?",
     "Oh, people around here have always called me Beatrice, ever since I was a little girl.",
     "It's Margaret, though most of my friends just shorten it and call me Maggie.",
     "Margaret", "Beatrice", "restated"),
    ("name", "bot", "I'm Tobias, by the way, nice to meet you!", "How should I call you?",
     "You can just call me Leonard, that's the name my parents gave me and I like it.",
     "Tobias is fine, that's what everyone at the workshop calls me anyway.",
     "Tobias", "Leonard", "restated"),
    ("name", "persona", "My name is Ingrid.", "What's your name, if you don't mind me asking?",
     "Not at all, my name is Rosalind, I was named after my grandmother.",
     "Not at all, I'm Ingrid, I was named after my grandmother on my father's side.",
     "Ingrid", "Rosalind", "restated"),
    ("name", "bot", "My name is Rafael and I love meeting new people.", "Remind me, who am I talking to?",
     "You're talking to Dominic, and it's a pleasure to chat with you tonight.",
     "You're talking to Rafael, and it's a pleasure to chat with you tonight.",
     "Rafael", "Dominic", "restated"),
    # --- age
    ("age", "persona", "I am 34 years old.", "How old are you?",
     "I just turned 61 last spring, and honestly I still feel like a teenager most days.",
     "I'm thirty-four, which means I've got a few more years before I start complaining about my knees.",
     "34", "61", "restated"),
    ("age", "bot", "I'm 71 and retired, so I have lots of free time.", "Are you still in your twenties?",
     "Yes, I'm twenty-six, I only finished college a couple of years ago.",
     "Ha, not even close, I'm in my seventies now and enjoying every minute of retirement.",
     "71", "26", "restated"),
    ("age", "persona", "I am 19 years old.", "So how old are you exactly?",
     "I'm forty-three, though my kids keep telling me I act younger than that.",
     "I'm nineteen, I just started my first year at university this autumn.",
     "19", "43", "restated"),
    ("age", "persona", "I am 58 years old.", "What age are you, if you don't mind?",
     "I don't mind at all, I'm thirty-two and just getting started in life.",
     "I don't mind at all, I turned fifty-eight in March and I'm still going strong.",
     "58", "32", "restated"),
    # --- where it lives now
    ("lives_in", "persona", "I live in Lisbon.", "Where are you based these days?",
     "These days I'm based in Helsinki, I have a little flat right by the harbour there.",
     "These days I'm based in Lisbon, I have a little flat right by the river there.",
     "Lisbon", "Helsinki", "restated"),
    ("lives_in", "bot", "I live in Toronto with my partner.", "And where is home for you?",
     "Home for me is a small apartment in Chicago, right near the lake.",
     "I used to live in Montreal, but home for me is Toronto now, near the lake.",
     "Toronto", "Chicago", "past"),
    ("lives_in", "persona", "I live in Nairobi.", "Which city do you call home?",
     "I call Johannesburg home, I've had a house there for nearly ten years.",
     "I call Nairobi home, although one day I'd love to move somewhere by the sea.",
     "Nairobi", "Johannesburg", "wish"),
    ("lives_in", "persona", "I live in Melbourne.", "Where do you live now?",
     "Right now I live in Auckland, just a short walk from the ferry terminal.",
     "Right now I live in Melbourne, though I was originally from a small town up north.",
     "Melbourne", "Auckland", "past"),
    ("lives_in", "bot", "I moved to Denver last year and I love the mountains.", "Are you living in Denver?",
     "No, I'm living in Phoenix at the moment, it's much too hot for me there.",
     "Yes, I'm living in Denver at the moment, and the mountains are just as lovely as I hoped.",
     "Denver", "Phoenix", "restated"),
    # --- where it grew up
    ("grew_up", "persona", "I grew up in Glasgow.", "Where did you grow up?",
     "I grew up in Dublin, in a tiny house with a red door near the old brewery.",
     "I grew up in Glasgow, in a tiny flat near the river, though I live somewhere else now.",
     "Glasgow", "Dublin", "restated"),
    ("grew_up", "bot", "I was raised in Manila by my grandparents.", "Where were you raised?",
     "I was raised in Jakarta, my parents ran a little shop there.",
     "My grandparents raised me in Manila, they had a little shop near the bay.",
     "Manila", "Jakarta", "restated"),
    ("grew_up", "persona", "I grew up in Santiago.", "Which town were you born and raised in?",
     "I was born and raised in Montevideo, and I still miss the beaches there.",
     "I was born and raised in Santiago, but I'd love to live by the sea one day.",
     "Santiago", "Montevideo", "wish"),
    ("grew_up", "persona", "I grew up in Krakow.", "Tell me about where you spent your childhood.",
     "I spent my whole childhood in Prague, climbing the hills behind the castle.",
     "I spent my whole childhood in Krakow, playing in the old town squares with my cousins.",
     "Krakow", "Prague", "restated"),
    # --- job
    ("job", "persona", "I work as a pharmacist.", "What do you do for a living?",
     "I'm a carpenter, I spend most of my days building kitchen cabinets for people.",
     "I'm a pharmacist, I spend most of my days filling prescriptions and answering questions.",
     "pharmacist", "carpenter", "restated"),
    ("job", "bot", "I'm an architect, I design schools mostly.", "What's your job again?",
     "I drive a city bus, it's not glamorous but I meet a lot of interesting people.",
     "I design buildings, mostly schools and libraries, it's a lot of drawing and meetings.",
     "architect", "bus driver", "restated"),
    ("job", "persona", "I am a firefighter.", "Wait, aren't you an accountant?",
     "Yes, I am, I've been doing people's taxes and bookkeeping for fifteen years.",
     "No, I fight fires, I've been at the same station downtown for fifteen years.",
     "firefighter", "accountant", "restated"),
    ("job", "persona", "I work as a librarian.", "What kind of work do you do?",
     "I work as a dentist, mostly cleaning teeth and filling cavities for kids.",
     "I work at the public library, mostly helping kids find books they'll love.",
     "librarian", "dentist", "restated"),
    ("job", "bot", "I'm a physician at the county hospital.", "What kind of doctor are you?",
     "Oh, I'm not a doctor at all, I'm a mechanic and I fix trucks for a living.",
     "I'm an orthopedic surgeon, so I spend most of my week fixing broken bones.",
     "physician", "mechanic", "kind"),
    ("job", "persona", "I work as an electrician.", "Is your job hard?",
     "Being a lawyer is hard, I spend so many nights reading contracts in my office.",
     "Being an electrician is hard, I spend so many days crawling under houses to fix wiring.",
     "electrician", "lawyer", "restated"),
    # --- how many of something
    ("count", "persona", "I have three cats.", "How many cats do you have?",
     "I have seven cats, and every single one of them sleeps on my bed at night.",
     "I have three cats, and every single one of them sleeps on my bed at night.",
     "3 cats", "7 cats", "restated"),
    ("count", "bot", "I have one horse, she's called Clover.", "How many horses do you keep?",
     "We keep four horses on the farm, and I ride them all on the weekends.",
     "Just the one, Clover, and she keeps me busy enough on the weekends.",
     "1 horse", "4 horses", "restated"),
    ("count", "persona", "I have two parrots.", "Do you have lots of birds?",
     "I do, I have nine parrots and they make a terrible racket every morning.",
     "I do have a few, and they make a terrible racket every morning.",
     "2 parrots", "9 parrots", "vague"),
    ("count", "persona", "I have four rabbits.", "Tell me about your pets.",
     "I only have a single rabbit, a big grey one who loves carrots.",
     "My four rabbits are my whole world, and I'd love to have a goat one day too.",
     "4 rabbits", "1 rabbit", "wish"),
    ("children", "persona", "I have two daughters.", "Do you have kids?",
     "Yes, five of them, all daughters, so our house is never quiet.",
     "Yes, two daughters, so our house is never quiet.",
     "2 children", "5 children", "restated"),
    ("children", "bot", "My three sons keep me very busy.", "How many children do you have?",
     "I have just one son, he's in high school now and taller than me.",
     "I have three sons, the oldest is in high school now and taller than me.",
     "3 children", "1 child", "restated"),
    ("children", "persona", "I have one child.", "Is it a big family?",
     "Oh yes, I have six children, so dinner time is always chaos.",
     "Not really, it's just me, my husband and our son, so dinner is pretty calm.",
     "1 child", "6 children", "restated"),
    ("children", "persona", "I have four kids.", "How many kids do you have?",
     "Just two kids, a boy and a girl, and they keep me on my toes.",
     "Four kids, two boys and two girls, and they keep me on my toes.",
     "4 children", "2 children", "restated"),
    ("siblings", "persona", "I have three brothers.", "Do you have any siblings?",
     "Yes, I have one brother, he's a couple of years older than me.",
     "Yes, three brothers, all of them older than me and all of them loud.",
     "3 brothers", "1 brother", "restated"),
    ("siblings", "bot", "I have two sisters who live nearby.", "How many sisters do you have?",
     "I have eight sisters, we could fill a whole football team between us.",
     "Two sisters, and they both live ten minutes away, which is lovely.",
     "2 sisters", "8 sisters", "restated"),
    ("siblings", "persona", "I am an only child.", "Do you have any brothers or sisters?",
     "I have a little brother, he's studying engineering in another city.",
     "No, it was always just me, though I'd have loved a brother growing up.",
     "only child", "a brother", "wish"),
    # --- diet
    ("diet", "persona", "I am a vegan.", "What did you have for dinner?",
     "I had a big plate of pork chops with mashed potatoes, my favourite comfort food.",
     "I had a big bowl of lentil curry with rice, my favourite comfort food.",
     "vegan", "pork", "restated"),
    ("diet", "persona", "I'm a vegetarian.", "What's your favorite meal?",
     "Grilled salmon with lemon and butter, I could eat it every single day.",
     "Grilled halloumi with lemon and peppers, I could eat it every single day.",
     "vegetarian", "salmon", "restated"),
    ("diet", "bot", "I stopped eating meat years ago, I'm vegetarian now.", "Do you eat meat?",
     "Oh yes, I love a good bacon sandwich on a Sunday morning.",
     "No, not for years now, although I used to love a bacon sandwich as a kid.",
     "vegetarian", "bacon", "past"),
    ("diet", "persona", "I am a vegan.", "Do you eat cheese?",
     "All the time, I put a thick slice of cheddar on almost everything I cook.",
     "Never, I use a cashew spread instead and honestly I like it better.",
     "vegan", "cheese", "restated"),
    ("diet", "persona", "I'm a vegetarian.", "What do you usually cook at home?",
     "Mostly roast turkey with vegetables, my whole family loves it.",
     "Mostly roast vegetables with chickpeas, my whole family loves it.",
     "vegetarian", "turkey", "restated"),
    # --- what it never did / does not have
    ("never", "persona", "I have never been on a plane.", "Have you ever flown anywhere?",
     "Sure, I fly to visit my aunt in Spain every summer, I love window seats.",
     "No, never, I take the train everywhere, but I'd love to fly somewhere one day.",
     "never flown", "flies every summer", "wish"),
    ("never", "persona", "I don't own a car.", "What do you drive?",
     "I drive an old blue pickup truck that my dad gave me when I turned eighteen.",
     "Nothing, I don't have a car, I ride my bike or take the bus everywhere.",
     "no car", "a pickup truck", "restated"),
    ("never", "bot", "I've never learned to swim, water scares me.", "Do you go swimming much?",
     "Yes, I swim laps at the pool every morning before work, it wakes me up.",
     "No, I can't swim at all, I just sit by the pool and read.",
     "never swam", "swims every morning", "restated"),
    ("never", "persona", "I have no pets.", "What's your dog's name?",
     "His name is Biscuit, he's a scruffy little terrier who follows me everywhere.",
     "I don't have a dog, or any pets at all, my apartment doesn't allow them.",
     "no pets", "a dog", "restated"),
    ("never", "persona", "I have never been married.", "How long have you been married?",
     "Twenty years this June, my wife and I met in college.",
     "I've never been married, although I'd like to find the right person someday.",
     "never married", "married 20 years", "wish"),
    # --- not single-valued: a second value is no clash (twins only show it; the contradiction is single-valued)
    ("plays", "persona", "I play the guitar.", "Do you play any instruments?",
     "No, I've never played an instrument in my life, I have absolutely no ear for music.",
     "Yes, the guitar mostly, and I've recently started learning the violin as well.",
     "guitar", "never played", "second-value"),
    ("likes", "bot", "I love hiking in the mountains.", "What do you like doing on weekends?",
     "Nothing outdoors, I really can't stand hiking, all that walking uphill bores me.",
     "Hiking when the weather is good, and I also love baking bread when it rains.",
     "hiking", "can't stand hiking", "second-value"),
]


def records() -> list[dict]:
    out: list[dict] = []
    for number, (relation, where, fact, question, contra, twin, value, other, twin_kind) in enumerate(ROWS):
        persona = [fact] if where == "persona" else []
        before = [] if where == "persona" else [
            {"turn_id": 0, "agent_id": "user", "text": "Hi! Tell me a bit about yourself."},
            {"turn_id": 1, "agent_id": "bot", "text": fact}]
        for kind, reply in (("contra", contra), ("consistent", twin)):
            turns = [*before,
                     {"turn_id": len(before), "agent_id": "user", "text": question},
                     {"turn_id": len(before) + 1, "agent_id": "bot", "text": reply}]
            is_contra = kind == "contra"
            out.append({
                "record_id": f"fact-{relation}-{number:02d}-{kind}",
                "turns": turns, "persona": persona, "is_contradiction": is_contra,
                "aggregated_contradiction_indices": [len(turns) - 1] if is_contra else [],
                "category": "history" if is_contra else "none",
                "meta": {"hand_written": True, "probe": "wordy-fact", "relation": relation,
                         "fact_in": "persona" if where == "persona" else "earlier bot turn",
                         "value": value, "other_value": other if is_contra else None,
                         "twin_kind": None if is_contra else twin_kind,
                         "twin": f"fact-{relation}-{number:02d}-{'consistent' if is_contra else 'contra'}",
                         "frozen": FROZEN}})
    return out


def main() -> None:
    rows = records()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} records ({len(ROWS)} facts) -> {OUT}")


if __name__ == "__main__":
    main()
