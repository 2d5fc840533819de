"""How idle OpenMP threads wait: a bounded spin by default, the user's OMP_WAIT_POLICY always respected."""

from __future__ import annotations

import os
from pathlib import Path

import embedded

REPO = Path(__file__).resolve().parent.parent


def test_bounded_spin_by_default(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    embedded.configure_openmp()
    assert os.environ["GOMP_SPINCOUNT"] == embedded.DEFAULT_GOMP_SPINCOUNT


def test_user_choices_are_kept(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    embedded.configure_openmp()
    assert "GOMP_SPINCOUNT" not in os.environ  # PASSIVE alone decides: threads sleep at once
    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setenv("GOMP_SPINCOUNT", "500")
    embedded.configure_openmp()
    assert os.environ["GOMP_SPINCOUNT"] == "500"


def _statements_before_configure(path: Path) -> list[str]:
    """Modules imported at top level before ``configure_openmp()`` is called in ``path``."""
    import ast

    imported = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                getattr(node.value.func, "id", "") == "configure_openmp":
            return imported
        if isinstance(node, ast.Import):
            imported += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            imported.append(node.module or "")
    raise AssertionError(f"{path} never calls configure_openmp()")


def test_entry_points_configure_openmp_before_loading_anything_heavy():
    """libgomp reads its settings once, when torch loads it: the entry points must set them first."""
    light = {"__future__", "os", "sys", "embedded"}
    for entry in ("app.py", "bots/__main__.py"):
        assert set(_statements_before_configure(REPO / entry)) <= light, entry
