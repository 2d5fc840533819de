"""Where two detector checkpoints disagree on the probe suite (our own data, never rgm).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.compare_detectors embedded runs/v2_export

Each checkpoint runs the product detector (structured, sentence pairing, categories, its own
calibrated threshold); every dialogue the two flag differently is printed with both scores and
the best-scoring pair, so a training change can be read example by example, not only as a rate.
"""

from __future__ import annotations

import argparse
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", help="'embedded' or a checkpoint folder")
    parser.add_argument("second", help="'embedded' or a checkpoint folder")
    parser.add_argument("--suite", default=str(REPO / "guard" / "data" / "probe_suite.jsonl"))
    parser.add_argument("--set-aside", type=int, nargs="*", default=[], metavar="FACT_ID",
                        help="also report accuracy without these facts' dialogues (e.g. fact kinds a training "
                             "recipe imitates, which are no longer a fair test of it)")
    args = parser.parse_args(argv)

    from guard.eval.datasets import read_dataset
    from guard.judge.pipeline import load_guard

    records = [d for d in read_dataset("decode", args.suite) if d.label is not None]
    verdicts = {}
    for name in (args.first, args.second):
        guard = load_guard(name, prefilter=False)  # no prefilter: every earlier sentence is paired
        settings = guard.settings(mode="flag", threshold=guard.config.threshold, checks=True, prefilter=False)
        verdicts[name] = [guard.verdict_on_dialogue(d, settings) for d in records]
    right = {name: sum(v.contradiction == bool(d.label) for v, d in zip(vs, records)) for name, vs in verdicts.items()}
    print(f"{len(records)} dialogues; right: " + ", ".join(f"{n} {k}" for n, k in right.items()))
    if args.set_aside:
        aside = set(args.set_aside)
        keep = [i for i, d in enumerate(records) if d.meta.get("fact_id") not in aside]
        caught = {name: sum(verdicts[name][i].contradiction == bool(records[i].label) for i in keep)
                  for name in verdicts}
        print(f"without facts {sorted(aside)}: {len(keep)} dialogues; right: "
              + ", ".join(f"{n} {k} ({k / len(keep):.1%})" for n, k in caught.items()))
    for d, a, b in zip(records, verdicts[args.first], verdicts[args.second]):
        if a.contradiction == b.contradiction:
            continue
        pair = max(a.pair_scores + b.pair_scores, key=lambda p: p.score, default=None)
        print(f"\ngold={'contradiction' if d.label else 'consistent'}  first={a.score:.2f} ({a.category})  "
              f"second={b.score:.2f} ({b.category})")
        print(f"  last turn: {d.turns[-1].text}")
        if pair is not None:
            print(f"  best pair: {pair.premise!r} -> {pair.hypothesis!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
