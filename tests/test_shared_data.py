"""The one place that finds the shared evaluation data: env override, default beside the checkout, None."""

from __future__ import annotations

import embedded


def test_environment_variable_names_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARD_SHARED_DATA", str(tmp_path))
    assert embedded.shared_data_dir() == tmp_path


def test_missing_folder_gives_none(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARD_SHARED_DATA", str(tmp_path / "absent"))
    assert embedded.shared_data_dir() is None


def test_default_is_shared_data_beside_the_checkout(tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.delenv("GUARD_SHARED_DATA", raising=False)
    monkeypatch.setattr(embedded, "REPO_ROOT", checkout)
    assert embedded.shared_data_dir() == tmp_path / "shared" / "data"
    monkeypatch.setattr(embedded, "REPO_ROOT", tmp_path / "elsewhere" / "checkout")
    assert embedded.shared_data_dir() is None


def test_empty_variable_falls_back_to_the_default(monkeypatch):
    monkeypatch.setenv("GUARD_SHARED_DATA", "")
    expected = embedded.REPO_ROOT.parent / "shared" / "data"
    assert embedded.shared_data_dir() == (expected if expected.is_dir() else None)

