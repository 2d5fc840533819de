"""A class on one server: Enter -> reply for each student while the others chat too.

Two ways in, one turn path (``conversation.guarding.guarded_reply`` over one shared bot and guard):

* ``browser``: up to 5 real browser sessions (Playwright contexts, each with its own cookie and persona) against one
  ``streamlit run app.py`` (``make run``'s app) with a studio database of its own; Enter -> the bot's turn on
  screen, as ``benchmarks/bench_app.py`` measures it. Afterwards every session is read back from the database:
  saved whole means every message and every reply stored.
* ``api``: N clients (10, 20, 30) through ``python -m serve`` (``make serve``) with the embedded bot: the same
  ``guarded_reply``, the same generation worker, the bot's and guard's defaults of the app (4 candidates, the
  ``fast`` preset, re-rank). Why not N browsers: 30 headless chromiums on the server's 2 cores would measure the
  browsers; an HTTP client costs next to nothing, so the server has the cores as it would in a classroom where the
  browsers run on the students' machines. A client sends its whole conversation with each message (the server keeps
  nothing): complete means every message answered, in order, with a reply.

Every run first measures one student alone (``--solo-turns`` after ``--warmup``), then the class: ``burst`` (every
student sends at the same moment, ``--turns`` rounds, each round once every reply of the last one is in) or
``think`` (each student waits a seeded 20-40 s before each message, ``--think``). It reports p50 / p95 Enter -> reply
alone and in the class, their ratio, the server process's CPU (cores kept busy) and the machine's, where each turn's
time went by the server's own timings (generation, guard, and the waiting the server reports where it reports it:
``queued_s``; the rest of Enter -> reply is waiting and the page or HTTP), and whether anything was lost.

``--repo DIR`` runs the server from another checkout (main's, for the before figures) with this benchmark.
``--llama-parallel N`` (api) puts the bot on llama.cpp's server with N slots (``make llama``) and the guard server in
front of it (``--upstream``), as a school that splits the bot off would (docs/deploy.md).

    flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 10 --pattern burst
    flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class api --clients 30 --pattern think
    flock /tmp/heavy.lock env HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_class browser --students 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.bench_app import MESSAGES, percentile
from benchmarks.machine import loadavg, machine_info, write_json
from harness.server import REPO

#: One persona a student (cycled): the bot each student talks to is someone else, as when a class is given roles.
PERSONAS = [
    ["My name is Alex.", "I live in Denver.", "I have two cats.", "I work as a baker."],
    ["My name is Priya.", "I live in Chicago.", "I have a parrot named Kiwi.", "I teach math at a high school."],
    ["My name is Tom.", "I live on a farm in Iowa.", "I have three dogs.", "I grow corn and soybeans."],
    ["My name is Mei.", "I live in Seattle.", "I have no pets.", "I am a software engineer."],
    ["My name is Carlos.", "I live in Miami.", "I have a turtle.", "I work as a lifeguard."],
]


@dataclass
class Reply:
    """One message and what came back."""

    student: int
    turn: int
    phase: str  # "warmup", "solo" or "class"
    sent_at: float  # seconds since the phase started
    seconds: float | None = None  # Enter (or the request sent) -> the reply on screen (or the whole body)
    reply: str | None = None
    error: str | None = None
    timings: dict = field(default_factory=dict)  # the server's own: generate_s, guard_s, queued_s ...
    crowded: bool = False  # the bot drew fewer candidates for it because others waited (the report's crowd_note)

    @property
    def answered(self) -> bool:
        return self.seconds is not None and bool(self.reply) and self.error is None


# ------------------------------------------------------------------------------------------------ CPU of the server
def _process_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime + stime, every thread


def _machine_ticks() -> tuple[int, int] | None:
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except OSError:
        return None
    idle = values[3] + values[4]
    return sum(values[:8]) - idle, sum(values[:8])


class CpuMeter:
    """The server process's CPU seconds and the machine's busy time over a stretch of the run, as cores kept busy."""

    def __init__(self, pid: int):
        self.pid = pid
        self.start: tuple[float, int | None, tuple[int, int] | None] | None = None

    def __enter__(self) -> CpuMeter:
        self.start = (time.monotonic(), _process_ticks(self.pid), _machine_ticks())
        return self

    def __exit__(self, *exc_info) -> None:
        self.end = (time.monotonic(), _process_ticks(self.pid), _machine_ticks())

    def summary(self) -> dict:
        hz = os.sysconf("SC_CLK_TCK")
        wall = self.end[0] - self.start[0]
        out: dict = {"wall_s": round(wall, 1)}
        if self.start[1] is not None and self.end[1] is not None:
            out["server_cpu_s"] = round((self.end[1] - self.start[1]) / hz, 1)
            out["server_cores_busy"] = round((self.end[1] - self.start[1]) / hz / wall, 2)
        if self.start[2] is not None and self.end[2] is not None:
            busy = self.end[2][0] - self.start[2][0]
            total = self.end[2][1] - self.start[2][1]
            out["machine_cores_busy"] = round(busy / max(total, 1) * (os.cpu_count() or 1), 2)
        return out


# ------------------------------------------------------------------------------------------------ the API clients
class ApiStudent:
    """One student through the API: a persona, a conversation sent whole with every message."""

    def __init__(self, url: str, index: int):
        import requests

        self.url, self.index = url, index
        self.session = requests.Session()
        self.messages: list[dict] = [{"role": "system", "content": "\n".join(PERSONAS[index % len(PERSONAS)])}]
        self.said = 0

    def ask(self, phase: str, phase_start: float) -> Reply:
        text = MESSAGES[(self.said + 3 * self.index) % len(MESSAGES)]
        self.messages.append({"role": "user", "content": text})
        row = Reply(self.index, self.said, phase, round(time.monotonic() - phase_start, 3))
        self.said += 1
        sent = time.perf_counter()
        try:
            answer = self.session.post(f"{self.url}/v1/chat/completions", json={
                "model": "consistency-guard", "messages": self.messages}, timeout=900)
            body = answer.json()
        except (OSError, ValueError) as exc:
            row.error = f"{type(exc).__name__}: {exc}"
            return row
        if answer.status_code == 200 and body.get("choices"):
            row.seconds = round(time.perf_counter() - sent, 3)
            row.reply = body["choices"][0]["message"]["content"]
            report = body.get("guard", {}).get("report", {})
            row.timings, row.crowded = dict(report.get("timings", {})), bool(report.get("crowd_note"))
            self.messages.append({"role": "assistant", "content": row.reply})
        else:
            row.error = f"HTTP {answer.status_code}: {(body.get('error') or {}).get('message', str(body)[:200])}"
            self.messages.pop()
        return row

    def complete(self) -> bool:
        """Every message this student sent has its reply right after it."""
        turns = self.messages[1:]
        return len(turns) == 2 * self.said and all(
            m["role"] == ("user" if i % 2 == 0 else "assistant") and m["content"] for i, m in enumerate(turns))


def run_class(students: list, ask, pattern: str, turns: int, think: tuple[float, float], seed: int) -> list[Reply]:
    """Every student's ``turns`` messages, in ``pattern``; ``ask(student, phase_start) -> Reply``."""
    rows: list[Reply] = []
    lock = threading.Lock()
    start = time.monotonic()
    if pattern == "burst":
        barrier = threading.Barrier(len(students))

        def burst(student) -> None:
            for _ in range(turns):
                barrier.wait()
                row = ask(student, start)
                with lock:
                    rows.append(row)

        work = burst
    else:
        def thinking(student) -> None:
            rng = random.Random(seed * 1000 + students.index(student))
            for _ in range(turns):
                time.sleep(rng.uniform(*think))
                row = ask(student, start)
                with lock:
                    rows.append(row)

        work = thinking
    threads = [threading.Thread(target=work, args=(s,)) for s in students]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return rows


def api_run(args: argparse.Namespace) -> dict:
    if args.llama_parallel:  # the bot on llama.cpp's server, the guard server in front of it (docs/deploy.md)
        import embedded
        from harness.llama import llama_server

        with tempfile.TemporaryDirectory(prefix="bench_class_llama_") as folder, llama_server(
                embedded.smollm2_gguf_path(), parallel=args.llama_parallel, context=1024 * args.llama_parallel,
                log_path=Path(folder) / "llama-server.log", timeout=300) as upstream:
            return _api_run(args, ["--upstream", upstream])
    return _api_run(args, ["--bot", "embedded"])


def _api_run(args: argparse.Namespace, generator: list[str]) -> dict:
    from harness.server import free_port, start_guard_server, stop, wait_for_health

    arguments = [*generator, "--detector", args.detector, "--candidates", str(args.candidates),
                 "--preset", args.preset, "--mode", args.mode, "--log-level", "warning",
                 "--max-waiting", str(args.max_waiting), *([] if args.remind else ["--no-remind"])]
    with tempfile.TemporaryDirectory(prefix="bench_class_") as folder:
        port = free_port()
        log = open(Path(folder) / "serve.log", "w")
        started = time.perf_counter()
        proc = start_guard_server(arguments, port, env=_server_env(args), log=log, repo=args.repo)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_health(proc, url, time.monotonic() + 600, log.name)
            startup = time.perf_counter() - started
            solo = ApiStudent(url, 0)
            rows = [solo.ask("warmup", time.monotonic()) for _ in range(args.warmup)]
            phase = time.monotonic()
            rows += [solo.ask("solo", phase) for _ in range(args.solo_turns)]
            students = [ApiStudent(url, k) for k in range(1, args.clients + 1)]
            with CpuMeter(proc.pid) as cpu:
                rows += run_class(students, lambda s, t: s.ask("class", t), args.pattern, args.turns,
                                  tuple(args.think), args.seed)
            complete = [s.complete() for s in students]
        finally:
            stop(proc)
            log.close()
            server_log = Path(log.name).read_text()[-3000:]
    return {"startup_s": round(startup, 1), "rows": rows, "cpu": cpu.summary(),
            "conversations": len(complete), "conversations_complete": sum(complete),
            "server_log_tail": server_log if not all(complete) else ""}


# ------------------------------------------------------------------------------------------------ the browsers
class BrowserStudent:
    """One student in a browser context of their own (own cookie), with their own persona."""

    def __init__(self, browser, url: str, index: int):
        self.index, self.said = index, 0
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        self.page = self.context.new_page()
        self.page.goto(url)
        self.url = url

    def set_persona(self) -> None:
        from harness.server import CHAT_INPUT, set_persona

        self.page.locator(CHAT_INPUT).wait_for(timeout=180_000)
        set_persona(self.page, "\n".join(PERSONAS[self.index % len(PERSONAS)]))

    def send(self) -> tuple[int, float]:
        from harness.server import send

        text = MESSAGES[(self.said + 3 * self.index) % len(MESSAGES)]
        send(self.page, text)
        sent = time.perf_counter()
        self.said += 1
        return 2 * (self.said - 1) + 1, sent  # the id of the bot turn that answers it

    def reply(self, turn_id: int) -> str | None:
        from harness.server import turn

        found = turn(self.page, turn_id)
        return found.inner_text() if found.count() and found.first.is_visible() else None

    def session_id(self) -> str | None:
        from urllib.parse import parse_qs, urlsplit

        return (parse_qs(urlsplit(self.page.url).query).get("session") or [None])[0]


def _collect(students: list[BrowserStudent], waiting: dict[int, tuple[int, float, Reply]], rows: list[Reply],
             timeout: float) -> list[int]:
    """Look once at each waiting student's screen: a reply there is recorded and the student waits no more; one
    waiting past ``timeout`` seconds is recorded as an error. Returns the students answered this look."""
    answered = []
    for k in list(waiting):
        turn_id, sent, row = waiting[k]
        text = students[k].reply(turn_id)
        if text:
            row.seconds, row.reply = round(time.perf_counter() - sent, 3), text
            answered.append(k)
        elif time.perf_counter() - sent > timeout:
            row.error = f"no reply on screen after {timeout:.0f} s"
        else:
            continue
        rows.append(row)
        del waiting[k]
    return answered


def browser_round(students: list[BrowserStudent], who: list[int], phase: str, start: float,
                  timeout: float = 900) -> list[Reply]:
    """The students ``who`` send one message each at once; wait for every reply."""
    waiting = {}
    for k in who:
        turn_id, sent = students[k].send()
        waiting[k] = (turn_id, sent, Reply(k, students[k].said - 1, phase, round(time.monotonic() - start, 3)))
    rows: list[Reply] = []
    while waiting:
        _collect(students, waiting, rows, timeout)
        time.sleep(0.05)
    return rows


def browser_think(students: list[BrowserStudent], turns: int, think: tuple[float, float], seed: int,
                  start: float, timeout: float = 900) -> list[Reply]:
    """Each student waits a seeded think time before each message; replies are watched for all the while."""
    rngs = [random.Random(seed * 1000 + k) for k in range(len(students))]
    due = {k: time.perf_counter() + rngs[k].uniform(*think) for k in range(len(students))}
    left = {k: turns for k in range(len(students))}
    waiting: dict[int, tuple[int, float, Reply]] = {}
    rows: list[Reply] = []
    while due or waiting:
        now = time.perf_counter()
        for k in [k for k, t in due.items() if t <= now]:
            del due[k]
            turn_id, sent = students[k].send()
            waiting[k] = (turn_id, sent, Reply(k, students[k].said - 1, "class", round(time.monotonic() - start, 3)))
        for k in _collect(students, waiting, rows, timeout):
            left[k] -= 1
            if left[k]:
                due[k] = time.perf_counter() + rngs[k].uniform(*think)
        time.sleep(0.05)
    return rows


def browser_run(args: argparse.Namespace) -> dict:
    from harness.server import CHROMIUM, chromium, streamlit_server
    from studio.storage import open_store

    if not CHROMIUM.exists():
        raise SystemExit("bench_class browser: /usr/bin/chromium is missing (make browser)")
    with tempfile.TemporaryDirectory(prefix="bench_class_") as folder:
        db_url = f"sqlite:///{folder}/studio.db"
        env = {**_server_env(args), "GUARD_STUDIO_DB": db_url, "GUARD_APP_BOT": "embedded",
               "GUARD_APP_DETECTOR": args.detector, "GUARD_APP_MODE": args.mode,
               "GUARD_APP_CANDIDATES": str(args.candidates), "GUARD_APP_PRESET": args.preset,
               "GUARD_APP_REMIND": "1" if args.remind else "0"}
        procs: list = []
        started = time.perf_counter()
        with streamlit_server(env, log_path=Path(folder) / "streamlit.log", repo=args.repo, started=procs,
                              timeout=600) as url, chromium() as browser:
            startup = time.perf_counter() - started
            students = [BrowserStudent(browser, url, k) for k in range(args.students)]
            for student in students:
                student.set_persona()
            rows: list[Reply] = []
            for _ in range(args.warmup):
                rows += browser_round(students, [0], "warmup", time.monotonic())
            phase = time.monotonic()
            for _ in range(args.solo_turns):
                rows += browser_round(students, [0], "solo", phase)
            with CpuMeter(procs[0].pid) as cpu:
                start = time.monotonic()
                if args.pattern == "burst":
                    for _ in range(args.turns):
                        rows += browser_round(students, list(range(len(students))), "class", start)
                else:
                    rows += browser_think(students, args.turns, tuple(args.think), args.seed, start)
            time.sleep(2)  # the last reply is saved right after it is drawn
            sessions = [s.session_id() for s in students]
            said = [s.said for s in students]
            for student in students:
                student.context.close()
        store = open_store(db_url)
        saved = []
        for k, (session_id, count) in enumerate(zip(sessions, said)):
            stored = store.load_session(session_id) if session_id else None
            turns = [] if stored is None else [t.turn for t in stored.turns]
            whole = len(turns) == 2 * count and all(t.text for t in turns)
            saved.append({"session": session_id, "messages": count, "stored_turns": len(turns), "whole": whole})
            if stored is not None:  # the server's own split of each reply, from its stored report
                bots = [t for t in turns if t.report is not None]
                for row in rows:
                    if row.student == k and row.turn < len(bots):
                        row.timings = dict(bots[row.turn].report.timings)
                        row.crowded = bool(getattr(bots[row.turn].report, "crowd_note", ""))
    return {"startup_s": round(startup, 1), "rows": rows, "cpu": cpu.summary(), "saved": saved,
            "conversations": len(saved), "conversations_complete": sum(s["whole"] for s in saved)}


# ------------------------------------------------------------------------------------------------ summary
def _server_env(args: argparse.Namespace) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(("GUARD_", "CT2_", "OMP_", "ONEDNN", "MKL_",
                                                                  "ATEN_"))}


def _stats(rows: list[Reply]) -> dict:
    seconds = [r.seconds for r in rows if r.answered]
    if not seconds:
        return {"replies": 0}
    out = {"replies": len(seconds), "p50_s": round(statistics.median(seconds), 3),
           "p95_s": round(percentile(seconds, 0.95), 3), "max_s": round(max(seconds), 3),
           "crowded_replies": sum(r.crowded for r in rows if r.answered)}  # drawn fewer candidates (BUSY_CANDIDATES)
    keys = sorted({k for r in rows for k, v in r.timings.items() if isinstance(v, (int, float))})
    for key in keys:  # the server's split: each timing's median over the replies that report it
        values = [r.timings[key] for r in rows if isinstance(r.timings.get(key), (int, float))]
        out[f"{key}_p50"] = round(statistics.median(values), 3)
    rest = [r.seconds - sum(r.timings.get(k, 0) for k in ("generate_s", "guard_s", "remind_s", "guard_queued_s"))
            for r in rows if r.answered and r.timings]
    if rest:  # Enter -> reply less what the server says it spent generating and guarding (and waiting for either
        # where it says so; generate_s holds queued_s): the page or HTTP, and waiting the server does not report
        out["other_p50_s"] = round(statistics.median(rest), 3)
    means = {k: statistics.mean(r.timings.get(k, 0) for r in rows if r.answered and r.timings) for k in
             ("generate_s", "queued_s", "guard_s", "guard_queued_s", "remind_s")} if rest else {}
    if means:  # where the mean turn's time went: generation, guard, and the waits the server reports
        mean_total = statistics.mean(r.seconds for r in rows if r.answered and r.timings)
        out["mean_split_s"] = {"enter_to_reply": round(mean_total, 3),
                               "waiting_for_bot": round(means["queued_s"], 3),
                               "generation": round(means["generate_s"] - means["queued_s"], 3),
                               "waiting_for_guard": round(means["guard_queued_s"], 3),
                               "guard": round(means["guard_s"], 3), "reminders": round(means["remind_s"], 3),
                               "rest": round(mean_total - means["generate_s"] - means["guard_s"]
                                             - means["guard_queued_s"] - means["remind_s"], 3)}
    return out


def summarize(args: argparse.Namespace, run: dict) -> dict:
    rows: list[Reply] = run["rows"]
    solo = _stats([r for r in rows if r.phase == "solo"])
    klass = _stats([r for r in rows if r.phase == "class"])
    sent = [r for r in rows if r.phase == "class"]
    expected = (args.clients if args.way == "api" else args.students) * args.turns
    summary = {
        "way": args.way, "pattern": args.pattern, "students": args.clients if args.way == "api" else args.students,
        "turns_each": args.turns, "think_s": args.think if args.pattern == "think" else None, "seed": args.seed,
        "candidates": args.candidates, "preset": args.preset, "mode": args.mode, "reminders": args.remind,
        "repo": str(args.repo), "llama_parallel": args.llama_parallel, "solo": solo, "class": klass,
        "class_p50_over_solo_p50": round(klass["p50_s"] / solo["p50_s"], 2) if klass.get("p50_s") and
        solo.get("p50_s") else None,
        "class_p95_over_solo_p50": round(klass["p95_s"] / solo["p50_s"], 2) if klass.get("p95_s") and
        solo.get("p50_s") else None,
        "messages_sent": len(sent), "messages_expected": expected, "answered": sum(r.answered for r in sent),
        "lost": expected - sum(r.answered for r in sent),
        "errors": sorted({r.error for r in rows if r.error})[:5],
        "conversations": run["conversations"], "conversations_complete": run["conversations_complete"],
        "cpu": run["cpu"], "startup_s": run["startup_s"], "warmup_s": [r.seconds for r in rows if r.phase == "warmup"],
        "loadavg_end": loadavg(),
    }
    if run.get("saved"):
        summary["saved"] = run["saved"]
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("way", choices=("api", "browser"))
    parser.add_argument("--clients", type=int, default=10, help="api: students through the API")
    parser.add_argument("--students", type=int, default=5, help="browser: browser sessions (at most 5)")
    parser.add_argument("--pattern", choices=("burst", "think"), default="burst")
    parser.add_argument("--turns", type=int, default=3, help="messages each student sends in the class phase")
    parser.add_argument("--think", type=float, nargs=2, default=(20.0, 40.0), metavar=("MIN", "MAX"),
                        help="think: seconds a student waits before each message, drawn uniformly (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=2, help="messages of student 0 before anything is measured")
    parser.add_argument("--solo-turns", type=int, default=5, help="student 0 alone, measured: the baseline")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--preset", default="fast")
    parser.add_argument("--mode", default="rerank")
    parser.add_argument("--detector", default="embedded")
    parser.add_argument("--remind", action="store_true", help="the guard's reminders on (off: timings comparable)")
    parser.add_argument("--max-waiting", type=int, default=64, help="api: the server's --max-waiting")
    parser.add_argument("--repo", type=Path, default=REPO, help="run the server from this checkout")
    parser.add_argument("--llama-parallel", type=int, default=0,
                        help="api: the bot on llama.cpp's server with this many slots (make llama), the guard server "
                             "in front of it with --upstream")
    parser.add_argument("--json", type=Path, help="write the summary and every reply here")
    args = parser.parse_args(argv)
    if args.way == "browser" and not 1 <= args.students <= 5:
        parser.error("--students must be between 1 and 5")
    args.repo = args.repo.resolve()
    run = api_run(args) if args.way == "api" else browser_run(args)
    summary = summarize(args, run)
    summary["machine"] = machine_info()
    print(json.dumps({k: v for k, v in summary.items() if k != "machine"}, indent=2))
    print(json.dumps({k: summary["machine"][k] for k in ("cpu", "class", "flags")}))
    if args.json:
        write_json(args.json, {"summary": summary, "command": "python -m benchmarks.bench_class " +
                               " ".join(sys.argv[1:] if argv is None else argv),
                               "replies": [r.__dict__ for r in run["rows"]]})
    return 0 if summary["lost"] == 0 and summary["conversations_complete"] == summary["conversations"] else 1


if __name__ == "__main__":
    sys.exit(main())
