"""The NLI cross-encoder through ONNX Runtime, int8: the guard's scoring on an ordinary laptop CPU.

On a CPU without bfloat16 (most laptops) torch runs the cross-encoder in float32. ONNX Runtime runs it with the
attention projections dynamically quantised to int8 (``onnxruntime.quantization.quantize_dynamic``: 7-bit weights
per output channel, which AVX2's int16 accumulators cannot saturate, activations quantised on the fly) and the
feed-forward layers in float32 (``feed_forward_projections`` says why), within half a point of float32 accuracy.
A checkpoint is exported once (``torch.onnx.export``), quantised, and cached under ``GUARD_CACHE_DIR/onnx``, keyed
by a hash of its weights, its config and the quantisation recipe, written to a temporary folder and renamed, so an
interrupted export leaves nothing half-written. A checkpoint may carry its own export (``SHIPPED``, written by
``python -m guard.training ship-onnx FOLDER``): the embedded detector does, so a new machine's first reply does not
wait for the export (5 s on 2 AVX2 cores), and it is used only while its recorded hash is the checkpoint's.
Tokenisation and the label layout are the torch scorer's own (``guard.models.nli``): only the forward pass changes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from guard.models.nli import LabelLayout, _ClassProbabilities

#: runtimes a scorer can run on (``guard.models.loading.load_scorer(runtime=...)``)
RUNTIMES = ("torch", "onnx-int8")
_MODEL_FILE = "model.int8.onnx"
#: the sub-folder of a checkpoint that holds its shipped export: the model, its input names and the hash it was built for
SHIPPED = "onnx-int8"
_DIGEST_FILE = "digest.txt"
#: changes whenever the export or the quantisation changes, so older cached exports are not reused
RECIPE = "attention-int8-reduce-range-v1"


class OnnxRuntimeError(RuntimeError):
    """The int8 runtime could not be built or loaded; the message says what to do instead."""


def checkpoint_digest(folder: Path) -> str:
    """A hash of a checkpoint's weights and config and of the recipe: the export cache's key."""
    digest = hashlib.sha256(RECIPE.encode())
    for name in sorted(os.listdir(folder)):
        if name.endswith((".safetensors", ".bin")) or name == "config.json":
            digest.update(name.encode())
            digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


def export_int8(folder: Path, into: Path) -> Path:
    """Export ``folder``'s sequence classifier to ONNX and quantise it to int8, writing into the folder ``into``."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    into.mkdir(parents=True, exist_ok=True)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForSequenceClassification.from_pretrained(str(folder), dtype=torch.float32).eval()
        sample = tokenizer(["a short premise"], ["a hypothesis"], return_tensors="pt")
        names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in sample]
        axes = {k: {0: "batch", 1: "sequence"} for k in names}
        with torch.inference_mode():
            torch.onnx.export(model, tuple(sample[k] for k in names), str(into / "model.onnx"),
                              input_names=names, output_names=["logits"],
                              dynamic_axes={**axes, "logits": {0: "batch"}}, opset_version=17, dynamo=False)
        quantize_dynamic(str(into / "model.onnx"), str(into / _MODEL_FILE), weight_type=QuantType.QInt8,
                         per_channel=True, reduce_range=True,
                         nodes_to_exclude=feed_forward_projections(into / "model.onnx"))
        (into / "model.onnx").unlink()
        (into / "inputs.txt").write_text("\n".join(names) + "\n")
    except Exception as exc:
        raise OnnxRuntimeError(f"could not export {folder} to int8 ONNX ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''}); use runtime='torch'") from exc
    return into


def feed_forward_projections(onnx_file: Path) -> list[str]:
    """The MatMul nodes of each block's feed-forward layers (``.../intermediate/dense``, ``.../output/dense``).

    They stay float32; the attention projections (q, k, v, o) are quantised. Measured on DECODE dev's odd half
    (2,135 pairs, docs/experiments/2026-11-24-detector-v3.md): with every projection in int8, 8-bit weights
    saturate AVX2's int16 accumulators (mpnet at chance); with 7-bit weights (``reduce_range``) mpnet's accuracy
    fell 1.0 point, the feed-forward output projection's GELU inputs being the widest. Attention-only keeps both
    detectors within 0.5 point of float32 (mpnet -0.1, MiniLM +0.4).
    """
    import onnx

    graph = onnx.load(str(onnx_file), load_external_data=False).graph
    return [n.name for n in graph.node if n.op_type in ("MatMul", "Gemm") and "/attention/" not in n.name
            and ("/output/dense/" in n.name or "/intermediate/dense/" in n.name)]


def cached_int8_model(folder: Path) -> Path:
    """The int8 ONNX export of a checkpoint folder: the one it ships when that was built from these very weights
    (``shipped_int8_model``), else the one built on first use and once (``embedded.once.build_once``: two processes
    that start together would otherwise write the same folder, and one would read the other's half-written model,
    "Failed to find proper ai.onnx domain"; the second waits and finds it built)."""
    from embedded import cache_dir
    from embedded.once import build_once

    folder = Path(folder)
    digest = checkpoint_digest(folder)
    shipped = shipped_int8_model(folder, digest)
    if shipped is not None:
        return shipped
    return build_once(cache_dir() / "onnx" / f"{folder.name}-{digest}",
                      lambda staging: export_int8(folder, staging), _is_whole, fix="use runtime='torch'")


def shipped_int8_model(folder: Path, digest: str) -> Path | None:
    """``folder``'s shipped export when it is whole and was built for ``digest`` (the weights, config and recipe
    hashed now); None otherwise, so retrained weights or a changed recipe are exported afresh, never scored with a
    stale export."""
    shipped = Path(folder) / SHIPPED
    if not (_is_whole(shipped) and (shipped / _DIGEST_FILE).is_file()):
        return None
    return shipped if (shipped / _DIGEST_FILE).read_text().strip() == digest else None


def ship_int8(folder: Path) -> Path:
    """Export ``folder``'s checkpoint into its ``SHIPPED`` sub-folder with the hash it was built for (replacing an
    older one): what a release commits beside the weights."""
    import shutil
    import tempfile

    folder = Path(folder)
    with tempfile.TemporaryDirectory(prefix="ship-onnx.") as staging:
        export_int8(folder, Path(staging) / SHIPPED)
        (Path(staging) / SHIPPED / _DIGEST_FILE).write_text(checkpoint_digest(folder) + "\n")
        shutil.rmtree(folder / SHIPPED, ignore_errors=True)
        shutil.copytree(Path(staging) / SHIPPED, folder / SHIPPED)
    return folder / SHIPPED


def _is_whole(built: Path) -> bool:
    return (built / _MODEL_FILE).is_file() and (built / "inputs.txt").is_file()


class OnnxNLIScorer(_ClassProbabilities):
    """Scores (premise, hypothesis) pairs with an int8 ONNX export of an NLI cross-encoder, in batches."""

    def __init__(self, session, input_names: Sequence[str], tokenizer, layout: LabelLayout, max_length: int = 128,
                 batch_size: int = 64, name: str = "") -> None:
        self.session = session
        self.input_names = tuple(input_names)
        self.tokenizer = tokenizer
        self.layout = layout
        self.max_length = max_length
        self.batch_size = batch_size
        self.name = name
        self.runtime = "onnx-int8"

    @classmethod
    def from_checkpoint(cls, folder: str | Path, max_length: int = 128, batch_size: int = 64, threads: int | None = None,
                        name: str = "", contradiction_label: str | int | None = None) -> OnnxNLIScorer:
        """Load (exporting once) the int8 model of a local checkpoint folder; labels are read by name."""
        import onnxruntime as ort
        from transformers import AutoConfig, AutoTokenizer

        folder = Path(folder)
        if not (folder / "config.json").exists():
            raise OnnxRuntimeError(f"{folder} is not a local checkpoint folder (no config.json); the int8 runtime "
                                   "exports local checkpoints only: use runtime='torch' for a hub name")
        exported = cached_int8_model(folder)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or _torch_threads()
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(exported / _MODEL_FILE), options, providers=["CPUExecutionProvider"])
        input_names = (exported / "inputs.txt").read_text().split()
        layout = LabelLayout.from_id2label(AutoConfig.from_pretrained(str(folder)).id2label, contradiction_label)
        return cls(session, input_names, AutoTokenizer.from_pretrained(str(folder)), layout, max_length=max_length,
                   batch_size=batch_size, name=name or str(folder))

    def predict_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax over the checkpoint's own labels, shape (len(pairs), num_labels)."""
        if len(pairs) == 0:
            return np.zeros((0, self.layout.num_labels), dtype=np.float32)
        out = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start:start + self.batch_size]
            enc = self.tokenizer([p for p, _ in chunk], [h for _, h in chunk], padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="np")
            logits = self.session.run(None, {k: enc[k].astype(np.int64) for k in self.input_names})[0]
            logits = logits - logits.max(axis=-1, keepdims=True)
            probs = np.exp(logits)
            out.append((probs / probs.sum(axis=-1, keepdims=True)).astype(np.float32))
        return np.concatenate(out, axis=0)


def _torch_threads() -> int:
    """The thread count torch would use here (the project's one setting for CPU threads)."""
    import torch

    return torch.get_num_threads()
