"""Short answers read with their question: the frozen probe set, and how many real answers the rules read.

    # the probes (guard/data/probe_answers.jsonl, hand-written and frozen before any rule): contradicting short answers
    # caught, their consistent twins flagged, by kind, with the detector as the chat builds it
    .venv/bin/python -m benchmarks.bench_answers probes --model embedded
    # the wordy-persona facts (guard/data/probe_facts.jsonl, frozen before the fact sheet), by relation; --no-facts:
    # the detector alone, the fact sheet's check off
    .venv/bin/python -m benchmarks.bench_answers probes --probes guard/data/probe_facts.jsonl --model embedded
    # coverage: the share of bot turns answering a question that the rules read, on unlabelled ConvAI2 conversations
    # (outside the labelled sample) and the DECODE stream's calibration half, and a seeded sample to check by hand
    .venv/bin/python -m benchmarks.bench_answers coverage --sample 50 --seed 0
    # the answer check (guard.language.answers.answer_check) on every stored candidate of a goading run: how many it
    # calls answered / not / degenerate, by the kind each message expects, and a seeded sample to label by hand
    # (the sheet: --sheet; labels "yes" / "no" after '=>', read against the check's calls with --labels)
    .venv/bin/python -m benchmarks.bench_answers answered benchmarks/results/goading/after.json --sample 40 --seed 0
    # on every bot turn of a dev stream's calibration half: the answer check (answered / not / degenerate) and one
    # reply's own fact clashes (guard.language.fact_sheet.own_clashes), by the turn's label
    .venv/bin/python -m benchmarks.bench_answers streams --split calibration

Needs the shared data folder for ``coverage`` and ``streams``.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from pathlib import Path

from benchmarks.machine import machine_info, write_json

PROBES = Path(__file__).resolve().parents[1] / "guard" / "data" / "probe_answers.jsonl"


def probe_rows(model: str, every_check: bool = False, probes: Path = PROBES, no_facts: bool = False) -> dict:
    """Caught and twins flagged by kind (or relation) for ``model``'s chat detector (or with every check on; without
    the fact sheet's check with ``no_facts``)."""
    from guard.eval.datasets import read_decode
    from guard.judge.pipeline import load_guard
    from guard.vocabulary import CHECKS

    guard = load_guard(model)
    checks = set(CHECKS) if every_check else set(guard.settings().checks)
    if no_facts:
        checks.discard("facts")
    settings = guard.settings(mode="flag", checks=sorted(checks))
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"contradictions": 0, "caught": 0, "twins": 0,
                                                             "twins_flagged": 0})
    misses = []
    for dialogue in read_decode(probes):
        verdict = guard.verdict_on_dialogue(dialogue, settings)
        row = counts[dialogue.meta.get("kind") or dialogue.meta.get("relation")]
        if dialogue.label:
            row["contradictions"] += 1
            row["caught"] += int(verdict.contradiction)
        else:
            row["twins"] += 1
            row["twins_flagged"] += int(verdict.contradiction)
        if bool(verdict.contradiction) != bool(dialogue.label):
            misses.append({"record_id": dialogue.record_id, "reply": dialogue.last.text,
                           "reading": verdict.details.answer_reading, "score": round(verdict.score, 4),
                           "category": str(verdict.category)})
    total = {k: sum(r[k] for r in counts.values()) for k in ("contradictions", "caught", "twins", "twins_flagged")}
    return {"model": model, "probes": str(probes), "checks": sorted(str(c) for c in settings.checks),
            "threshold": settings.threshold,
            "caught": round(total["caught"] / total["contradictions"], 4),
            "twins_flagged": round(total["twins_flagged"] / total["twins"], 4),
            "by_kind": dict(counts), "total": total, "wrong": misses}


def cmd_probes(args) -> int:
    out = {"machine": machine_info(),
           "rows": [probe_rows(m, args.every_check, args.probes, args.no_facts) for m in args.model]}
    for row in out["rows"]:
        print(f"{row['model']} (τ {row['threshold']}, checks {row['checks']}): caught {row['caught']}, "
              f"twins flagged {row['twins_flagged']}")
        for kind, r in row["by_kind"].items():
            print(f"  {kind:12} caught {r['caught']}/{r['contradictions']}  twins flagged {r['twins_flagged']}/{r['twins']}")
    if args.json:
        write_json(args.json, out, indent=2)
    return 0


def cmd_coverage(args) -> int:
    from guard.eval import decode_stream, stream
    from guard.language.answers import read_answer

    labelled = stream.labelled_record_ids()
    sources = {"convai2 (unlabelled conversations)": [d for d in stream.read_conversations()
                                                       if d.record_id not in labelled],
               "decode (calibration half)": decode_stream.read_conversations(split="calibration")}
    out = {"machine": machine_info(), "sources": {}}
    for name, dialogues in sources.items():
        answers, read = 0, []
        for d in dialogues:
            for before, turn in zip(d.turns, d.turns[1:]):
                if before.agent_id == "user" and turn.agent_id == "bot" and "?" in before.text:
                    answers += 1
                    reading = read_answer(before.text, turn.text)
                    if reading is not None:
                        read.append({"record_id": d.record_id, "turn_id": turn.turn_id, "kind": str(reading.kind),
                                     "text": (reading.question, reading.answer, reading.statement)})
        random.Random(args.seed).shuffle(read)
        by_kind: dict[str, int] = defaultdict(int)
        for r in read:
            by_kind[r["kind"]] += 1
        sample = read[: args.sample]
        # the conversations' text stays in the shared data folder: the file keeps ids, the screen shows the text
        out["sources"][name] = {"answer_turns": answers, "read": len(read),
                                "coverage": round(len(read) / answers, 4) if answers else None, "by_kind": dict(by_kind),
                                "sample": [{k: v for k, v in r.items() if k != "text"} for r in sample]}
        print(f"{name}: {len(read)} of {answers} bot turns answering a question read "
              f"({len(read) / max(answers, 1):.1%}); by kind {dict(by_kind)}")
        for i, r in enumerate(sample):
            question, answer, statement = r["text"]
            print(f"  {i:2} | {question[-75:]} | {answer[:70]} => {statement}")
    if args.json:
        write_json(args.json, out, indent=2)
    return 0


def answered_calls(run: Path) -> list[dict]:
    """Every stored candidate of a goading run (``benchmarks.bench_goading``'s JSON) with the answer check's call on it
    against the user's message it answers."""
    import json

    from guard.language.answers import answer_check

    answer_check("What's your job?", "I'm a nurse, and I have two dogs.")  # spaCy and WordNet loaded before timing
    calls = []
    for r in json.loads(Path(run).read_text())["runs"]:
        for t in r["turns"]:
            for i, c in enumerate(t["candidates"]):
                check = answer_check(t["user"], c["text"])
                calls.append({"run": f"{r['name']} s{r['seed']} m{t['message']:02d} c{i}", "user": t["user"],
                              "reply": c["text"], "expected": None if check.expected is None else str(check.expected),
                              "answered": check.answered, "degenerate": check.degenerate, "why": str(check.why)})
    return calls


def _read_labels(path: Path) -> dict[str, bool]:
    """A labelled sheet: each "[id] USER: ..." line, then its "BOT: ... => yes|no" line (the labeller's reading: does
    the reply answer the message?)."""
    labels, key = {}, None
    for line in Path(path).read_text().splitlines():
        if line.startswith("["):
            key = line[1:line.index("]")]
        if key is not None and "=>" in line:
            label = line.rsplit("=>", 1)[1].strip().lower()
            if label in ("yes", "no"):
                labels[key] = label == "yes"
    return labels


def cmd_answered(args) -> int:
    import time

    started = time.perf_counter()
    calls = answered_calls(args.run)
    seconds = time.perf_counter() - started
    by_kind: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for c in calls:
        row = by_kind[c["expected"] or "nothing asked"]
        row["candidates"] += 1
        row["answered" if c["answered"] else "degenerate" if c["degenerate"] else "not answered"] += 1
    total = {k: sum(r[k] for r in by_kind.values()) for k in ("candidates", "answered", "not answered", "degenerate")}
    print(f"{total['candidates']} candidates of {len({c['run'].rsplit(' c', 1)[0] for c in calls})} messages "
          f"({seconds:.1f} s, models loaded before): answered {total['answered']}, not answered {total['not answered']}, degenerate "
          f"{total['degenerate']}")
    for kind, row in sorted(by_kind.items()):
        print(f"  {kind:14} {row['candidates']:3}: answered {row['answered']:3}  not {row['not answered']:3}  "
              f"degenerate {row['degenerate']}")
    sample = random.Random(args.seed).sample(calls, min(args.sample, len(calls)))
    if args.sheet:  # the labelling sheet shows no call: label blind, compare after
        lines = ["# Label each reply after '=>': yes (it answers what the message asked, as the kind of answer it",
                 "# expects: a count, an age, a place, a name, a job, a food, or yes / no / the fact for a yes/no",
                 "# question; a statement about itself for an open one) or no (it does not, or repeats words).", ""]
        lines += [f"[{c['run']}] USER: {c['user']}\n    BOT: {c['reply']}  =>" for c in sample]
        args.sheet.write_text("\n".join(lines) + "\n")
    agreement = {}
    for path in args.labels or ():
        labels = _read_labels(path)
        judged = [c for c in sample if c["run"] in labels]
        agree = [c for c in judged if labels[c["run"]] == c["answered"]]
        agreement[str(path)] = {"labelled": len(judged), "agree": len(agree),
                                "disagree": [c["run"] for c in judged if c not in agree]}
        print(f"{path}: the check agrees with {len(agree)} of {len(judged)} labels; disagrees on "
              f"{agreement[str(path)]['disagree']}")
    if len(args.labels or ()) == 2:
        a, b = (_read_labels(p) for p in args.labels)
        both = [c["run"] for c in sample if c["run"] in a and c["run"] in b]
        print(f"the two passes agree on {sum(a[k] == b[k] for k in both)} of {len(both)}")
    if args.json:
        write_json(args.json, {"machine": machine_info(), "run": str(args.run), "seconds": round(seconds, 1),
                               "total": total, "by_kind": {k: dict(v) for k, v in by_kind.items()},
                               "sample": [c["run"] for c in sample], "agreement": agreement,
                               "calls": [{k: v for k, v in c.items() if k not in ("user", "reply")} for c in calls]},
                   indent=2)
    return 0


def cmd_streams(args) -> int:
    """The answer check and one reply's own fact clashes on every bot turn of the dev streams' halves, by label."""
    import time

    from guard.eval import dev_streams
    from guard.language.answers import answer_check
    from guard.language.fact_sheet import own_clashes, read_facts
    from guard.vocabulary import PremiseSource

    out = {"machine": machine_info(), "split": args.split, "streams": {}}
    for name in dev_streams.STREAMS:
        started = time.perf_counter()
        rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        clashed = []
        for item in dev_streams.labelled_turns(name, args.split):
            turns = item.dialogue.turns
            turn, before = turns[-1], turns[-2] if len(turns) > 1 else None
            question = before.text if before is not None and before.agent_id != turn.agent_id else None
            label = "unlabelled" if item.label is None else (
                "contradiction" if item.label.contradiction else "consistent")
            check = answer_check(question, turn.text)
            own = own_clashes(read_facts(turn.text, PremiseSource.HISTORY, turn.turn_id, None, question))
            row = rows[label]
            row["bot turns"] += 1
            row["asked"] += check.expected is not None
            row["answered"] += check.expected is not None and check.answered
            row["degenerate"] += check.degenerate
            row["own fact clash"] += bool(own)
            if own:
                clashed.append({"record_id": item.dialogue.record_id, "turn_id": turn.turn_id, "label": label,
                                "why": [c.why for c in own]})
        seconds = time.perf_counter() - started
        out["streams"][name] = {"seconds": round(seconds, 1), "by_label": {k: dict(v) for k, v in rows.items()},
                                "own_clashes": clashed}
        print(f"{name} ({args.split}, {seconds:.0f} s):")
        for label, row in sorted(rows.items()):
            print(f"  {label:13} {dict(row)}")
        for c in clashed:  # the turns' text stays in the shared data folder; the screen shows what clashed
            print(f"    own clash: {c['record_id']} turn {c['turn_id']} ({c['label']}): {c['why']}")
    if args.json:
        write_json(args.json, out, indent=2)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_answers", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    probes = sub.add_parser("probes", help="the frozen short-answer probes")
    probes.add_argument("--model", nargs="+", default=["embedded"])
    probes.add_argument("--every-check", action="store_true", help="every check on (the playground's detector)")
    probes.add_argument("--probes", type=Path, default=PROBES, help="the probe file (DECODE-shaped JSON lines)")
    probes.add_argument("--no-facts", action="store_true", help="the fact sheet's check off: the detector alone")
    probes.add_argument("--json", type=Path, default=None)
    probes.set_defaults(func=cmd_probes)
    coverage = sub.add_parser("coverage", help="how many real answers the rules read, with a sample to check")
    coverage.add_argument("--sample", type=int, default=50)
    coverage.add_argument("--seed", type=int, default=0)
    coverage.add_argument("--json", type=Path, default=None)
    coverage.set_defaults(func=cmd_coverage)
    answered = sub.add_parser("answered", help="the answer check on every stored candidate of a goading run")
    answered.add_argument("run", type=Path, help="a goading run's JSON (benchmarks.bench_goading run --json)")
    answered.add_argument("--sample", type=int, default=40)
    answered.add_argument("--seed", type=int, default=0)
    answered.add_argument("--sheet", type=Path, default=None, help="write the sample as a blind labelling sheet")
    answered.add_argument("--labels", type=Path, nargs="*", help="labelled sheets to compare with the check's calls")
    answered.add_argument("--json", type=Path, default=None)
    answered.set_defaults(func=cmd_answered)
    streams = sub.add_parser("streams", help="the answer check and own fact clashes on the dev streams' bot turns")
    streams.add_argument("--split", choices=("calibration", "evaluation"), default="calibration")
    streams.add_argument("--json", type=Path, default=None)
    streams.set_defaults(func=cmd_streams)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
