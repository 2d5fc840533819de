"""Enter -> guarded reply on screen, measured in a real browser.

Starts `streamlit run app.py` (embedded SmolLM2 bot + embedded detector by default), opens it in
headless Debian chromium through Playwright, and for each user message measures the wall time from
pressing Enter until the bot's turn is visible in the transcript, and until the guard's first live step (its
status box) is. The first ``--warmup`` turns (model loading, first spaCy parse, first generate call) are reported
separately. The app's own split (generation vs guard seconds, from the transcript download) gives the page's share:
Enter -> reply minus generation minus guard. The summary has the whole run and its first and last
``--window`` measured turns (the conversation short and long), with the CPU's flags.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_app --turns 30 --warmup 2 --json runs/bench_app.json
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_app --empty-cache --turns 2 --warmup 1  # a new user's first reply
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_app --turns 12 --warmup 2 --busy 1  # beside a CPU-bound process
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.server import CHROMIUM, chromium, send, streamlit_server, turn

# Ordinary chit-chat that makes a persona-less bot state facts about itself, then ask about them
# again (CDConv's "inquiring history" trigger), so the guard has something to check.
MESSAGES = [
    "Hi! How are you today?",
    "What do you do for a living?",
    "Do you have any pets?",
    "Where do you live?",
    "What is your favorite food?",
    "Do you have any kids?",
    "What did you do last weekend?",
    "What kind of music do you like?",
    "Tell me about your job again.",
    "Do you like dogs or cats?",
    "What do you do for fun?",
    "Where did you grow up?",
    "Do you still live there?",
    "What was your favorite food again?",
    "Do you have any brothers or sisters?",
    "What are you doing tomorrow?",
    "Have you ever been abroad?",
    "What is your favorite movie?",
    "Do you play any instruments?",
    "How old are you?",
    "What did you study?",
    "Do you like your neighbours?",
    "What is your dog's name again?",
    "Do you cook at home?",
    "What time do you get up?",
    "Do you drive to work?",
    "What is your favorite season?",
    "Have you always lived in the same city?",
    "Do you have a garden?",
    "What are your plans for the holidays?",
    "How many pets do you have again?",
    "Are you a morning person?",
]


def demo_screenshot(path: Path, detector: str) -> int:
    """The README's chat screenshot (the planted demo, benchmarks.screenshots) saved at ``path``."""
    from benchmarks import screenshots

    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "demo.json"
        script.write_text(json.dumps(screenshots.DEMO_SCRIPT))
        env = {"GUARD_APP_SCRIPT": str(script), "GUARD_APP_DETECTOR": detector, "GUARD_APP_MODE": "rerank",
               "GUARD_APP_CANDIDATES": "3"}
        with streamlit_server(env, log_path=Path(folder) / "streamlit.log") as url, chromium() as browser:
            failed = screenshots.chat(browser, url, Path(folder))
        Path(folder, "screenshot-chat.png").replace(path)
    print(f"saved {path}")
    return failed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=12, help="measured turns after warm-up")
    parser.add_argument("--window", type=int, default=6,
                        help="the first and last this many measured turns are summarised on their own")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--bot", default="embedded")
    parser.add_argument("--detector", default="embedded")
    parser.add_argument("--mode", default="rerank")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--preset", default="fast")
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    parser.add_argument("--empty-cache", action="store_true",
                        help="start the app on a new, empty GUARD_CACHE_DIR (every conversion and export runs): "
                             "the first turn then measures a new user's first reply")
    parser.add_argument("--provisioned", action="store_true",
                        help="with --empty-cache: unpack WordNet into the new cache first, as `make run`'s setup "
                             "step does on a new machine (python -m embedded.provision), before the clock starts")
    parser.add_argument("--busy", type=int, default=0,
                        help="keep this many CPU-bound processes spinning beside the app from its start to the end")
    parser.add_argument("--repo", type=Path, default=None,
                        help="run the app from this checkout (main's, for a before-and-after in one session)")
    parser.add_argument("--demo-screenshot", type=Path,
                        help="instead of timing: run the planted demo (scripted bot) and save this screenshot")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print("bench_app: /usr/bin/chromium is missing (make browser)", file=sys.stderr)
        return 2
    if args.demo_screenshot:
        return demo_screenshot(args.demo_screenshot, args.detector)
    total = args.warmup + args.turns
    if total > len(MESSAGES):
        print(f"bench_app: at most {len(MESSAGES)} turns in all", file=sys.stderr)
        return 2
    env = {"GUARD_APP_BOT": args.bot, "GUARD_APP_DETECTOR": args.detector, "GUARD_APP_MODE": args.mode,
           "GUARD_APP_CANDIDATES": str(args.candidates), "GUARD_APP_PRESET": args.preset}
    env = {k: v for k, v in env.items() if v}
    os.environ.pop("GUARD_APP_SCRIPT", None)
    with tempfile.TemporaryDirectory(prefix="bench_app_cache_") as empty_cache:
        if args.empty_cache:
            env["GUARD_CACHE_DIR"] = empty_cache
            if args.provisioned:  # what `make setup` leaves in a new cache: WordNet, no models
                subprocess.run([sys.executable, "-m", "embedded.provision"], check=True, cwd=args.repo or ".",
                               env={**os.environ, "GUARD_CACHE_DIR": empty_cache}, stdout=subprocess.DEVNULL)
        return _run(args, env, total)


def _run(args: argparse.Namespace, env: dict[str, str], total: int) -> int:
    import multiprocessing

    from benchmarks.bench_openmp import _spin

    busy = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for process in busy:
        process.start()
    try:
        return _measure(args, env, total)
    finally:
        for process in busy:
            process.terminate()


class LoadSampler:
    """The 1-minute load average every 5 s while the run lasts (its least and greatest go in the summary)."""

    def __init__(self, every: float = 5.0):
        import threading

        from benchmarks.machine import loadavg

        self.samples: list[float] = []
        self.stop = threading.Event()
        self._loadavg = loadavg

        def sample() -> None:
            while True:
                self.samples.append(self._loadavg()[0] if self._loadavg() else float("nan"))
                if self.stop.wait(every):
                    return

        self.thread = threading.Thread(target=sample, daemon=True)

    def __enter__(self) -> LoadSampler:
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop.set()
        self.thread.join()

    def summary(self) -> dict:
        values = [v for v in self.samples if v == v]
        return {"load_1min_min": min(values, default=None), "load_1min_max": max(values, default=None),
                "load_samples": len(values)}


def _measure(args: argparse.Namespace, env: dict[str, str], total: int) -> int:
    with LoadSampler() as load:
        return _measure_under(args, env, total, load)


def _measure_under(args: argparse.Namespace, env: dict[str, str], total: int, load: LoadSampler) -> int:
    rows = []
    started = time.perf_counter()
    marks_file = Path(tempfile.mkdtemp(prefix="bench_app_marks_")) / "marks.jsonl"  # the page runs' marks
    env = {**env, "GUARD_MARKS_FILE": str(marks_file)}
    where = {"repo": args.repo.resolve()} if args.repo else {}
    with streamlit_server(env, log_path="/tmp/bench_app_streamlit.log", **where) as url, chromium() as browser:
        healthy = time.perf_counter()  # the server answers /_stcore/health: a user can open the page from here
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        page.locator("textarea[data-testid='stChatInputTextArea']").wait_for(timeout=120_000)
        status = page.get_by_text("The bot is writing")  # the guard's live steps (ui.turn_widgets.guarded_turn_live)
        for k, message in enumerate(MESSAGES[:total]):
            send(page, message)
            t0 = time.perf_counter()
            entered = time.time()
            bot_turn = turn(page, 2 * k + 1)
            first_step = None
            while first_step is None and not bot_turn.is_visible():
                if status.count() and status.first.is_visible():
                    first_step = time.perf_counter() - t0
                    break
                page.wait_for_timeout(20)
            bot_turn.wait_for(state="visible", timeout=600_000)
            elapsed = time.perf_counter() - t0
            if k == 0:
                healthy_to_first_reply = time.perf_counter() - healthy
            reply = bot_turn.inner_text()
            rows.append({"turn": k, "warmup": k < args.warmup, "enter_to_reply_s": round(elapsed, 3),
                         "first_step_s": None if first_step is None else round(first_step, 3),
                         "entered_at": entered, "user": message, "reply": reply})
            print(f"turn {k:2d} {'warm-up ' if k < args.warmup else 'measured'} {elapsed:6.2f} s "
                  f"(first step {first_step if first_step is None else round(first_step, 2)} s) {reply[:60]!r}",
                  flush=True)
        # The app's own split of each turn (generation vs guard) comes with the transcript download.
        with page.expect_download() as download:
            page.get_by_role("button", name="Download transcript (JSON)").click()
        record = json.loads(Path(download.value.path()).read_text())
        bot_turns = [t for t in record["turns"] if t.get("guard")]
        for row, bot_turn_record in zip(rows, bot_turns):
            row.update(bot_turn_record["guard"]["timings"])
            row["page_s"] = round(row["enter_to_reply_s"] - row.get("generate_s", 0) - row.get("guard_s", 0)
                                  - row.get("remind_s", 0), 3)
            row["contradicting_candidates"] = sum(bool((c.get("verdict") or {}).get("contradiction"))
                                                  for c in bot_turn_record["guard"]["candidates"])
    server_split(rows, marks_file)
    from benchmarks.machine import machine_info, write_json

    measured_rows = [r for r in rows if not r["warmup"]]
    summary = {
        "bot": args.bot, "detector": args.detector, "mode": args.mode, "candidates": args.candidates,
        "preset": args.preset, "measured_turns": len(measured_rows),
        **_split(measured_rows),
        "first": _split(measured_rows[:args.window]), "last": _split(measured_rows[-args.window:]),
        "warmup_s": [r["enter_to_reply_s"] for r in rows if r["warmup"]],
        "empty_cache": args.empty_cache, "provisioned": args.provisioned, "busy_processes": args.busy, "repo": str(args.repo or "."),
        # from the server's health answer to the first reply on screen: page load, the first message, and whatever
        # model loading (or, on an empty cache, conversion) the start-up warm-up had not finished by then
        "healthy_to_first_reply_s": round(healthy_to_first_reply, 3),
        "contradicting_candidates": sum(r.get("contradicting_candidates", 0) for r in rows),
        "torch_threads_env": os.environ.get("OMP_NUM_THREADS"),
        "env": {k: os.environ[k] for k in ("GUARD_APP_REMIND", "GUARD_STREAM_INTERVAL_S", "GUARD_BOT_THREADS",
                                           "OMP_WAIT_POLICY") if k in os.environ},
        "wall_s": round(time.perf_counter() - started, 1), "machine": machine_info(), **load.summary(),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        write_json(args.json, {"summary": summary, "turns": rows})
    return 0


def server_split(rows: list[dict], marks_file: Path) -> None:
    """Each turn's first visible step taken apart with the page runs' marks (ui.profiling, ``GUARD_MARKS_FILE``):
    Enter -> the server starts the run that answers it (``run_start_s``), -> that run sends the live box
    (``live_box_sent_s``); the rest of ``first_step_s`` is the browser's (receiving and drawing it, and this
    benchmark's polling). The answering run is the first to reach the live box after Enter."""
    try:
        runs = [json.loads(line) for line in marks_file.read_text().splitlines() if line.strip()]
    except OSError:
        return
    for row in rows:
        entered = row.pop("entered_at")
        answering = next((r for r in runs if r["start"] >= entered - 0.05 and "live box" in r["marks"]), None)
        if answering is None:
            continue
        row["run_start_s"] = round(answering["start"] - entered, 3)
        row["live_box_sent_s"] = round(answering["start"] + answering["marks"]["live box"] - entered, 3)
        row["run_marks"] = answering["marks"]
        row["collected_s"] = answering.get("collected_s")  # the garbage collector's pauses during that run
        row["collections"] = answering.get("collections")


def _split(rows: list[dict]) -> dict:
    """Enter -> reply p50/p90/mean/max of ``rows``, the first guard step's p50 and the generation / guard / page
    medians (each turn's own split)."""
    seconds = [r["enter_to_reply_s"] for r in rows]
    return {"turns": [r["turn"] for r in rows], "p50_s": round(statistics.median(seconds), 3),
            "p90_s": round(percentile(seconds, 0.9), 3), "mean_s": round(statistics.mean(seconds), 3),
            "max_s": round(max(seconds), 3), "first_step_p50_s": _median([r.get("first_step_s") for r in rows]),
            "first_step_max_s": max((r["first_step_s"] for r in rows if r.get("first_step_s") is not None),
                                    default=None),
            "run_start_p50_s": _median([r.get("run_start_s") for r in rows]),
            "live_box_sent_p50_s": _median([r.get("live_box_sent_s") for r in rows]),
            "generate_p50_s": _median([r.get("generate_s") for r in rows]),
            "guard_p50_s": _median([r.get("guard_s") for r in rows]),
            "page_p50_s": _median([r.get("page_s") for r in rows]),
            # the guard's reminders (guard.judge.reminders) timed apart: how many turns had one, what they took, and Enter ->
            # reply without them
            "reminded_turns": sum(r.get("remind_s") is not None for r in rows),
            "remind_p50_s": _median([r.get("remind_s") for r in rows]),
            "p50_without_reminders_s": round(statistics.median(
                [r["enter_to_reply_s"] - (r.get("remind_s") or 0) for r in rows]), 3)}


def _median(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


if __name__ == "__main__":
    sys.exit(main())
