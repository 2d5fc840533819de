"""Evaluating the detector on the papers' data sets: the one implementation every caller shares.

``python -m guard evaluate``, the benchmarks (``benchmarks/bench_methods.py``) and anything else
that reports a number call these functions, so a metric means the same thing wherever it is
printed. Records come from ``guard.eval.datasets``; metric definitions live in ``guard.eval.metrics``;
the definitions are documented in docs/cli.md.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence

from guard.vocabulary import Method

#: Below this many records a progress bar is noise.
PROGRESS_MIN = 20


class EvaluationError(ValueError):
    """The records cannot be evaluated this way (no labels, no MuTual answers)."""


def progress(items: Sequence, desc: str, quiet: bool = False):
    """A tqdm bar on stderr (results go to stdout), hidden for short runs or when ``quiet``."""
    from tqdm import tqdm

    return tqdm(items, desc=desc, file=sys.stderr, unit="rec", mininterval=1.0,
                disable=quiet or len(items) < PROGRESS_MIN, leave=False)


def make_judge(detector: str = "embedded", method: str = "structured", threshold: float | None = None,
               checks: bool = True):
    """The guard for checkpoint ``detector`` (``guard.judge.pipeline.load_guard``) and the settings a data set is judged
    with: without the prefilter (a data set's dialogues are judged against every earlier turn), every check or
    none, τ the given one, else the checkpoint's."""
    from guard.judge.pipeline import load_guard

    guard = load_guard(detector, prefilter=False)
    return guard, guard.settings(mode="flag", method=method, threshold=threshold, prefilter=False, checks=checks)


def detect_all(guard, settings, records, quiet: bool = False) -> list:
    """The guard's verdict on every record's last turn, in order (``Guard.verdict_on_dialogue``)."""
    return [guard.verdict_on_dialogue(d, settings) for d in progress(records, "evaluate", quiet)]


def evaluate_detection(records, verdicts) -> dict:
    """DECODE's metrics for labelled dialogues, plus CDConv category accuracy and group breakdowns."""
    from guard.eval import metrics

    labelled = [(d, v) for d, v in zip(records, verdicts) if d.label is not None]
    if not labelled:
        raise EvaluationError("none of the records carries a contradiction label to evaluate against")
    y = [bool(d.label) for d, _ in labelled]
    pred = [bool(v.contradiction) for _, v in labelled]
    scores = [float(v.score) for _, v in labelled]
    result: dict = {"overall": metrics.binary_report(y, pred, scores)}
    with_evidence = [(d, v) for d, v in labelled if d.evidence is not None]
    if with_evidence and any(v.details.method == Method.STRUCTURED for _, v in with_evidence):
        gold_ev = [d.evidence for d, _ in with_evidence]
        pred_ev = [v.evidence_turn_ids if v.contradiction else [] for _, v in with_evidence]
        result["overall"]["strict_accuracy"] = metrics.strict_accuracy(
            [bool(d.label) for d, _ in with_evidence], [bool(v.contradiction) for _, v in with_evidence],
            gold_ev, pred_ev)
        contra = [(g, p) for (d, _), g, p in zip(with_evidence, gold_ev, pred_ev) if d.label]
        if contra:
            prf = metrics.evidence_prf([g for g, _ in contra], [p for _, p in contra])
            result["overall"].update({f"evidence_{k}": v for k, v in prf.items() if k != "n"})
    categorised = [(d, v) for d, v in labelled if d.category is not None]
    if categorised:
        result["overall"]["category_accuracy"] = metrics.accuracy(
            [d.category for d, _ in categorised], [v.category for _, v in categorised])
    groups: dict[str, list[int]] = defaultdict(list)
    for i, (d, _) in enumerate(labelled):
        key = d.meta.get("rgm_name") or d.meta.get("probe") or d.meta.get("kind") or d.meta.get("source")
        if key:
            groups[str(key)].append(i)
    if len(groups) > 1:
        result["groups"] = {
            name: metrics.binary_report([y[i] for i in idx], [pred[i] for i in idx], [scores[i] for i in idx])
            for name, idx in sorted(groups.items())
        }
    return result


def evaluate_dnli_ranking(records, verdicts) -> dict:
    """Welleck et al.'s Contradict@1 / Entail@1, on candidate lists built from the pairs themselves.

    DNLI's re-ranking sets need a dialogue model's candidates; from the pairs alone, the
    hypotheses that share a premise (sentence1) form a candidate list, ranked by 1 - P(contradiction).
    """
    from guard.eval import metrics

    lists: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for d, v in zip(records, verdicts):
        lists[d.turns[0].text].append((1.0 - float(v.score), d.meta.get("nli_label", "")))
    ranked = [[label for _, label in sorted(c, key=lambda x: -x[0])]
              for c in lists.values() if len(c) >= 2 and len({label for _, label in c}) >= 2]
    return {"lists": len(ranked), "contradict@1": metrics.contradict_at_k(ranked, 1),
            "entail@1": metrics.entail_at_k(ranked, 1)} if ranked else {"lists": 0}


def evaluate_nli(scorer, records, quiet: bool = False) -> dict:
    """The NLI model itself on sentence pairs: 3-way accuracy (2-way for a 2-way checkpoint)."""
    from guard.eval import metrics

    layout = scorer.layout
    names = {layout.contradiction: "contradiction"}
    if layout.entailment is not None:
        names[layout.entailment] = "entailment"
    if layout.neutral is not None:
        names[layout.neutral] = "neutral"
    pairs = [(d.turns[0].text, d.turns[1].text) for d in records]
    gold = [d.meta["nli_label"] for d in records]
    probs = []
    step = 512
    for start in progress(range(0, len(pairs), step), "nli", quiet or len(pairs) < 2000):
        probs.extend(scorer.predict_proba(pairs[start:start + step]))
    pred_idx = [int(max(range(len(p)), key=lambda k: p[k])) for p in probs]
    contra_p = [float(p[layout.contradiction]) for p in probs]
    if layout.num_labels == 3:
        out = {"nli_3way_accuracy": metrics.accuracy(gold, [names[i] for i in pred_idx])}
    else:
        out = {}
    y = [g == "contradiction" for g in gold]
    out["nli_contradiction_accuracy"] = metrics.accuracy(y, [i == layout.contradiction for i in pred_idx])
    out["nli_contradiction_auc"] = metrics.roc_auc(y, contra_p)
    out["n"] = len(pairs)
    return out


def mutual_option_scores(scorer, record, method: str) -> list[float]:
    """The ranking signal for MuTual: consistency with the context, then support from it.

    score(option) = (1 - max P(contradiction)) + max P(entailment) over the context. ``structured``
    pairs the option with every context utterance of *either* speaker (MuTual's wrong options
    misstate what the other speaker said, so same-speaker pairing would miss them);
    ``unstructured`` pairs it with the whole speaker-tagged context. 2-way checkpoints have no
    entailment class and use 1 - P(contradiction) alone.
    """
    options = record.meta["options"]
    if method == "unstructured":
        context = "\n".join(f"{t.agent_id}: {t.text}" for t in record.turns)
        premises = [context]
    else:
        premises = [t.text for t in record.turns]
    pairs = [(p, o) for o in options for p in premises]
    probs = scorer.predict_proba(pairs)
    layout = scorer.layout
    n = len(premises)
    scores = []
    for k in range(len(options)):
        block = probs[k * n:(k + 1) * n]
        score = 1.0 - float(block[:, layout.contradiction].max())
        if layout.entailment is not None:
            score += float(block[:, layout.entailment].max())
        scores.append(score)
    return scores


#: How evaluate_mutual ranks options, reported next to its numbers.
MUTUAL_SIGNAL = "(1 - max P(contradiction)) + max P(entailment) of the option against the context"


def evaluate_mutual(scorer, records, method: str, quiet: bool = False) -> dict:
    """MuTual response selection (R@1, R@2, MRR) of the labelled records, options ranked by the NLI signal."""
    from guard.eval import metrics

    labelled = [d for d in records if d.meta.get("answer") is not None]
    if not labelled:
        raise EvaluationError("the MuTual file has no answers (the test split is unlabelled); use train or dev")
    scores = [mutual_option_scores(scorer, d, method) for d in progress(labelled, "mutual", quiet)]
    return {"overall": metrics.response_selection([d.meta["answer"] for d in labelled], scores),
            "signal": MUTUAL_SIGNAL}


def evaluate_dataset(fmt: str, records, detector: str = "embedded", method: str = "structured",
                     threshold: float | None = None, checks: bool = True, quiet: bool = False) -> dict:
    """Everything ``python -m guard evaluate`` reports for records of format ``fmt``.

    MuTual is response selection and SNLI the NLI model alone (both use the checkpoint, no
    threshold); every other format is detection with DECODE's metrics (``threshold`` in the
    result), DNLI adding the NLI accuracy and the Contradict@1 / Entail@1 ranking.
    """
    from guard.models.loading import load_scorer

    if fmt == "mutual":
        return evaluate_mutual(load_scorer(detector), records, method, quiet)
    if fmt == "snli":
        return {"overall": evaluate_nli(load_scorer(detector), records, quiet)}
    guard, settings = make_judge(detector, method, threshold, checks)
    verdicts = detect_all(guard, settings, records, quiet)
    result = {"threshold": settings.threshold, **evaluate_detection(records, verdicts)}
    if fmt == "dnli":
        result["overall"].update(evaluate_nli(guard.scorer, records, True))
        result["ranking"] = evaluate_dnli_ranking(records, verdicts)
    return result
