"""Reading English, below everything else the guard does. ``grammar`` is the bottom (one spaCy parse per text, the
shared words, answer particles, affirmation, tense, numbers, first person, WordNet kinds) and imports nothing of the
guard; ``text`` splits sentences and clauses; ``perturb`` rewrites sentences (CheckList-style probes, training
pairs); ``answers`` reads a short answer with its question; ``reading`` reads a turn in its conversation; ``fact_sheet``
reads what the bot has said about itself as (relation, value) facts."""
