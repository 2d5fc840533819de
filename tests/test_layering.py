"""The house's layers, read from the code's own imports (every import statement, also inside functions and
``TYPE_CHECKING`` blocks), so an arrow that runs up fails here rather than in a review:

    app.py, pages/  ->  ui/  ->  studio/  ->  conversation/  ->  bots/  ->  guard/
                        serve/  ->  conversation/  ->  bots/  ->  guard/

(``embedded/`` is below them all.) The UI is imported only by the app, its pages and the tests; the guard
imports neither the generators nor anything above them. The OpenAI-compatible server (``serve/``) stands beside
the studio and the UI: it uses the guarded conversation, and nothing but the tests and benchmarks imports it.

Inside ``guard/`` the rooms stand the same way (``GUARD_ROOMS``, lowest first): records, vocabulary, config and files
(beside all) <- language and models (which import neither each other) <- judge <- eval <- cli <- training;
``guard/language/grammar.py``, the bottom of the language room, imports nothing of the guard, and no guard module
reaches itself again through its imports (a circle is an import that only works while it stays inside a function).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

import networkx as nx  # a dependency of torch (requirements.txt)
import pytest

REPO = Path(__file__).resolve().parent.parent
UI = {"ui", "pages", "app", "streamlit"}
#: Everything but the app, its pages and the tests: none of it may import the UI.
BELOW_THE_UI = ("guard", "bots", "conversation", "studio", "embedded", "harness", "benchmarks", "serve")
#: package -> the packages above it, which it must not import
ABOVE = {
    "guard": {"bots", "conversation", "studio", "serve"},
    "bots": {"conversation", "studio", "serve"},
    "conversation": {"studio", "serve"},
    "embedded": {"guard", "bots", "conversation", "studio", "serve"},
    "studio": {"serve"},
    "ui": {"serve"},
    "pages": {"serve"},
    "serve": {"studio"},
}


def imported_modules(path: Path, package: str = "", modules: Collection[str] = ()) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, also inside functions and ``TYPE_CHECKING`` blocks.

    ``from a import b`` names ``a.b`` when that is one of ``modules`` (a submodule imported by name), else ``a``; a
    relative import is resolved against ``package`` (the file's own package), and skipped when none is given."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                module = node.module or ""
            elif package:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                continue
            found += sorted({(node.lineno, f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module)
                             for alias in node.names})
    return found


def violations(package: str, forbidden: set[str]) -> list[str]:
    return [f"{path.relative_to(REPO)}:{line} imports {module}"
            for path in sorted((REPO / package).rglob("*.py"))
            for line, module in imported_modules(path) if module.split(".")[0] in forbidden]


def test_the_walk_sees_imports_inside_functions_and_type_checking_blocks(tmp_path):
    source = tmp_path / "example.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ui.render\n"
                      "def f():\n    from streamlit import cache_resource\n")
    assert [m for _, m in imported_modules(source)] == ["typing", "ui.render", "streamlit"]


@pytest.mark.parametrize("package", BELOW_THE_UI)
def test_nothing_below_the_ui_imports_it(package):
    assert violations(package, UI) == []


def test_the_guard_imports_neither_the_generators_nor_the_studio():
    assert violations("guard", {"bots", "studio"}) == []


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_every_layer_imports_only_the_layers_below_it(package):
    assert violations(package, ABOVE[package]) == []


def test_importing_the_store_loads_neither_the_ui_nor_pandas_nor_torch():
    script = "import json, sys\nimport studio.storage, conversation.guarding\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    loaded = {name.split(".")[0] for name in json.loads(done.stdout.strip().splitlines()[-1])}
    assert not loaded & {"ui", "pages", "streamlit", "pandas", "torch"}


def test_nothing_but_the_tests_and_benchmarks_imports_the_server():
    app = [f"app.py:{line} imports {module}" for line, module in imported_modules(REPO / "app.py")
           if module.split(".")[0] == "serve"]
    assert app == []


#: the rooms inside guard/, lowest first; a module imports only its own room's modules and rooms of lower levels
#: (the rooms of one level import neither each other). "beside": the package itself, records, vocabulary, config,
#: files; "cli": cli and __main__ (``python -m guard``).
GUARD_ROOMS: tuple[tuple[str, ...], ...] = (("beside",), ("language", "models"), ("judge",), ("eval",), ("cli",),
                                            ("training",))
BESIDE = {"records", "vocabulary", "config", "files"}
LEVEL = {room: level for level, rooms in enumerate(GUARD_ROOMS) for room in rooms}


def guard_modules(root: Path) -> dict[str, Path]:
    """Every module of ``root``'s guard/ by its dotted name (a package by its own name, not ``__init__``)."""
    modules = {}
    for path in sorted((root / "guard").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def guard_graph(root: Path = REPO) -> dict[str, set[str]]:
    """Each guard module -> the guard modules it imports (anywhere in the file, relative imports resolved)."""
    modules = guard_modules(root)
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {module for _, module in imported_modules(path, package, modules)
                       if module == "guard" or module.startswith("guard.")}
    return graph


def room_of(module: str) -> str | None:
    """The room a guard module stands in (``GUARD_ROOMS``), or None for one in no room."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in BESIDE:
        return "beside"
    room = "cli" if parts[1] in ("cli", "__main__") else parts[1]
    return room if room in LEVEL else None


def room_violations(graph: dict[str, set[str]]) -> list[str]:
    """Modules in no room, and imports that run up or sideways between rooms."""
    found = []
    for importer, imported in sorted(graph.items()):
        here = room_of(importer)
        if here is None:
            found.append(f"{importer} stands in no room of GUARD_ROOMS")
            continue
        for module in sorted(imported):
            there = room_of(module)
            if there is not None and there != here and LEVEL[there] >= LEVEL[here]:
                found.append(f"{importer} ({here}) imports {module} ({there})")
    return found


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of imports among the guard's modules (each as the modules around it)."""
    return sorted(sorted(cycle) for cycle in nx.simple_cycles(
        nx.DiGraph([(importer, module) for importer, imported in graph.items() for module in imported])))


def test_the_guards_rooms_import_only_rooms_below_them():
    assert room_violations(guard_graph()) == []


def test_grammar_imports_nothing_of_the_guard():
    assert guard_graph()["guard.language.grammar"] == set()


def test_no_guard_module_imports_itself_through_others():
    assert import_circles(guard_graph()) == []


def test_the_room_checks_find_imports_planted_inside_functions_type_checking_and_relative(tmp_path):
    for path in guard_modules(REPO).values():
        copy = tmp_path / path.relative_to(REPO)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    clean = guard_graph(tmp_path)
    assert clean == guard_graph() and room_violations(clean) == [] and import_circles(clean) == []

    def plant(module: str, source: str) -> None:
        path = tmp_path / (module.replace(".", "/") + ".py")
        path.write_text(path.read_text(encoding="utf-8") + source, encoding="utf-8")

    plant("guard.language.grammar", "\n\ndef planted():\n    from guard.language import text\n")  # text imports grammar
    plant("guard.models.nli", "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import guard.language.answers\n")
    plant("guard.records", "\n\ndef planted():\n    from .judge import pipeline\n")
    plant("guard.eval.metrics", "\nfrom guard import cli\n")
    (tmp_path / "guard" / "loose.py").write_text("import json\n", encoding="utf-8")
    graph = guard_graph(tmp_path)
    assert graph["guard.language.grammar"] == {"guard.language.text"}
    assert room_violations(graph) == [
        "guard.eval.metrics (eval) imports guard.cli (cli)",
        "guard.loose stands in no room of GUARD_ROOMS",
        "guard.models.nli (models) imports guard.language.answers (language)",
        "guard.records (beside) imports guard.judge.pipeline (judge)",
    ]
    assert ["guard.language.grammar", "guard.language.text"] in import_circles(graph)
