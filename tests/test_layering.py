"""The house's layers, read from the code's own imports (every import statement, also inside functions and
``TYPE_CHECKING`` blocks), so an arrow that runs up fails here rather than in a review:

    app.py, pages/  ->  ui/  ->  studio/  ->  conversation/  ->  bots/  ->  guard/
                        serve/  ->  conversation/  ->  bots/  ->  guard/

(``embedded/`` is below them all.) The UI is imported only by the app, its pages and the tests; the guard
imports neither the generators nor anything above them. The OpenAI-compatible server (``serve/``) stands beside
the studio and the UI: it uses the guarded conversation, and nothing but the tests and benchmarks imports it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

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


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every absolute import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
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
