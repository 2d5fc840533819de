"""Each idea in one place, read from the code itself (its syntax tree), so a second copy fails here:

* only ``guard/config.py`` opens a checkpoint's ``guard_config.json`` at run time (training writes it);
* only ``guard/judge/pipeline.py`` builds a ``ContradictionDetector`` at run time (a ``Guard``'s one detector), and only
  it calls the detector (``Guard.judge`` is the one way in); only ``guard/judge/detector.py`` runs a judgement's stages
  (``guard.judge.planning``, ``guard.judge.building``);
* the prefilter's k is a number in one place (``guard.config.DEFAULT_PREFILTER_K``), nowhere a literal;
* nothing takes turns on the CPU but ``embedded.turns.cpu_turn`` inside the models (no hand-made locks around model
  calls in the pages, the server or the guarded conversation).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: what runs in the app, the server and the command lines (training and benchmarks are not run time)
RUNTIME = ("guard", "bots", "conversation", "studio", "serve", "ui", "pages", "embedded")


def runtime_files() -> list[Path]:
    files = [REPO / "app.py"]
    for package in RUNTIME:
        files += [p for p in sorted((REPO / package).rglob("*.py")) if "training" not in p.parts]
    return files


def all_code_files() -> list[Path]:
    return runtime_files() + sorted((REPO / "benchmarks").rglob("*.py")) + sorted((REPO / "harness").rglob("*.py"))


def tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(REPO)}:{node.lineno}"


def test_the_walk_finds_calls_names_and_literals(tmp_path):
    """The checks below would pass on code they cannot see: show that they see it."""
    source = tmp_path / "example.py"
    source.write_text('import threading\nname = "guard_config.json"\nd = ContradictionDetector(s, prefilter_k=8)\n'
                      'lock = threading.Lock()\nv = guard.detector.judge(h, c, "bot", (), s)\np = plan_turn(h, c)\n')
    nodes = list(ast.walk(tree(source)))
    assert any(isinstance(n, ast.Constant) and n.value == "guard_config.json" for n in nodes)
    assert any(_calls(n, "ContradictionDetector") for n in nodes)
    assert any(_calls_the_detector(n) for n in nodes) and any(_calls(n, "plan_turn") for n in nodes)
    assert any(isinstance(n, ast.keyword) and n.arg == "prefilter_k" and isinstance(n.value, ast.Constant)
               for n in nodes)
    assert any(_calls(n, "Lock") for n in nodes)


def _calls(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name)


def test_only_guard_config_reads_guard_config_json():
    found = []
    for path in runtime_files():
        if path == REPO / "guard" / "config.py":
            continue
        for node in ast.walk(tree(path)):
            names_the_file = isinstance(node, ast.Constant) and node.value == "guard_config.json"
            names_the_constant = isinstance(node, (ast.Name, ast.alias)) and \
                getattr(node, "id", getattr(node, "name", None)) == "GUARD_CONFIG_NAME"
            if names_the_file or names_the_constant:
                found.append(where(path, node) if hasattr(node, "lineno") else str(path.relative_to(REPO)))
    assert found == []


def test_the_detector_is_built_at_one_runtime_site():
    sites = [where(path, node) for path in runtime_files() for node in ast.walk(tree(path))
             if _calls(node, "ContradictionDetector")]
    assert len(sites) == 1 and sites[0].startswith("guard/judge/pipeline.py:"), sites


def _calls_the_detector(node: ast.AST) -> bool:
    """``<anything>.detector.judge(...)`` or ``<anything>.detector.prepare(...)``."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    owner = node.func.value
    return node.func.attr in ("judge", "prepare") and (
        (isinstance(owner, ast.Attribute) and owner.attr == "detector") or (isinstance(owner, ast.Name)
                                                                             and owner.id == "detector"))


def test_only_the_guard_calls_its_detector_and_only_the_detector_runs_the_stages():
    callers = [where(path, node) for path in runtime_files() for node in ast.walk(tree(path))
               if _calls_the_detector(node)]
    assert callers and all(site.startswith("guard/judge/pipeline.py:") for site in callers), callers
    stages = [where(path, node) for path in runtime_files() for node in ast.walk(tree(path))
              if any(_calls(node, stage) for stage in ("plan_turn", "structured_verdict", "unstructured_verdict"))]
    assert stages and all(site.startswith("guard/judge/detector.py:") for site in stages), stages


def test_no_prefilter_k_literal_outside_its_definition():
    found = []
    for path in all_code_files():
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.keyword) and node.arg == "prefilter_k" and _number(node.value):
                found.append(where(path, node.value))  # ContradictionDetector(..., prefilter_k=8)
            elif _calls(node, "add_argument") and any(isinstance(a, ast.Constant) and a.value == "--prefilter-k"
                                                      for a in node.args):
                found += [where(path, k.value) for k in node.keywords if k.arg == "default" and _number(k.value)]
            elif isinstance(node, ast.Assign) and _number(node.value) and path != REPO / "guard" / "config.py" \
                    and any(isinstance(t, ast.Name) and "PREFILTER_K" in t.id for t in node.targets):
                found.append(where(path, node))  # a second constant
    assert found == []


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def test_nothing_but_the_models_take_turns_on_the_cpu():
    """Locks around model calls live in the models (``cpu_turn``); the pages, the server and the guarded conversation
    hold none (the guard's own test shows two sessions taking turns: tests/test_guard_object.py)."""
    found = [where(path, node) for package in ("ui", "pages", "serve", "conversation")
             for path in sorted((REPO / package).rglob("*.py")) for node in ast.walk(tree(path))
             if _calls(node, "Lock") or _calls(node, "RLock")]
    # the process cache's own bookkeeping, the import lock, the benchmark marks file's appends (only when asked for)
    allowed = {"ui/models.py", "ui/startup.py", "ui/profiling.py"}
    assert [site for site in found if site.split(":")[0] not in allowed] == []
