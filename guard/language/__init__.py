"""Reading English, below everything else the guard does. ``grammar`` is the bottom (one spaCy parse per text, the
shared words, the rules over a parse - subjects, the speaker, clauses, negations, auxiliaries -, answer particles,
affirmation, tense, numbers, WordNet kinds, the values a reply gives) and imports nothing of the guard; ``forms``
writes a word's forms (a plural, an article, a negated contraction) and imports nothing of the guard either; ``text``
splits sentences and clauses; ``perturb`` rewrites sentences (CheckList-style probes, training pairs); ``answers``
reads a short answer with its question and says whether a reply answers what it was asked (``answer_check``);
``reading`` reads a turn in its conversation; ``fact_sheet`` reads what the bot has said about itself as (relation,
value) facts. Every rule of English is stated once in this room and used from here by the judge, the studio and
training alike."""
