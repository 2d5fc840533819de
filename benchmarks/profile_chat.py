"""Where one guarded turn's time goes in the chat page, at a short and a long conversation: the real server profiled
(``GUARD_PROFILE_DIR``, ui/profiling.py) while a real browser chats with it.

Sends ``--turns`` messages (benchmarks.bench_app's), each once the last run is over, and reads the cProfile of the
page run that answered each turn named by ``--at`` (1-based: ``--at 6 30`` is the 6th and the 30th reply). For each
it prints the run's wall time split into what the bot, the guard and the page itself did (cumulative seconds of the
functions named in ``BUCKETS``; a function inside another bucket's is counted in both), then the functions with the
most own time.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.profile_chat --turns 30 --at 6 30

The profile is the script thread's: the bot and the guard run in a worker thread meanwhile (ui/live_turn.py), so their
time shows as the live turn's wait (their own split is in each turn's report: bench_app). cProfile slows Python code
down more than the models' native code, so the split says where the page's time goes, not what a turn costs
unprofiled (benchmarks.bench_app says that).
"""

from __future__ import annotations

import argparse
import pstats
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_app import MESSAGES
from harness.server import CHROMIUM, chromium, send, streamlit_server, turn, wait_until_idle

#: (label, file name ending, function name): what a guarded turn's run spends its time in
BUCKETS = [
    ("live turn: waiting for the bot and the guard, drawing their steps", "ui/turn_widgets.py", "guarded_turn_live"),
    ("  steps drawn", "ui/turn_widgets.py", "show"),
    ("transcript placed", "pages/guarded_chat.py", "place_transcript"),
    ("transcript drawn (while the bot writes)", "pages/guarded_chat.py", "fill_transcript"),
    ("  turns drawn", "pages/guarded_chat.py", "draw_turn_content"),
    ("  turn_html", "ui/render.py", "turn_html"),
    ("  candidate panels", "ui/turn_widgets.py", "show_candidates"),
    ("  annotation boxes", "ui/annotations.py", "annotation_box"),
    ("evidence marks (transcript_marks)", "ui/transcript.py", "transcript_marks"),
    ("marked turns redrawn", "pages/guarded_chat.py", "redraw_marked"),
    ("session saved", "ui/chat_session.py", "save_turns"),
    ("sidebar", "ui/chat_sidebar.py", "draw"),
    ("per-turn chart", "ui/turn_widgets.py", "show_turn_chart"),
    ("goading assistant", "ui/suggestions.py", "panel"),
    ("Streamlit: elements sent", "streamlit/runtime/scriptrunner/script_runner.py", "_enqueue_forward_msg"),
]


def cumulative(stats: pstats.Stats, ending: str, name: str) -> float:
    """Seconds spent in (and under) every function called ``name`` in a file ending with ``ending``; recursive calls
    are counted once (cProfile's cumulative time already does)."""
    return sum(row[3] for (path, _, func), row in stats.stats.items()
               if func == name and path.replace("\\", "/").endswith(ending))


def report(path: Path, top: int) -> dict:
    stats = pstats.Stats(str(path))
    buckets = {"the whole page run": round(sum(row[2] for row in stats.stats.values()), 3)}  # every function's own
    buckets.update({label: round(cumulative(stats, ending, name), 3) for label, ending, name in BUCKETS})
    own = sorted(((row[2], f"{Path(p).name}:{line} {func}") for (p, line, func), row in stats.stats.items()),
                 reverse=True)[:top]
    return {"buckets": buckets, "own_time": [(round(t, 3), where) for t, where in own]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--at", type=int, nargs="+", default=[6, 30], help="replies to read the profile of (1-based)")
    parser.add_argument("--top", type=int, default=15, help="functions listed by own time")
    parser.add_argument("--keep", type=Path, help="copy the profiles read here (for snakeviz, pstats)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print("profile_chat: /usr/bin/chromium is missing (make browser)", file=sys.stderr)
        return 2
    if args.turns > len(MESSAGES):
        print(f"profile_chat: at most {len(MESSAGES)} turns", file=sys.stderr)
        return 2
    results = {}
    with tempfile.TemporaryDirectory(prefix="profile_chat_") as folder:
        env = {"GUARD_PROFILE_DIR": folder}
        runs: dict[int, Path] = {}
        with streamlit_server(env, log_path=Path(folder) / "streamlit.log") as url, chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.locator("textarea[data-testid='stChatInputTextArea']").wait_for(timeout=120_000)
            for k, message in enumerate(MESSAGES[:args.turns]):
                wait_until_idle(page)
                before = set(Path(folder).glob("*.prof"))
                send(page, message)
                turn(page, 2 * k + 1).wait_for(state="visible", timeout=600_000)
                wait_until_idle(page)
                time.sleep(0.3)  # the run's profile is written as it ends
                new = sorted(set(Path(folder).glob("*.prof")) - before)
                answered = [p for p in new if cumulative(pstats.Stats(str(p)), "ui/turn_widgets.py",
                                                         "guarded_turn_live") > 0]
                if answered:
                    runs[k + 1] = answered[-1]
                print(f"turn {k + 1:2d}: {len(new)} run(s) profiled", flush=True)
        for at in args.at:
            if at not in runs:
                print(f"reply {at}: no profiled run answered it", file=sys.stderr)
                continue
            results[at] = report(runs[at], args.top)
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"reply-{at}.prof").write_bytes(runs[at].read_bytes())
    for at, result in results.items():
        print(f"\n## reply {at} (history {2 * at - 1} turns when the bot answered)")
        for label, seconds in result["buckets"].items():
            print(f"{seconds:8.3f} s  {label}")
        print("own time:")
        for seconds, where in result["own_time"]:
            print(f"{seconds:8.3f} s  {where}")
    if args.json:
        from benchmarks.machine import machine_info, write_json

        write_json(args.json, {"replies": results, "machine": machine_info()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
