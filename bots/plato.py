"""PLATO-style generation: draw K diverse samples, let a separate coherence scorer pick the best.

PLATO-2 samples several responses (one per latent value) and ranks them with an evaluation model
of response coherence. Here diversity comes from sampling at several temperatures with distinct
seeds, and the ranker is a real scorer: the embedded sentence embedder's cosine similarity between
the recent context and the response (default), or an NLI checkpoint (entailment minus
contradiction probability of the response given the context). ``bots.mutual`` measures either
ranker as response selection on MuTual (see benchmarks/bench_bots.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from bots.base import Bot, BotError, Candidate, DecodingConfig, check_history
from embedded.turns import cpu_turn
from guard.records import Turn

#: Temperatures the K samples cycle through (one seed each), for diverse candidates.
DEFAULT_TEMPERATURES = (0.7, 1.0, 1.3)
DEFAULT_NUM_SAMPLES = 12


class CoherenceScorer(Protocol):
    """Scores how well each response follows the context (higher = more coherent)."""

    def score(self, context: Sequence[str], responses: Sequence[str]) -> list[float]: ...


@dataclass
class EmbeddingCoherence:
    """Cosine similarity between the embedding of the last ``window`` context turns and each response.

    The window is embedded as one text; MiniLM reads 256 word pieces, so a long window is cut at its end,
    which is why only recent turns go in.
    """

    embedder: object  # sentence_transformers.SentenceTransformer
    window: int = 2

    @classmethod
    def embedded(cls, window: int = 2) -> EmbeddingCoherence:
        from sentence_transformers import SentenceTransformer

        import embedded

        return cls(SentenceTransformer(str(embedded.embedder_path()), device="cpu"), window)

    def score(self, context: Sequence[str], responses: Sequence[str]) -> list[float]:
        if not responses:
            return []
        recent = " ".join(context[-self.window:]) if self.window else " ".join(context)
        with cpu_turn(self.embedder):
            vectors = self.embedder.encode([recent, *responses], normalize_embeddings=True, convert_to_numpy=True)
        return [float(v) for v in vectors[1:] @ vectors[0]]


@dataclass
class NLICoherence:
    """P(entailment) - P(contradiction) of each response given the last ``window`` context turns.

    ``scorer`` is a guard.models.nli.NLIScorer (e.g. guard.models.loading.load_scorer()); 2-way detectors
    give -P(contradiction).
    """

    scorer: object
    window: int = 2

    def score(self, context: Sequence[str], responses: Sequence[str]) -> list[float]:
        premise = " ".join(context[-self.window:])
        pairs = [(premise, response) for response in responses]
        with cpu_turn(self.scorer):  # the guard may share this scorer: they take turns
            contradiction = np.asarray(self.scorer.contradiction_proba(pairs), dtype=float)
            entailment = self.scorer.entailment_proba(pairs)
        entailment = np.zeros_like(contradiction) if entailment is None else np.asarray(entailment, dtype=float)
        return [float(x) for x in entailment - contradiction]


@dataclass
class PlatoBot(Bot):
    """Samples ``num_samples`` replies from ``base`` across ``temperatures`` and ranks them by coherence.

    Candidate.score is the ranker's coherence score (the quantity PLATO selects by); the base
    generator's mean token log-probability is used only to break exact ties.
    """

    base: Bot
    scorer: CoherenceScorer
    num_samples: int = DEFAULT_NUM_SAMPLES
    temperatures: Sequence[float] = DEFAULT_TEMPERATURES
    name: str = field(default="plato")

    @property
    def engine_label(self) -> str:
        return self.base.engine_label

    @property
    def reads_memory(self) -> bool:
        """The memory is handed to the base bot, where it reads one."""
        return self.base.reads_memory

    def generate(self, history: list[Turn], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = (), memory: Sequence[str] = ()) -> list[Candidate]:
        history = check_history(history)
        decoding = decoding or self.base.default_decoding
        if not decoding.samples:  # PLATO's diversity needs sampling; deterministic searches fall back to top-p
            decoding = decoding.replace(method="top_p", top_p=0.9, top_k=0, num_beams=1)
        total = max(self.num_samples, num_candidates)
        shares = [total // len(self.temperatures) + (i < total % len(self.temperatures))
                  for i in range(len(self.temperatures))]
        samples: dict[str, Candidate] = {}
        for index, (temperature, share) in enumerate(zip(self.temperatures, shares)):
            if share == 0:
                continue
            seed = None if decoding.seed is None else decoding.seed + index
            draw = decoding.replace(temperature=temperature, seed=seed, method=_sampling_method(decoding))
            remembered = {"memory": memory} if memory and self.base.reads_memory else {}
            for candidate in self.base.generate(history, share, draw, persona, **remembered):
                key = " ".join(candidate.text.lower().split())
                if key and (key not in samples or candidate.score > samples[key].score):
                    samples[key] = candidate
        if not samples:
            raise BotError(f"{self.name}: the base bot {self.base.name!r} returned only empty replies")
        pool = list(samples.values())
        coherence = self.scorer.score([m.text for m in history], [c.text for c in pool])
        ranked = sorted(zip(coherence, pool), key=lambda item: (item[0], item[1].score), reverse=True)
        return [Candidate(text=c.text, score=float(s)) for s, c in ranked[:num_candidates]]


def _sampling_method(decoding: DecodingConfig) -> str:
    # sample_rank would rank by likelihood inside the base bot; PLATO ranks by coherence instead
    return "top_k" if decoding.method == "sample_rank" else decoding.method


def make_plato_bot(base: Callable[[], Bot], ranker: str = "embedder", num_samples: int = DEFAULT_NUM_SAMPLES,
                   window: int = 2) -> PlatoBot:
    """A PLATO-style bot over the bot ``base()`` builds; ranker "embedder" (MiniLM) or "nli" (models/detector).

    ``base`` is called only once the ranker is known to be valid, so a typo fails before a model loads.
    """
    if ranker == "embedder":
        scorer: CoherenceScorer = EmbeddingCoherence.embedded(window)
    elif ranker == "nli":
        from guard.models.loading import load_scorer

        scorer = NLICoherence(load_scorer(), window)
    else:
        raise BotError(f"unknown PLATO ranker {ranker!r}; choose 'embedder' or 'nli'")
    return PlatoBot(base(), scorer, num_samples=num_samples)
