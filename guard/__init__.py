"""The consistency guard: detection, no UI. Four rooms, each importing only the rooms below it:

    eval/      data sets, metrics, evaluation, probes, the live-stream dev sets, the papers' examples
    judge/     one turn judged: the guard object (``load_guard``, ``Guard.judge``), planning, scoring, verdicts,
               the policies that choose, the report and its wording
    models/    the NLI scorer and its int8 runtime, loading by name, the cache of scored pairs
    language/  reading English: one spaCy parse (``grammar``, the bottom), sentences and clauses, answers read
               with their questions, a turn read in its conversation, the fact sheet, perturbations

Beside them, shared by all: the records of a dialogue (``records``), the words modes, categories and sources are
named with (``vocabulary``), a checkpoint's settings and a turn's (``config``), and input checks (``files``).
``cli`` is the command line (``python -m guard``); ``training/`` trains the detector and is never imported at run time.
"""
