"""The classroom filter: what a small bot writes, checked for what a class of 16-year-olds should not be shown.

Every candidate reply is checked before the guard judges it (``conversation.guarding``): a flagged candidate is never
sent (the policy chooses among the others, else the safe reply goes out), and no page, transcript or export a student
is given shows its text: only that it was withheld and why (``withheld_line``, the one wording of it). The signed-in
teacher sees it whole. The app and the served guard share it; it is on unless the server was started with it off
(``GUARD_CLASS_FILTER=0``, or ``python -m serve --class-filter off``).

What it reads (issue 53: listed words matched exactly let plurals, spellings and threats made of ordinary words
through):

* **words in their forms**: each word's lemma through the project's one spaCy parse (``guard.language.grammar.parse``), plural
  and other endings taken off, and the text first undone of the usual disguises (``normalized``: "f@ggot", "n1gger",
  "fuuuuck", "sh!t"; letters spaced or dotted apart, "f a g g o t", found by ``_spaced``). A word is caught when it is
  one of ``SLURS``, ``ABBREVIATIONS`` or better-profanity's list (PyPI ``better-profanity``: 900-odd words with their
  leetspeak spellings, measured against alt-profanity-check in docs/experiments/2026-11-27-class-server.md) less
  ``ALLOWED`` (the words of that list a class says without harm: who people are, the body, history), or a made-up
  word holding a strong stem (``word_in_word``: "petfuck"). A name is not a word ("Dick Van Dyke", ``NAMED``), nor is
  a bird or a plant (``_innocent_use``: "blue tit", "pussy willow").
* **phrases** (``_phrases``, over the parse's sentences): a threat or a push to self-harm aimed at the reader ("I'll
  stab you", "go kill yourself", "you should die"), hate against a group of people (a group in ``GROUPS`` called one
  of ``DEGRADING``, hated, or to be killed or sent away; "asian monkey"), an insult aimed at the reader or their family
  built of ordinary words (``INSULTS``: "you're a stupid, ugly person", "nobody likes you"), and sexual talk aimed at
  the reader. A negated or conditional clause ("I would never hurt you", "if you feel like hurting yourself, talk to
  someone") and a group named without a slur ("my Jewish friend", "Black history month") are not caught.

The lists are kept here and measured on a labelled set frozen before they were written
(``benchmarks/data/class_filter_lines.json``; ``python -m benchmarks.bench_class_filter lines``; docs/app.md).
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from guard.judge.report import Withheld
from guard.language.grammar import parse

#: the environment variable the server is started with: "0" (or off / false / no) turns the filter off
ENV = "GUARD_CLASS_FILTER"
OFF_WORDS = {"0", "off", "false", "no"}
#: what ``Withheld.by`` says of this filter
BY = "classroom filter"


class Why(StrEnum):
    """Why the filter withheld a text, in a class's words (``withheld_line`` says it)."""

    SLUR = "a slur"
    THREAT = "a threat or a push to self-harm"
    HATE = "hate against a group of people"
    INSULT = "an insult"
    SEXUAL = "sexual talk"
    SWEARING = "swearing"


def withheld_line(whys) -> str:
    """All a student is shown of a withheld candidate: that it was withheld, and why (the one wording of it; the
    report keeps it as ``Withheld.masked``)."""
    said = ", ".join(dict.fromkeys(str(w) for w in whys)) or "words a class is not shown"
    return f"[withheld by the {BY}: {said}; never sent, its text shown only to a signed-in teacher]"


def teacher_line(withheld: Withheld) -> str:
    """What the signed-in teacher is told of a withheld candidate beside its text: why, and what was caught."""
    return f"{withheld.masked.strip('[]')}; caught: {', '.join(withheld.words)}"


#: better-profanity's words a class says without harm (caught only inside a phrase below, never alone): who people
#: are, the body and health, everyday words with a rude second sense, history, drink and plants as topics, and mild
#: words a teacher says
ALLOWED = frozenset({
    # who people are
    "gay", "gays", "lesbians", "queer", "queers", "transsexual",
    # the body, health and biology
    "breasts", "crotch", "ejaculate", "erect", "erection", "fart", "herpes", "hiv", "hymen", "labia", "loin", "loins",
    "menses", "menstruate", "menstruation", "nipple", "nipples", "organ", "ovary", "ovum", "ovums", "pee", "penis",
    "pms", "poop", "potty", "pube", "pubic", "pubis", "rectal", "rectum", "rectus", "scrotum", "semen", "sperm",
    "tampon", "teat", "testes", "testicle", "testis", "tinkle", "urinal", "urine", "uterus", "vagina", "vomit",
    "vulva", "womb", "sex", "sexual", "naked", "nude", "virgin",
    # everyday words with a rude second sense
    "balls", "dummy", "facial", "flange", "fondle", "hump", "humped", "humping", "knob", "lust", "lusting", "maxi",
    "nappy", "paddy", "pasty", "pastie", "pawn", "pot", "revue", "sandbar", "screw", "screwed", "screwing", "seaman",
    "seamen", "slope", "snatch", "steamy", "strip", "stroke", "thrust", "toots", "tramp", "undies", "unwed", "wad",
    "wang", "willies", "willy", "woody", "whiz", "racy", "len", "omg", "lmao", "hooter", "hooters", "pinko", "prude",
    "prig", "souse", "soused", "stiffy", "suck", "sucked", "sucking", "booty", "jerk", "jerked", "dopey", "doofus",
    "ninny", "nimrod", "weirdo", "ugly", "fat", "stupid", "dink", "dinks", "kill", "murder", "sniper", "uzi",
    "napalm", "inbred", "leper", "master-bate", "playboy", "trashy", "tawdry", "vulgar", "sleazy", "sleaze",
    "enlargement", "foobar", "fubar", "god", "hell", "damn", "drunk", "cowgirl", "cowgirls", "cow girl", "cow girls",
    # history
    "nazi", "nazism", "hitler", "reich", "kkk", "klan", "slave", "massa", "negro",
    # drink, plants and medicines as topics
    "rum", "vodka", "weed", "hemp", "hooch", "hootch", "hookah", "opium", "valium", "peyote", "opiate", "heroin",
    "ganja", "reefer", "toke", "stoned", "junkie", "junky", "meth", "pcp",
})
#: slurs against who people are, each with the spellings that disguise it (their plurals and endings are read by
#: ``forms``); caught wherever they stand
SLURS = frozenset({
    "fag", "fagg", "faggot", "fagot", "faggit", "faggy", "phag", "phaggot", "fagtard", "nigger", "nigga", "niggah",
    "nigguh", "niqqa", "niqqer", "niger", "nig", "negroid", "retard", "retarded", "tard", "spaz", "spazz", "spastic",
    "spacker", "mong", "mongoloid", "kike", "yid", "chink", "gook", "spic", "spick", "wetback", "beaner", "tranny",
    "trannie", "shemale", "dyke", "paki", "towelhead", "raghead", "coon", "gypo", "gyppo", "pikey", "homo", "lesbo",
    "poof", "poofter", "wog", "jap", "sambo", "golliwog", "darkie", "kaffir", "halfbreed", "zipperhead", "camel jockey",
})
#: chat shorthand for swearing and for a push to self-harm, caught as whole words
ABBREVIATIONS = {"wtf": Why.SWEARING, "stfu": Why.SWEARING, "gtfo": Why.SWEARING, "fck": Why.SWEARING,
                 "fcking": Why.SWEARING, "fk": Why.SWEARING, "fkn": Why.SWEARING, "fuk": Why.SWEARING,
                 "fuking": Why.SWEARING, "mofo": Why.SWEARING, "omfg": Why.SWEARING, "kys": Why.THREAT}
#: words of better-profanity's list whose catch is worded as sexual talk rather than swearing
SEXUAL_WORDS = frozenset({"dick", "cock", "pussy", "tit", "tits", "titties", "boob", "boobs", "porn", "blowjob",
                          "handjob", "cum", "jizz", "dildo", "horny", "orgasm", "boner", "milf", "nudes", "penis",
                          "anal", "clit", "vibrator", "wank", "sexy"})
#: words of the lists that are also names: a capitalised name ("Dick Van Dyke", "Moby Dick", "grandpa Dick") is not
#: caught for them
NAMED = frozenset({"dick", "dyke", "dykes", "willy", "fanny", "randy", "cox", "johnson", "wang", "hooker", "dong",
                   "homo", "spic", "coon", "paki"})
#: strong stems: a made-up word that holds one is caught (``word_in_word``) unless it is one of ``ORDINARY``
STEMS = ("fuck", "phuck", "cunt", "slut", "whore", "shit", "bitch", "jizz", "twat", "wank", "porn", "nigg", "dick",
         "cock", "pussy", "dildo", "cum", "faggot")
#: ordinary words (and names) that hold a stem: never caught for it
ORDINARY = frozenset({
    "scunthorpe", "swank", "swanky", "swankier", "dickens", "dickensian", "dickinson", "dickson", "dickerson", "dickey",
    "cockpit", "cockpits", "peacock", "peacocks", "cockatoo", "cockatoos", "cockatiel", "cockatiels", "cockroach",
    "cockroaches", "cocktail", "cocktails", "cockerel", "cockerels", "cockney", "cockle", "cockles", "cocky", "cocker",
    "hancock", "hitchcock", "shuttlecock", "shuttlecocks", "woodcock", "gamecock", "weathercock", "petcock",
    "stopcock", "ballcock", "babcock", "cocksure", "pussycat", "pussycats", "pussyfoot", "pussyfooting", "niggle",
    "niggles", "niggling", "snigger", "sniggered", "sniggering", "sniggers", "cockermouth",
    # "cum" inside ordinary words
    "cucumber", "cucumbers", "document", "documents", "documented", "documentary", "documentaries", "circumstance",
    "circumstances", "cumulative", "accumulate", "accumulated", "accumulating", "accumulation", "circumference",
    "incumbent", "succumb", "succumbed", "cumbersome", "scum", "vacuum", "vacuums", "vacuumed", "magna", "cumin",
    "curriculum", "curricula", "modicum", "cummings", "cumbria", "cumberland", "circumvent", "circumnavigate",
    "tecumseh", "encumber", "encumbered", "cumulus", "summa", "cum",
})

# ---------------------------------------------------------------- the phrases' words (lemmas)
#: who "you" is: the reader
YOU = frozenset({"you", "u", "ya", "yourself", "urself", "yourselves", "ye", "thee"})
#: what a threat aims at besides "you": "your" with one of these
YOURS = frozenset({"family", "mum", "mom", "mother", "dad", "father", "sister", "brother", "house", "home", "face",
                   "leg", "legs", "arm", "arms", "neck", "head", "wrist", "wrists", "throat", "dog", "cat", "kid",
                   "kids", "child", "children", "friend", "friends", "life", "skull", "teeth", "nose", "body"})
#: verbs of harming someone
VIOLENT = frozenset({"kill", "murder", "stab", "shoot", "hurt", "beat", "punch", "strangle", "choke", "rape", "burn",
                     "hang", "drown", "slap", "kick", "smash", "break", "bash", "cut", "slit", "behead", "torture",
                     "bury", "attack", "gut", "butcher", "slaughter", "execute", "poison", "assault", "shank",
                     "batter", "whip", "lynch", "stomp", "maim", "destroy", "neck", "hit", "knife", "gas", "skin",
                     "exterminate", "eliminate", "eradicate", "nuke"})
#: what is done to a group to be rid of it, besides harm
EXPEL = frozenset({"deport", "ban", "expel", "remove", "sterilize", "sterilise", "lock", "cage", "segregate"})
#: verbs of hating
HATE_VERBS = frozenset({"hate", "despise", "loathe", "detest", "abhor"})
#: words of wishing or telling: what makes "you ... die" or "kill all X" a threat rather than a report
WISHING = frozenset({"should", "will", "'ll", "ll", "must", "ought", "gonna", "going", "deserve", "hope", "wish",
                     "want", "need", "better", "go", "just", "let", "'s", "please", "pls", "shall", "gotta"})
#: negation and condition: a clause holding one is not a threat or an insult ("I would never hurt you")
NEGATING = frozenset({"not", "n't", "never", "no", "nobody", "noone", "none", "nothing", "neither", "nor", "if",
                      "unless", "dont", "wont", "cant", "shouldnt", "wouldnt", "stop", "without", "whether"})
#: groups of people by who they are (lemmas; with "people", "folk" and the like after an adjective: ``IDENTITY``)
GROUPS = frozenset({"jew", "jews", "muslim", "moslem", "islamist", "christian", "hindu", "sikh", "buddhist",
                    "atheist", "catholic", "protestant", "arab", "african", "asian", "mexican", "latino", "latina",
                    "hispanic", "immigrant", "migrant", "refugee", "foreigner", "gay", "gays", "lesbian", "homosexual",
                    "bisexual", "transgender", "tranny", "woman", "women", "girl", "female", "black", "blacks",
                    "white", "whites", "gypsy", "gypsies", "roma", "traveller", "chinese", "indian", "pakistani",
                    "nigerian", "somali", "disabled", "autistic", "jewry", "negro", "pole", "irish", "romanian",
                    "turk", "kurd", "palestinian", "israeli", "ukrainian", "russian", "japanese", "korean", "filipino",
                    "polish", "muslims"}) | SLURS
#: adjectives of who people are, which name a group with ``PEOPLE`` or stand before a degrading word ("asian monkey")
IDENTITY = frozenset({"black", "white", "brown", "gay", "trans", "transgender", "jewish", "muslim", "islamic",
                      "asian", "african", "arab", "arabic", "mexican", "chinese", "indian", "pakistani", "disabled",
                      "autistic", "lesbian", "queer", "bisexual", "immigrant", "foreign", "latino", "hispanic",
                      "christian", "hindu", "catholic", "gypsy", "polish", "romanian", "somali", "nigerian",
                      "japanese", "korean", "filipino", "jew"})
PEOPLE = frozenset({"people", "person", "folk", "folks", "man", "men", "woman", "women", "guy", "guys", "kid", "kids",
                    "lives", "life", "boy", "boys", "girl", "girls", "family", "families", "race"})
#: what a group of people is called to degrade it: animals, vermin, disease, filth, crime, and worthless or inferior
DEGRADING = frozenset({"vermin", "rat", "animal", "monkey", "ape", "pig", "dog", "cockroach", "roach", "parasite",
                       "disease", "cancer", "plague", "scum", "subhuman", "savage", "trash", "garbage", "filth",
                       "terrorist", "criminal", "thief", "rapist", "murderer", "stupid", "dumb", "evil", "disgusting",
                       "inferior", "dirty", "lazy", "useless", "freak", "sick", "gross", "worthless", "idiot", "moron",
                       "retard", "dangerous", "violent", "ugly", "filthy", "insect", "maggot", "worm", "leech",
                       "virus", "infestation", "snake", "beast", "barbarian", "primitive", "pest", "swine", "cattle",
                       "rodent", "abomination", "mistake", "unnatural", "perverted", "pervert", "pedophile", "paedophile",
                       "groomer", "thug", "inbred", "brainless", "backward"})
#: insulting words a sentence aims at the reader ("you're a stupid, ugly person"; "you moron"), caught only so aimed
INSULTS = frozenset({"idiot", "moron", "imbecile", "cretin", "loser", "freak", "dumbass", "dimwit", "halfwit",
                     "nitwit", "numbskull", "dunce", "fool", "clown", "pig", "cow", "rat", "slob", "failure", "creep",
                     "weirdo", "jerk", "scum", "trash", "garbage", "rubbish", "disgrace", "parasite", "maggot", "worm",
                     "leech", "pest", "vermin", "psycho", "pervert", "degenerate", "coward", "fatso", "fatty",
                     "stupid", "dumb", "ugly", "fat", "worthless", "useless", "pathetic", "disgusting", "brainless",
                     "idiotic", "moronic", "hideous", "gross", "repulsive", "revolting", "smelly", "stinky", "creepy",
                     "retarded", "braindead", "spineless", "vile", "filthy", "nasty", "pitiful", "lame",
                     "bitch", "bastard", "prick", "wanker", "twat", "dickhead", "asshole", "arsehole", "shit", "crap",
                     "scumbag", "sleazebag", "douchebag", "douche", "tosser", "git", "dipshit", "airhead", "bozo",
                     "buffoon", "oaf", "twit", "nobody", "nonce", "hag", "troll", "snake", "disappointment",
                     "embarrassment", "mistake", "dog", "whale", "cunt", "slut", "whore"})
#: who an insult about "your ..." hits: the reader's family and body
FAMILY = frozenset({"mum", "mom", "mother", "mama", "mommy", "mummy", "dad", "father", "daddy", "sister", "brother",
                    "family", "face", "grandma", "granny", "gran", "nan", "wife", "girlfriend", "boyfriend", "kid",
                    "kids", "son", "daughter", "parent", "parents", "existence", "life"})
COPULA = frozenset({"be", "'re", "are", "is", "am", "'m", "'s", "r", "re", "was", "were", "look", "seem", "sound",
                    "become", "remain", "stay", "act", "smell"})

#: fixed phrases, read in the sentence's normalized lower-case words (a negation earlier in the sentence does not
#: free them where ``True`` follows: they hold their own, "nobody would miss you")
PHRASES: tuple[tuple[Why, str, bool], ...] = (
    (Why.THREAT, r"\bkill (?:ur|your) ?self\b", False),
    (Why.THREAT, r"\b(?:go |just )?(?:hang|neck|off|shoot|drown|stab|burn) (?:ur|your) ?self\b", False),
    (Why.THREAT, r"\bdrink (?:some )?bleach\b", False),
    (Why.THREAT, r"\bslit (?:ur|your) (?:wrists?|throat)\b", False),
    (Why.THREAT, r"\b(?:go )?jump (?:off|from) (?:a|the) (?:bridge|cliff|building|roof|window)\b", False),
    (Why.THREAT, r"\bend (?:ur|your) (?:own )?life\b", False),
    (Why.THREAT, r"\bi know where (?:you|u) live\b", False),
    (Why.THREAT, r"\bdie in a (?:fire|hole|ditch)\b", False),
    (Why.THREAT, r"\bdrop dead\b", False),
    (Why.THREAT, r"\b(?:nobody|no one|noone) (?:would|will|is going to|'d|'ll) (?:ever )?miss (?:you|u)\b", True),
    (Why.THREAT, r"\bbetter off dead\b", False),
    (Why.THREAT, r"\b(?:world|everyone|everybody|we|earth|everything) (?:would|will|'d|'ll) be better "
                 r"(?:off )?without (?:you|u)\b", True),
    (Why.THREAT, r"\b(?:wish|hope|want|need) (?:you|u) (?:were |was |'re |are |to be )?dead\b", False),
    (Why.HATE, r"\bhitler (?:was|is) right\b", False),
    (Why.HATE, r"\bgas the\b", False),
    (Why.HATE, r"\b(?:white|aryan) (?:power|pride|supremacy)\b", False),
    (Why.HATE, r"\b(?:heil hitler|sieg heil|1488|14 ?words)\b", False),
    (Why.HATE, r"\bholocaust (?:never happened|(?:is|was) (?:a )?(?:lie|hoax|myth|fake|made up))\b", True),
    (Why.HATE, r"\b(?:black|gay|trans|jewish|muslim|brown|asian) lives (?:do not|don't|dont|doesn't|never) matter\b",
     True),
    (Why.HATE, r"\b(?:women|woman|girls|a woman's place|females) (?:belong|(?:is|are) best) in the kitchen\b", False),
    (Why.HATE, r"\b(?:jews|the jews|jewish people|zionists) (?:control|run|own) (?:the|everything|all)\b", False),
    (Why.HATE, r"\bgo back to (?:your (?:own )?country|africa|china|mexico|india|pakistan|the jungle)\b", False),
    (Why.INSULT, r"\b(?:nobody|no one|noone|no-one) (?:likes|loves|wants|cares about|will ever love|will ever like|"
                 r"would ever love|could ever love|will love|would love) (?:you|u)\b", True),
    (Why.INSULT, r"\b(?:waste of (?:space|oxygen|air|skin|life)|piece of (?:trash|garbage|shit|crap|rubbish|junk|filth)"
                 r"|excuse for a (?:human|person))\b", False),
    (Why.INSULT, r"\b(?:you|u) (?:smell|stink|look) like (?:a )?(?:garbage|trash|shit|poop|crap|rubbish|sewage|a pig|"
                 r"pig|a rat|rat|a dump|dump|a toilet|toilet|death|roadkill|vomit|puke)\b", False),
    (Why.INSULT, r"\bshut (?:your|ur) (?:mouth|face|trap|gob)\b", False),
    (Why.SWEARING, r"\b(?:shut|what|who|how|why|where) the (?:f|eff|fk|fuq|fudge)\b(?! (?:word|key|grade))", False),
    (Why.SEXUAL, r"\bsend (?:me )?(?:your )?(?:nudes|nude pics|naked pics|pics of your body)\b", False),
    (Why.SEXUAL, r"\b(?:have|having|had|want) sex with (?:you|u|me)\b", False),
    (Why.SEXUAL, r"\btake (?:off )?(?:your|ur) (?:clothes|shirt|pants|top|bra|knickers|underwear)(?: off)?\b", False),
    (Why.SEXUAL, r"\bshow me (?:your|ur) (?:body|boobs|tits|breasts|chest|ass|butt|naked)\b", False),
    (Why.SEXUAL, r"\b(?:talk dirty to me|touch (?:you|u|yourself) (?:there|down there)|sleep with (?:you|u|me))\b",
     False),
)
_PHRASES = tuple((why, re.compile(pattern), own) for why, pattern, own in PHRASES)

#: a word with a letter and a symbol standing for one ("f@ggot", "n1gger", "sh!t")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i",
                       "|": "i", "€": "e"})
_DISGUISED = re.compile(r"(?<![\w@$!|€])(?=[\w@$!|€]*[A-Za-z])(?=[\w@$!|€]*[013457@$!|€][\w@$!|€]*[A-Za-z])"
                        r"[\w@$!|€]+")
#: letters spaced or dotted apart ("f a g g o t", "F.u.c.k. y.o.u."): four or more single letters
_SPACED = re.compile(r"(?<![A-Za-z])[A-Za-z](?:[ .\-_*]+[A-Za-z](?![A-Za-z])){3,}")
_REPEATS = re.compile(r"([A-Za-z])\1{2,}")
#: a word its writer starred ("b******", "f**k"): a letter and two or more stars
_STARRED = re.compile(r"(?<![A-Za-z*])[A-Za-z][A-Za-z*]*\*[A-Za-z*]*(?![A-Za-z*])")
_LETTERS = re.compile(r"[a-z]+")


def normalized(text: str) -> str:
    """``text`` undone of the disguises a word list misses: Unicode forms folded, symbols and digits standing for
    letters inside a word read as those letters ("f@ggot" → "faggot"; a trailing "!" stays punctuation), a letter
    written three or more times in a row read once ("fuuuuck" → "fuck")."""
    text = unicodedata.normalize("NFKC", str(text or ""))

    def undisguise(match: re.Match) -> str:
        word = match.group()
        body = word.rstrip("!")
        return body.translate(_LEET) + word[len(body):]

    text = _DISGUISED.sub(undisguise, text)
    return _REPEATS.sub(r"\1", text)


def forms(word: str) -> set[str]:
    """A lower-case word and the stems its endings may hide ("faggots" → "faggot", "trannies" → "tranny")."""
    w = word.lower().strip("'’")
    out = {w}
    if w.endswith("'s") or w.endswith("’s"):
        w = w[:-2]
        out.add(w)
    if len(w) > 3 and w.endswith("ies"):
        out |= {w[:-3] + "y", w[:-3] + "ie"}
    if len(w) > 3 and w.endswith("es"):
        out.add(w[:-2])
    if len(w) > 2 and w.endswith("s") and not w.endswith("ss"):
        out.add(w[:-1])
    for stem in list(out):
        if len(stem) > 4 and stem.endswith("y") and stem[-2] == stem[-3]:  # "faggy" -> "fag"
            out.add(stem[:-2])
    return out


def _slur_forms(word: str) -> set[str]:
    """``forms`` and the verb endings a slur takes ("fagging", "retarded"): read against ``SLURS`` only (against the
    long list they find words that are not there: "assessing" -> "asses")."""
    out = forms(word)
    for stem in list(out):
        if len(stem) > 5 and stem.endswith(("ing", "ed")):
            base = stem[:-3] if stem.endswith("ing") else stem[:-2]
            out |= {base, base + "e"} | ({base[:-1]} if len(base) > 2 and base[-1] == base[-2] else set())
    return out


@dataclass(frozen=True)
class Found:
    """One thing the filter caught: the words as read (after ``normalized``) and why."""

    words: str
    why: Why


@dataclass(frozen=True)
class Screened:
    """What the filter found in one text, and what a student may be shown of it (``shown``)."""

    text: str = ""
    found: tuple[Found, ...] = ()
    by: str = BY

    @property
    def flagged(self) -> bool:
        return bool(self.found)

    @property
    def words(self) -> tuple[str, ...]:
        """What was caught, for the signed-in teacher (the words as read)."""
        return tuple(dict.fromkeys(f.words for f in self.found))

    @property
    def whys(self) -> tuple[Why, ...]:
        return tuple(dict.fromkeys(f.why for f in self.found))

    @property
    def shown(self) -> str:
        """The text as a page may show it to anyone: itself, or only that it was withheld and why."""
        return withheld_line(self.whys) if self.flagged else self.text

    def withheld(self) -> Withheld:
        """The record a report keeps of a candidate this filter kept from being sent: what it caught (the teacher's)
        and, in ``masked``, all a student is shown."""
        return Withheld(by=self.by, words=self.words, masked=self.shown)


@dataclass
class ClassroomFilter:
    """Word forms and phrases (module docstring); ``check`` is the one call."""

    allowed: frozenset[str] = ALLOWED

    def __post_init__(self) -> None:
        from importlib import resources

        from better_profanity import Profanity

        self._profanity = Profanity()
        self._profanity.load_censor_words(whitelist_words=sorted(self.allowed))
        listed = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8")
        # the list's entries of several words ("blow job"): found in the text as a phrase, spaces or not
        phrases = sorted({w.strip().lower() for w in listed.splitlines() if " " in w.strip()} - self.allowed)
        self._list_phrases = re.compile(r"(?<![a-z])(?:" + "|".join(
            r"[\s_-]*".join(re.escape(part) for part in phrase.split()) for phrase in phrases) + r")(?![a-z])",
            re.IGNORECASE) if phrases else None
        self._words: dict[str, bool] = {}  # a word, lowercased -> whether the list has it (a chat repeats its words)
        #: the list's single words a starred word may stand for (its strong words: the allowed ones are left out)
        self._strong = sorted({w.strip().lower() for w in listed.splitlines()
                               if w.strip().isalpha() and len(w.strip()) > 2} - self.allowed | SLURS)

    def _listed(self, word: str) -> bool:
        key = word.lower()
        found = self._words.get(key)
        if found is None:  # better-profanity only reads its word set once loaded: threads check at once
            found = self._words[key] = key not in self.allowed and bool(self._profanity.contains_profanity(key))
        return found

    def word(self, word: str, lemma: str = "", name: bool = False) -> Why | None:
        """Why one word (with its lemma, when parsed) is caught wherever it stands, or None. ``name``: it stands as a
        proper noun inside a sentence (a place or a person, "Cockburnspath": no made-up compound)."""
        candidates = forms(word) | (forms(lemma) if lemma else set())
        if (_slur_forms(word) | candidates) & SLURS:
            return Why.SLUR
        low = word.lower()
        if low in ABBREVIATIONS:
            return ABBREVIATIONS[low]
        if low in self.allowed or (lemma and lemma.lower() in self.allowed):
            return None
        if any(self._listed(f) for f in candidates):
            return Why.SEXUAL if candidates & SEXUAL_WORDS else Why.SWEARING
        if word_in_word(word) and not (name and word[:1].isupper()):
            return Why.SEXUAL if any(s in low for s in ("dick", "cock", "pussy", "porn", "cum", "dildo", "jizz")) \
                else Why.SWEARING
        return None

    def starred(self, word: str) -> str | None:
        """The strong word a starred word stands for ("b******" -> "bitches"), or None: its letters in place, a star
        for each other letter, at least two stars and a letter."""
        low = word.lower()
        if low.count("*") < 2 or not any(c.isalpha() for c in low):
            return None
        shape = re.compile(re.escape(low).replace(r"\*", "[a-z]"))
        return next((w for w in self._strong if len(w) == len(low) and shape.fullmatch(w)), None)

    def check(self, text: str) -> Screened:
        """What the filter finds in ``text`` (nothing: the text may be shown; else never sent, and a student is shown
        only ``Screened.shown``)."""
        text = str(text or "")
        found: list[Found] = []
        for run in _SPACED.finditer(text):  # letters spaced apart, read joined
            joined = re.sub(r"[^A-Za-z]", "", run.group())
            why = self.word(joined)
            if why is not None:
                found.append(Found(joined.lower(), why))
        for starred in _STARRED.finditer(text):  # a word its writer starred, read as the word it stands for
            stands_for = self.starred(starred.group())
            if stands_for is not None:
                found.append(Found(starred.group().lower(), Why.SWEARING))  # which word it hides is a guess
        readable = normalized(text)
        if self._list_phrases is not None:
            found += [Found(m.group().lower(), Why.SEXUAL) for m in self._list_phrases.finditer(readable)]
        doc = parse(readable)
        for sent in doc.sents:
            tokens = [t for t in sent if not t.is_space]
            for k, tok in enumerate(tokens):
                if not any(c.isalpha() for c in tok.text) or _is_name(tokens, k) or _innocent_use(tokens, k):
                    continue
                why = self.word(tok.text, tok.lemma_, name=k > 0 and tok.pos_ == "PROPN")
                if why is not None:
                    found.append(Found(tok.text.lower(), why))
            found += _phrases(tokens)
        return Screened(text=text, found=tuple(dict.fromkeys(found)))

    def shown(self, text: str) -> str:
        """``text`` as a page may show it to anyone (``Screened.shown``)."""
        return self.check(text).shown


# ---------------------------------------------------------------- reading a sentence
def _low(tok) -> str:
    return tok.text.lower()


def _lemmas(tok) -> set[str]:
    """A word's lemma and forms, comparatives read as their adjective ("dumber", "uglier", "fattest")."""
    out = forms(tok.text) | forms(tok.lemma_)
    low = tok.text.lower()
    for ending in ("er", "est"):
        if len(low) > len(ending) + 2 and low.endswith(ending):
            base = low[:-len(ending)]
            out |= {base, base + "e"} | ({base[:-1] + "y"} if base.endswith("i") else set()) | (
                {base[:-1]} if base[-1] == base[-2] else set())
    return out


def _is_name(tokens, k: int) -> bool:
    """A listed word used as a capitalised name ("Dick Van Dyke", "Moby Dick", "my grandpa Dick"), not after an
    article or "you" (where "a Dick" is the insult)."""
    tok = tokens[k]
    if _low(tok) not in NAMED or not tok.text[:1].isupper() or tok.text.isupper():
        return False
    before = _low(tokens[k - 1]) if k else ""
    if before in {"a", "an", "the", "you", "such", "what", "big", "little", "ur", "your", "total"}:
        return False
    after = tokens[k + 1] if k + 1 < len(tokens) else None
    beside = [t for t in (tokens[k - 1] if k else None, after) if t is not None]
    return k > 0 and tok.pos_ == "PROPN" or any(t.text[:1].isupper() and t.pos_ == "PROPN" for t in beside)


#: a listed word in a sense that is a bird, a plant or a farm animal: (word, words beside it that say so)
_INNOCENT_SENSES = {"tit": {"blue", "great", "coal", "marsh", "willow", "crested", "bearded", "tailed", "long-tailed",
                            "penduline", "bird"},
                    "tits": {"blue", "great", "coal", "marsh", "willow", "crested", "bearded", "tailed", "birds"},
                    "pussy": {"willow", "willows"},
                    "cock": {"crow", "crowed", "crows", "crowing", "rooster", "hen", "hens", "chicken", "chickens",
                             "farmyard", "robin", "pheasant"},
                    "ass": {"donkey", "donkeys", "mule", "mules", "burro", "jenny", "bible", "balaam"},
                    "asses": {"donkey", "donkeys", "mule", "mules", "burro"}}


def _innocent_use(tokens, k: int) -> bool:
    """A listed word used as a bird, a plant or a farm animal ("blue tit", "pussy willow", "the cock crowed")."""
    context = _INNOCENT_SENSES.get(_low(tokens[k]))
    if not context:
        return False
    near = {_low(t) for t in tokens[max(0, k - 2):k + 2]}
    return bool(near & context) or (_low(tokens[k]) in {"cock", "ass", "asses"}
                                     and bool({_low(t) for t in tokens} & context))


def _clause(tokens, k: int) -> tuple[int, int]:
    """The clause around token ``k``, roughly: from after the last , ; : or "but" before it to the next."""
    stops = {",", ";", ":", "but", "because", "—", "-", "–", "though", "although", "while"}
    start = k
    while start > 0 and _low(tokens[start - 1]) not in stops:
        start -= 1
    end = k
    while end + 1 < len(tokens) and _low(tokens[end + 1]) not in stops:
        end += 1
    return start, end + 1


def _negated(tokens, start: int, end: int) -> bool:
    """Whether the words ``start``..``end`` hold a negation or a condition; not the "n't" of a suggestion ("why don't
    you ...") nor of a verb of hating ("can't stand")."""
    for j in range(start, end):
        tok = tokens[j]
        if _low(tok) in NEGATING or tok.dep_ == "neg":
            before = [_low(t) for t in tokens[max(0, j - 2):j]]
            after = _low(tokens[j + 1]) if j + 1 < len(tokens) else ""
            if "why" in before or (after == "stand" and _low(tok) in {"n't", "not", "cannot"}):
                continue
            return True
    return False


def _hates(tokens, j: int) -> bool:
    """A verb of hating at ``j``: "hate", "despise", ..., or "can't stand"."""
    return bool(_lemmas(tokens[j]) & HATE_VERBS) or (
        _low(tokens[j]) == "stand" and j > 0 and _low(tokens[j - 1]) in {"n't", "not", "cannot"})


def _aims_at_you(tokens, k: int, reach: int = 3) -> int | None:
    """The index of "you" / "yourself" / "your <family, body, home>" within ``reach`` words after ``k``, or None."""
    for j in range(k + 1, min(len(tokens), k + 1 + reach)):
        low = _low(tokens[j])
        if low in YOU:
            return j
        if low in {"your", "ur", "yo"} and j + 1 < len(tokens) and _lemmas(tokens[j + 1]) & YOURS:
            return j + 1
        if low in {"your", "ur"} and j + 2 < len(tokens) and _lemmas(tokens[j + 2]) & YOURS:
            return j + 2
        if tokens[j].pos_ not in ("ADV", "PART") or low == "to":  # "kill you", "hurt you badly"; not "break it to you"
            return None
    return None


def _group_at(tokens, k: int) -> int | None:
    """Where a group of people is named at ``k`` ("Jews", "the gays", "black people", "trans folk"): the index of its
    last word, or None. An identity adjective alone is not a group ("my Jewish friend", "Black history month")."""
    tok = tokens[k]
    low = _low(tok)
    if low in IDENTITY and k + 1 < len(tokens) and _low(tokens[k + 1]) in PEOPLE:
        return k + 1
    lemmas = _lemmas(tok)
    if not lemmas & GROUPS:
        return None
    if low in {"black", "white", "gay", "woman", "female", "girl", "polish", "indian", "chinese", "irish", "japanese",
               "disabled", "russian", "israeli", "korean"}:
        # as adjectives these name a thing's colour or kind; only a plural noun of them names the people
        return None
    if tok.pos_ == "ADJ" and not (low.endswith("s") or low in {"women", "girls", "blacks", "whites", "gays"}):
        return None
    nxt = _low(tokens[k + 1]) if k + 1 < len(tokens) else ""
    if nxt in {"friend", "friends", "neighbour", "neighbor", "history", "month", "people", "culture", "food",
               "language", "holiday", "holidays", "festival", "students", "student", "community", "rights"}:
        return None
    return k


def _phrases(tokens) -> list[Found]:
    """The threats, hate and insults of one sentence (its words read by their lemmas; see the module docstring)."""
    found: list[Found] = []
    text = " ".join(_low(t) for t in tokens)
    text = re.sub(r" (n't|'re|'ll|'s|'m|'d|'ve)\b", r"\1", text)
    for why, pattern, own in _PHRASES:
        for match in pattern.finditer(text):
            before = text[:match.start()].split()
            if own or not (set(before) & NEGATING or any(w.endswith("n't") for w in before)):
                found.append(Found(match.group(), why))
    for k, tok in enumerate(tokens):
        lemmas = _lemmas(tok)
        start, end = _clause(tokens, k)
        # a threat: harming "you" (or yours), not negated nor in a condition
        if lemmas & VIOLENT and tok.pos_ in ("VERB", "AUX", "NOUN", "PROPN", "ADJ"):
            target = _aims_at_you(tokens, k)
            if target is not None and not _negated(tokens, start, k + 1) and not _ditransitive(tokens, k, target):
                reflexive = _low(tokens[target]) in {"yourself", "urself", "yourselves"}
                if not reflexive or _telling(tokens, start, k):
                    found.append(Found(_span(tokens, k, target), Why.THREAT))
        # a threat: "you" to die, told or wished ("you should die", "I hope you die", "die in a fire", "go die")
        dies_of = k + 1 < len(tokens) and _low(tokens[k + 1]) in {"of", "from", "laughing", "for", "to", "inside"}
        if "die" in lemmas and tok.pos_ in ("VERB", "NOUN", "PROPN", "INTJ", "ADJ", "X") and not dies_of and \
                not _negated(tokens, start, k):
            subject = [t for t in tokens[start:k] if t.dep_ in ("nsubj", "nsubjpass") or _low(t) in YOU]
            if (any(_low(t) in YOU for t in subject) and any(_low(t) in WISHING or t.lemma_ in WISHING
                                                             for t in tokens[:k])) \
                    or (not subject and all(_low(t) in WISHING | {"and", "then", "now", "'ll", "'", "\""}
                                            for t in tokens[start:k])):
                found.append(Found(_span(tokens, start, k), Why.THREAT))
        # hate against a group
        group_end = _group_at(tokens, k)
        if group_end is not None:
            hate = _hate_about(tokens, k, group_end)
            if hate is not None:
                found.append(Found(hate, Why.HATE))
        if lemmas & DEGRADING and tok.pos_ in ("NOUN", "PROPN", "ADJ", "X"):
            words_before = [t for t in tokens[:k] if any(c.isalpha() for c in t.text)][-3:]  # past "****"
            near = [t for t in words_before if _low(t) in IDENTITY]
            if near and not _negated(tokens, start, k):
                found.append(Found(_span(tokens, near[-1].i - tokens[0].i, k), Why.HATE))
        # an insult aimed at the reader
        insult = _insult_at(tokens, k)
        if insult is not None:
            found.append(Found(insult, Why.INSULT))
    return found


def _span(tokens, a: int, b: int) -> str:
    a, b = min(a, b), max(a, b)
    return " ".join(_low(t) for t in tokens[a:b + 1])


def _ditransitive(tokens, k: int, target: int) -> bool:
    """"I'll shoot you a text": the verb gives the reader something; it does not harm them."""
    rest = [_low(t) for t in tokens[target + 1:target + 4]]
    return bool(rest) and rest[0] in {"a", "an", "the", "some", "my"} and any(
        w in {"text", "message", "email", "e-mail", "line", "note", "call", "look", "smile", "glance", "dm", "pic",
              "photo", "link", "question", "break"} for w in rest)


def _telling(tokens, start: int, k: int) -> bool:
    """Whether a verb on "yourself" is told or wished on the reader (imperative, "you should ...", "go ..."), rather
    than said of them ("if you feel like hurting yourself")."""
    before = tokens[start:k]
    if any(_low(t) in {"if", "like", "about", "of", "when", "whenever", "stop", "never", "feel", "felt"}
           for t in before):
        return False
    return not before or any(_low(t) in WISHING or t.lemma_ in WISHING for t in before) or all(
        _low(t) in {"just", "go", "and", "please", "pls", "now", "then", "you", "u"} for t in before)


def _hate_about(tokens, k: int, group_end: int) -> str | None:
    """Hate against the group named at ``k``..``group_end``: called a degrading thing ("Jews are vermin", "like
    cockroaches"), hated ("I hate gay people"), or to be harmed or sent away ("gas the Jews", "Muslims should be
    deported", "kill all the gays"); None when not, or negated."""
    start, end = _clause(tokens, k)
    if _negated(tokens, start, end):
        return None
    after = tokens[group_end + 1:end]
    words_after = [_lemmas(t) for t in after]
    # called a degrading thing, or wished harm: "X are (like) vermin", "X should be deported / die / burn"; an active
    # verb after "should" is the group's own doing ("girls should break the record"), not harm wished on it
    if after and (_low(after[0]) in COPULA or after[0].lemma_ == "be" or _low(after[0]) in {"should", "must", "need",
                                                                                             "deserve", "ought"}):
        for j, lemmas in enumerate(words_after[:8]):
            suffered = j > 0 and _low(after[j - 1]) in {"be", "get", "got", "been", "being"}
            if lemmas & (DEGRADING | {"die", "rot", "burn", "perish", "suffer", "hang"}) or \
                    (suffered and lemmas & (VIOLENT | EXPEL)):
                return _span(tokens, k, group_end + min(8, len(after)))
    rest = [_low(t) for t in tokens[group_end + 1:]]
    for j, word in enumerate(rest[:-1]):
        if word == "like" and (j == 0 or rest[j - 1] in {",", "just", "are", "'re", "be", "all", "exactly"}) and \
                any(_lemmas(t) & DEGRADING for t in tokens[group_end + 2 + j:group_end + 5 + j]):
            return _span(tokens, k, min(len(tokens) - 1, group_end + 4 + j))
    # hated, or to be harmed or sent away: the verb before the group
    before = tokens[start:k]
    for j, tok in enumerate(before):
        lemmas = _lemmas(tok)
        if _hates(tokens, start + j):
            return _span(tokens, start + j, group_end)
        if lemmas & (VIOLENT | EXPEL) and (j == 0 or any(_low(t) in WISHING for t in before[:j])):
            return _span(tokens, start + j, group_end)
    return None


def _insult_at(tokens, k: int) -> str | None:
    """An insult aimed at the reader starting at ``k``: "you('re) ... <insult>" (to the clause's end), "your mum is
    ...", "you moron", ", loser." at a sentence's end, "what an idiot you are", "(everyone) hates you"."""
    tok = tokens[k]
    low = _low(tok)
    start, end = _clause(tokens, k)
    yours = low in {"your", "ur", "yo"} and k + 1 < len(tokens) and bool(_lemmas(tokens[k + 1]) & FAMILY)
    if low in YOU or low in {"youre", "you're"} or low == "ur" or yours:
        j = k + 2 if yours else k + 1
        copula = j < len(tokens) and (_low(tokens[j]) in COPULA or tokens[j].lemma_ in COPULA)
        if copula or low in {"youre", "you're", "ur"} and not yours:
            j += 1 if copula else 0
            if j < len(tokens) and tokens[j].pos_ == "VERB" and tokens[j].tag_ in ("VBG", "VBN"):
                return None  # "you're talking about ...": an auxiliary, not what the reader is called
            for m in range(j, min(end, j + 9)):
                modifier = tokens[m].pos_ == "NOUN" and m + 1 < len(tokens) and tokens[m + 1].pos_ in ("NOUN", "PROPN")
                if _lemmas(tokens[m]) & INSULTS and not modifier and not _negated(tokens, j - 1, m):
                    return _span(tokens, k, m)  # not "you're a dog person", "a pig farmer"
        elif low in YOU:  # vocative: "you moron", "you stupid little idiot" (then the sentence or clause ends)
            for m in range(k + 1, min(len(tokens), k + 4)):
                ends = m + 1 == len(tokens) or tokens[m + 1].is_punct
                if _lemmas(tokens[m]) & INSULTS and ends:
                    return _span(tokens, k, m)
                if tokens[m].pos_ not in ("ADJ", "ADV"):
                    break
    # "what an idiot you are", "are you stupid?"
    if _lemmas(tok) & INSULTS and tok.pos_ in ("NOUN", "ADJ", "PROPN"):
        around = [_low(t) for t in tokens[start:end]]
        if ("you" in around or "u" in around) and any(w in {"are", "'re", "r"} for w in around) and \
                not _negated(tokens, start, end) and (around[:1] == ["what"] or around[:2] in (["are", "you"],
                                                                                            ["r", "u"])):
            return " ".join(around)
        # a name called at the end of a sentence: "Go away, freak." "Shut your mouth, loser."
        if k == len(tokens) - 1 or all(t.is_punct for t in tokens[k + 1:]):
            j = k - 1
            while j >= 0 and tokens[j].pos_ == "ADJ":
                j -= 1
            if j >= 0 and _low(tokens[j]) in {",", "you", "u", "ya"} and j > 0 and \
                    _lemmas(tok) & (INSULTS - {"waste", "mistake", "nobody", "dog"}):
                return _span(tokens, j, k)
    # "everyone hates you", "I despise you"
    if _hates(tokens, k) and _aims_at_you(tokens, k, reach=2) is not None and \
            not _negated(tokens, start, k):
        return _span(tokens, start, k + 1)
    return None


def for_students(report_json: dict) -> dict:
    """A report's JSON form (``BotTurnReport.to_json``) as a student may be given it: each withheld candidate's text
    replaced by the line that says it was withheld and why, and what was caught left out (the chat's transcript
    download, the served guard's ``guard`` field)."""
    candidates = []
    for cand in report_json.get("candidates") or []:
        withheld = cand.get("withheld") if isinstance(cand, dict) else None
        if withheld:
            cand = {**cand, "text": withheld.get("masked") or withheld_line(()), "withheld": {**withheld, "words": []}}
        candidates.append(cand)
    return {**report_json, "candidates": candidates} if "candidates" in report_json else dict(report_json)


def word_in_word(word: str) -> bool:
    """A word no list has that holds a strong stem ("petfuck", "catcunt"): not an ordinary word or name holding it
    (``ORDINARY``: "cockpit", "Scunthorpe", "document")."""
    for part in _LETTERS.findall(word.lower()):
        if part in ORDINARY or part in STEMS:
            continue
        if any(stem in part for stem in STEMS if stem != "cum" or part.startswith("cum") or part.endswith("cum")):
            return True
    return False


def filter_on() -> bool:
    """Whether the server was started with the filter on (``GUARD_CLASS_FILTER`` unset, or anything but 0 / off)."""
    return os.environ.get(ENV, "").strip().lower() not in OFF_WORDS


@functools.cache
def _loaded() -> ClassroomFilter:
    return ClassroomFilter()


def server_filter() -> ClassroomFilter | None:
    """The process's filter (its word list loaded once), or None when the server was started with it off."""
    return _loaded() if filter_on() else None
