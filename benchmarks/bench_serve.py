"""A bounded load test of the guard server on the loopback: C concurrent clients x R requests each.

Starts ``python -m serve`` (harness/server.py) with the scripted bot playing a script whose every candidate echoes
the user's message, and the shipped detector in re-rank mode, unless told otherwise. Each client holds its own
conversation and sends all of it with every request (the server keeps nothing), R turns in a row; every message is
tagged with the client and turn. Each request is counted as answered (HTTP 200 with a reply), refused (an
OpenAI-style error body with a message) or failed (anything else: no answer, a body without a message), and an
answer is checked for mixing: the reply and every candidate must echo this request's own tag and no other. Records
the latency of every request (p50 / p90 / max, from sending to the whole body), the throughput, the server's own
generate and guard seconds, and the machine (benchmarks.machine).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_serve --clients 20 --requests 5 \
        --json benchmarks/results/serve-load.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

from benchmarks.machine import loadavg, machine_info, write_json
from harness.server import guard_servers

#: The demo's story (bots/scripted.py) with the user's message echoed in every candidate; turn 3's best candidate
#: contradicts turn 1, so the guard has work to do at every length.
SCRIPT = {"replies": [
    [{"text": "Hi! I'm Sam. I have two dogs, Max and Bella. You said: {user}", "score": -0.5}],
    [{"text": "I walk Max and Bella in the park every morning. You said: {user}", "score": -0.6},
     {"text": "I usually go for a run before work. You said: {user}", "score": -0.9}],
    [{"text": "I don't have any pets. You said: {user}", "score": -0.3},
     {"text": "No, my two dogs are plenty for me. You said: {user}", "score": -0.7},
     {"text": "Maybe a cat one day, if Max and Bella agree! You said: {user}", "score": -0.9}],
    [{"text": "I have never had a dog. I love hiking though. You said: {user}", "score": -0.4},
     {"text": "I like hiking with Max and Bella. You said: {user}", "score": -0.8}],
    [{"text": "It was nice talking to you. You said: {user}", "score": -0.5}],
]}
QUESTIONS = ("Hi! Tell me about yourself.", "What do you do in the mornings?", "Would you like another pet?",
             "Do you like hiking?", "Nice talking to you!")
TAG = re.compile(r"client \d+ turn \d+:")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    low, high = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def client(url: str, key: str, index: int, turns: int, mode: str, results: list, lock: threading.Lock,
           start: threading.Barrier) -> None:
    """One client: its own conversation, ``turns`` requests in a row, each with the whole conversation so far."""
    session = requests.Session()
    messages: list[dict] = [{"role": "system", "content": "I love animals."}]
    start.wait()
    for turn in range(turns):
        tag = f"client {index} turn {turn}:"
        messages.append({"role": "user", "content": f"{tag} {QUESTIONS[turn % len(QUESTIONS)]}"})
        row = {"client": index, "turn": turn}
        sent = time.perf_counter()
        try:
            answer = session.post(f"{url}/v1/chat/completions", json={
                "model": "consistency-guard", "messages": messages, "guard": {"guard_mode": mode}},
                headers={"Authorization": f"Bearer {key}"}, timeout=600)
            row["seconds"] = time.perf_counter() - sent
            row["status"] = answer.status_code
            body = answer.json()
        except (requests.RequestException, ValueError) as exc:
            row.update(outcome="failed", error=f"{type(exc).__name__}: {exc}")
        else:
            if answer.status_code == 200 and body.get("choices"):
                reply, report = body["choices"][0]["message"]["content"], body["guard"]["report"]
                texts = [reply] + [c["text"] for c in report["candidates"]]
                tags = {t for text in texts for t in TAG.findall(text)}
                row.update(outcome="answered", mixed=tags != {tag}, status_text=body["guard"]["status"],
                           timings=report["timings"])
                messages.append({"role": "assistant", "content": reply})
            elif isinstance(body.get("error"), dict) and body["error"].get("message"):
                row.update(outcome="refused", error=body["error"]["message"])
                messages.pop()  # the client may send the same turn again: nothing was stored
            else:
                row.update(outcome="failed", error=str(body)[:200])
        with lock:
            results.append(row)
        if row["outcome"] != "answered":
            break  # a refused conversation stops; its remaining turns are counted as not sent


def run(args: argparse.Namespace) -> dict:
    key = "bench-key"
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "script.json"
        script.write_text(json.dumps(SCRIPT))
        arguments = ["--bot", "scripted", "--script", str(script), "--detector", args.detector,
                     "--candidates", str(args.candidates), "--api-key", key, "--log-level", "warning",
                     "--max-waiting", str(args.max_waiting)]
        if args.detector == "none":
            arguments += ["--mode", "off"]  # the server refuses to start without a detector in any other mode
        started = time.perf_counter()
        with guard_servers(arguments, log_dir=folder, timeout=600) as (url,):
            startup = time.perf_counter() - started
            warm = requests.post(f"{url}/v1/chat/completions", json={"messages": [
                {"role": "user", "content": "client 0 turn 0: warm-up"}]},
                headers={"Authorization": f"Bearer {key}"}, timeout=600)
            warm.raise_for_status()
            results: list[dict] = []
            lock, barrier = threading.Lock(), threading.Barrier(args.clients)
            load_before = loadavg()
            threads = [threading.Thread(target=client, args=(url, key, k, args.requests, args.mode, results, lock,
                                                             barrier)) for k in range(args.clients)]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - began
            load_after = loadavg()
    answered = [r for r in results if r["outcome"] == "answered"]
    seconds = [r["seconds"] for r in results if "seconds" in r]
    guard_s = [r["timings"]["guard_s"] for r in answered]
    generate_s = [r["timings"]["generate_s"] for r in answered]
    summary = {
        "clients": args.clients, "requests_per_client": args.requests, "sent": len(results),
        "not_sent": args.clients * args.requests - len(results),
        "answered": len(answered), "refused": sum(r["outcome"] == "refused" for r in results),
        "failed": sum(r["outcome"] == "failed" for r in results), "mixed": sum(r.get("mixed", False) for r in answered),
        "latency_p50_s": round(percentile(seconds, 0.5), 3), "latency_p90_s": round(percentile(seconds, 0.9), 3),
        "latency_max_s": round(max(seconds), 3) if seconds else None,
        "throughput_rps": round(len(answered) / wall, 2), "wall_s": round(wall, 1),
        "server_guard_s_p50": round(statistics.median(guard_s), 3) if guard_s else None,
        "server_generate_s_p50": round(statistics.median(generate_s), 4) if generate_s else None,
        "statuses": sorted({r["status_text"] for r in answered}), "startup_s": round(startup, 1),
        "refusals": sorted({r["error"] for r in results if r["outcome"] != "answered"})[:5],
    }
    return {"benchmark": "bench_serve", "command": "python -m benchmarks.bench_serve " + " ".join(sys.argv[1:]),
            "generator": "scripted (echo script)",
            "detector": args.detector, "mode": args.mode, "candidates": args.candidates,
            "max_waiting": args.max_waiting, "loadavg_before": load_before, "loadavg_after": load_after,
            "machine": machine_info(), "summary": summary, "requests": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=5, help="requests per client (turns of its conversation)")
    parser.add_argument("--detector", default="embedded", help="the server's --detector ('none': guard off)")
    parser.add_argument("--mode", default="rerank", help="the guard mode each request asks for")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--max-waiting", type=int, default=64, help="the server's --max-waiting (503 beyond it)")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args(argv)
    if args.detector == "none":
        args.mode = "off"
    result = run(args)
    print(json.dumps({k: v for k, v in result.items() if k not in ("requests", "machine")}, indent=2))
    print(json.dumps({k: result["machine"][k] for k in ("cpu", "class", "flags", "cpu_count")}))
    if args.json:
        write_json(args.json, result)
    return 0 if result["summary"]["failed"] == 0 and result["summary"]["mixed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
