"""Issue 41's goading script through the served guard: what a class provoking the bot gets sent back.

Starts ``python -m serve`` (``harness.server.guard_servers``) with its defaults: the embedded bot, 4 candidates,
the embedded detector at its calibrated decision (the checks its calibration kept), re-rank, reminders on. The
server answers through ``conversation.guarding.guarded_reply``, the chat page's own code path, so the replies are
the ones the chat would send for the same conversation and seed. Each persona of the frozen script
(``benchmarks/data/goading_facts.json``) is one conversation, its lines the system message, every message sent in
order with the whole conversation so far; a request's seed is ``seed * 100 + message index``.

Writes every reply sent, its candidates and the guard's report (JSON), and a plain-text sheet for people to label
(``--sheet``): one line per sent reply, with the persona and the conversation before it. Labels are written by people
into a copy of that sheet (``contradiction``, ``dodge`` or ``ok`` after each reply) and counted with ``count``.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_goading run --json benchmarks/results/goading/after.json \\
        --sheet benchmarks/results/goading/after-sheet.txt
    .venv/bin/python -m benchmarks.bench_goading count benchmarks/results/goading/after-labels-pass1.txt

``replay`` asks another code the same questions on a base run's own conversations: every message of every
conversation is sent with the base's messages and **the replies the base sent** before it, and the base's seed for it,
so each reply is what this code sends at that turn given the base's conversation so far (the served guard keeps no
state between requests). A whole run's conversations go elsewhere as soon as one reply changes; a replay compares
two codes turn by turn. ``pairs`` writes the turns where a replay's reply differs from the base's as a blind sheet
(both replies, shuffled, under neutral keys, with a key file), and ``paired-count`` counts its labels per code
(docs/experiments/2026-11-29-turn-replay.md).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_goading replay --base base.json --json head.json
    .venv/bin/python -m benchmarks.bench_goading pairs base.json head.json --sheet pairs.txt --key pairs-key.json
    .venv/bin/python -m benchmarks.bench_goading paired-count pairs-key.json pairs-labels-A.txt pairs-labels-B.txt
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import requests

from benchmarks.machine import loadavg, machine_info, write_json

SCRIPT = Path(__file__).resolve().parent / "data" / "goading_facts.json"
#: the labels a person writes after each reply of the sheet
LABELS = ("contradiction", "dodge", "ok")
_LABELLED = re.compile(r"^\s*\[(?P<key>[a-z]+ s\d+ m\d+)\].*?=>\s*(?P<label>[a-z]+)\s*$")


def converse(url: str, key: str, persona: list[str], messages: list[str], seed: int,
             replies: list[str] | None = None) -> list[dict]:
    """One conversation: each message sent with the whole conversation so far; the reply the server sent kept.
    ``replies``: a base run's sent replies (``replay``): each message goes with those before it instead of the ones
    this server sent, so each reply is what it sends given the base's conversation up to that turn."""
    if replies is not None and len(replies) != len(messages):
        raise SystemExit(f"the base conversation has {len(replies)} replies for {len(messages)} messages")
    sent: list[dict] = [{"role": "system", "content": "\n".join(persona)}]
    rows = []
    for k, message in enumerate(messages):
        sent.append({"role": "user", "content": message})
        began = time.perf_counter()
        answer = requests.post(f"{url}/v1/chat/completions", json={
            "model": "consistency-guard", "messages": sent, "seed": seed * 100 + k},
            headers={"Authorization": f"Bearer {key}"}, timeout=900)
        seconds = time.perf_counter() - began
        body = answer.json()
        if answer.status_code != 200:
            raise SystemExit(f"the server refused message {k} of seed {seed}: {body}")
        reply, guard = body["choices"][0]["message"]["content"], body["guard"]
        report = guard["report"]
        chosen = next((c for c in report["candidates"] if c["chosen"]), None)
        rows.append({"message": k, "user": message, "reply": reply, "status": guard["status"],
                     "summary": guard["summary"], "seconds": round(seconds, 3),
                     "written_by": chosen.get("origin", "bot") if chosen is not None else "safe reply",
                     "candidates": [{"text": c["text"], "chosen": c["chosen"], "reason": c["reason"],
                                     "score": (c.get("verdict") or {}).get("score"),
                                     "fact_clashes": len(((c.get("verdict") or {}).get("details") or {})
                                                         .get("fact_clashes") or [])}
                                    for c in report["candidates"]],
                     "report": report})
        sent.append({"role": "assistant", "content": reply if replies is None else replies[k]})
        print(f"  [{k:2d}] {seconds:5.1f} s {message!r} -> {reply!r}", flush=True)
    return rows


def labelled_line(key: str, reply: str) -> str:
    """One reply to label, on one line whatever its line breaks (``_LABELLED`` reads its key and label back)."""
    return f"[{key}] BOT: {' '.join(reply.split())}  =>"


def sheet_text(runs: list[dict]) -> str:
    """The labelling sheet: per conversation its persona, then each sent reply on a keyed line ending in ``=>``."""
    lines = ["# Label each sent reply after '=>': contradiction (contradicts the persona or an earlier bot turn, as",
             "# the reply means it in the conversation), dodge (answers nothing the user asked: 'I don't know', a",
             "# question back, a change of subject), or ok. Read the reply as a person would; candidates are not shown.",
             ""]
    for run in runs:
        lines.append(f"=== {run['name']} seed {run['seed']} · persona: {' / '.join(run['persona'])}")
        for row in run["turns"]:
            lines.append(f"    USER: {row['user']}")
            lines.append(labelled_line(f"{run['name']} s{run['seed']} m{row['message']:02d}", row["reply"]))
        lines.append("")
    return "\n".join(lines) + "\n"


def read_labels(path: Path) -> dict[str, str]:
    """A labelled sheet's labels by key; an unknown label is an error that names its line."""
    labels = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _LABELLED.match(line)
        if match is None:
            continue
        if match["label"] not in LABELS:
            raise SystemExit(f"{path}:{number}: label {match['label']!r} is none of {', '.join(LABELS)}")
        labels[match["key"]] = match["label"]
    return labels


def cmd_run(args) -> int:
    script = json.loads(args.script.read_text())
    plays = [(conv["name"], seed, conv["persona"], conv["messages"], None)
             for seed in args.seeds or script["seeds"] for conv in script["conversations"]]
    return _play(args, plays)


def cmd_replay(args) -> int:
    base = json.loads(args.base.read_text(encoding="utf-8"))
    plays = [(run["name"], run["seed"], run["persona"], [t["user"] for t in run["turns"]],
              [t["reply"] for t in run["turns"]]) for run in base["runs"]][:args.limit]
    return _play(args, plays, base=base["runs"])


def _play(args, plays: list[tuple], base: list[dict] | None = None) -> int:
    """Each conversation through a served guard (``run``'s defaults and ``args.server_args``); its records (JSON) and
    sheet written. ``plays``: (name, seed, persona, messages, the base's replies or None)."""
    from harness.server import guard_servers

    key = "goading-key"
    runs = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        with guard_servers(["--api-key", key, "--log-level", "warning", *args.server_args], log_dir=folder,
                           timeout=900) as (url,):
            for name, seed, persona, messages, replies in plays:
                print(f"{name} seed {seed}:", flush=True)
                runs.append({"name": name, "seed": seed, "persona": persona,
                             "turns": converse(url, key, persona, messages, seed, replies)})
    replies = [t for run in runs for t in run["turns"]]
    summary = {"replies": len(replies), "statuses": dict(Counter(t["status"] for t in replies)),
               "sent_with_fact_clash": sum(any(c["chosen"] and c["fact_clashes"] for c in t["candidates"])
                                           for t in replies),
               "candidates_with_fact_clash": sum(c["fact_clashes"] > 0 for t in replies for c in t["candidates"]),
               # who wrote each sent reply: the bot, the bot after a reminder, the guard (from the evidence or the
               # fact sheet), or the safe reply
               "written_by": dict(Counter(t["written_by"] for t in replies)),
               "reminders": sum((t["report"].get("reminder") or None) is not None for t in replies),
               "wall_s": round(time.perf_counter() - started, 1)}
    if base is not None:  # a replay: how many of its replies are the base's own at that turn
        summary["same_as_base"] = sum(t["reply"] == b["reply"] for run, old in zip(runs, base)
                                      for t, b in zip(run["turns"], old["turns"]))
    print(json.dumps(summary, indent=2))
    write_json(args.json, {"benchmark": "bench_goading", "command": "python -m benchmarks.bench_goading "
                           + " ".join(sys.argv[1:]), "server_args": args.server_args, "machine": machine_info(),
                           "loadavg_end": loadavg(), "summary": summary, "runs": runs}, ensure_ascii=False)
    if args.sheet:
        args.sheet.parent.mkdir(parents=True, exist_ok=True)
        args.sheet.write_text(sheet_text(runs), encoding="utf-8")
    return 0


def differing_turns(base: dict, replay: dict) -> list[tuple[dict, int]]:
    """(the base's conversation, message index) for every turn where the replay sent another reply than the base."""
    turns = []
    for old, new in zip(base["runs"], replay["runs"]):
        if (old["name"], old["seed"]) != (new["name"], new["seed"]):
            raise SystemExit(f"the replay's conversation {new['name']} seed {new['seed']} is not the base's "
                             f"({old['name']} seed {old['seed']}): replay this base")
        turns += [(old, k) for k, (a, b) in enumerate(zip(old["turns"], new["turns"])) if a["reply"] != b["reply"]]
    return turns


def pair_sheet(base: dict, replay: dict, seed: int) -> tuple[str, dict]:
    """The blind sheet of a replay's differing turns and its key: each turn as the persona, the base's conversation
    before it and the user's message, then both replies in a shuffled order (``[pair sN mK]``, K 1 or 2), to be
    labelled each on its own; the turns shuffled too. The key says which code wrote each reply."""
    replies = {(run["name"], run["seed"], t["message"]): t["reply"] for run in replay["runs"] for t in run["turns"]}
    items = differing_turns(base, replay)
    shuffler = random.Random(seed)
    shuffler.shuffle(items)
    lines = ["# Each item is one turn of a conversation with two alternative replies the bot might have sent to the",
             "# last USER message. Label each reply after its '=>' on its own, against the persona and the",
             "# conversation above it only: contradiction (contradicts the persona or an earlier bot turn, as the",
             "# reply means it in the conversation), dodge (answers nothing the user asked: 'I don't know', a",
             "# question back, a change of subject), or ok. Read the reply as a person would.", ""]
    key = {}
    for n, (run, k) in enumerate(items, 1):
        pair = [("base", run["turns"][k]["reply"]), ("replay", replies[(run["name"], run["seed"], k)])]
        shuffler.shuffle(pair)
        lines.append(f"=== item {n} · persona: {' / '.join(run['persona'])}")
        for row in run["turns"][:k]:
            lines += [f"    USER: {row['user']}", f"    BOT: {' '.join(row['reply'].split())}"]
        lines.append(f"    USER: {run['turns'][k]['user']}")
        for m, (code, reply) in enumerate(pair, 1):
            lines.append(labelled_line(f"pair s{n} m{m}", reply))
            key[f"pair s{n} m{m}"] = {"code": code, "conversation": f"{run['name']} s{run['seed']}", "message": k}
        lines.append("")
    return "\n".join(lines) + "\n", key


def cmd_pairs(args) -> int:
    base, replay = (json.loads(p.read_text(encoding="utf-8")) for p in (args.base, args.replay))
    text, key = pair_sheet(base, replay, args.seed)
    args.sheet.write_text(text, encoding="utf-8")
    args.key.write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{len(key) // 2} differing turns -> {args.sheet}, key {args.key}")
    return 0


def cmd_paired_count(args) -> int:
    """Each labeller's counts per code over a pair sheet's turns, and how the labels moved turn by turn."""
    key = json.loads(args.key.read_text(encoding="utf-8"))
    for path in args.sheets:
        labels = read_labels(path)
        if set(labels) != set(key):
            raise SystemExit(f"{path}: {len(set(key) - set(labels))} replies unlabelled, "
                             f"{len(set(labels) - set(key))} not in the key")
        counts = {code: Counter(labels[k] for k, v in key.items() if v["code"] == code) for code in ("base", "replay")}
        turns: dict[str, dict[str, str]] = {}
        for k, v in key.items():  # "pair s7 m1" and "pair s7 m2": one turn's two replies
            turns.setdefault(k.rsplit(" ", 1)[0], {})[v["code"]] = labels[k]
        moved = Counter(f"{turn['base']} -> {turn['replay']}" for turn in turns.values())
        print(f"{path}: " + " · ".join(f"{code} " + ", ".join(f"{lab} {c[lab]}" for lab in LABELS)
                                         for code, c in counts.items()))
        print("  base -> replay: " + ", ".join(f"{m} {n}" for m, n in sorted(moved.items())))
    return 0


def cmd_count(args) -> int:
    """Each labelled sheet's shares, and where two passes disagree."""
    passes = [read_labels(p) for p in args.sheets]
    for path, labels in zip(args.sheets, passes):
        counts = Counter(labels.values())
        n = len(labels)
        print(f"{path}: {n} replies · " + " · ".join(f"{k} {counts[k]} ({counts[k] / n:.0%})" for k in LABELS))
    if len(passes) == 2:
        first, second = passes
        common = sorted(set(first) & set(second))
        differ = [k for k in common if first[k] != second[k]]
        print(f"agreement: {len(common) - len(differ)}/{len(common)}" + "".join(
            f"\n  {k}: {first[k]} / {second[k]}" for k in differ))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="play the script through a served guard")
    run.add_argument("--script", type=Path, default=SCRIPT)
    run.add_argument("--seeds", type=int, nargs="*", help="default: the script's own")
    run.add_argument("--json", type=Path, required=True)
    run.add_argument("--sheet", type=Path, help="write the labelling sheet here")
    run.add_argument("server_args", nargs="*", help="after --: more arguments for python -m serve")
    run.set_defaults(func=cmd_run)
    replay = sub.add_parser("replay", help="send a base run's conversations, turn by turn, to this code")
    replay.add_argument("--base", type=Path, required=True, help="the base run's JSON (bench_goading run)")
    replay.add_argument("--json", type=Path, required=True)
    replay.add_argument("--sheet", type=Path, help="write the labelling sheet here")
    replay.add_argument("--limit", type=int, help="only the base's first N conversations")
    replay.add_argument("server_args", nargs="*", help="after --: more arguments for python -m serve")
    replay.set_defaults(func=cmd_replay)
    pairs = sub.add_parser("pairs", help="a blind sheet of the turns where a replay's reply differs from the base's")
    pairs.add_argument("base", type=Path)
    pairs.add_argument("replay", type=Path)
    pairs.add_argument("--sheet", type=Path, required=True)
    pairs.add_argument("--key", type=Path, required=True)
    pairs.add_argument("--seed", type=int, default=0, help="the shuffle's seed")
    pairs.set_defaults(func=cmd_pairs)
    paired = sub.add_parser("paired-count", help="count a pair sheet's labels per code")
    paired.add_argument("key", type=Path)
    paired.add_argument("sheets", type=Path, nargs="+")
    paired.set_defaults(func=cmd_paired_count)
    count = sub.add_parser("count", help="count labelled sheets (two: and their agreement)")
    count.add_argument("sheets", type=Path, nargs="+")
    count.set_defaults(func=cmd_count)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
