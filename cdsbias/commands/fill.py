"""``cdsbias fill MODEL "SENTENCE"``: what a masked LM puts at one ``[MASK]``."""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``fill`` command."""
    parser = subparsers.add_parser(
        "fill",
        help="probe one [MASK]: target probabilities, their ratio, top-k predictions",
        description="Probability of given words at the single [MASK] of a sentence (multi-piece "
        "words by the chain rule), their difference and ratio, and the model's top-k tokens. "
        "With --attribute, also the two-sentence log-probability bias of Kurita et al. (2019): "
        "ln(P(a|x shown)/P(a|x masked)) - ln(P(b|x shown)/P(b|x masked)).",
    )
    parser.add_argument("model", metavar="MODEL", help="hub id or local folder of a masked LM")
    parser.add_argument("sentence", metavar="SENTENCE", help="text with one [MASK], in quotes")
    parser.add_argument("--targets", help="comma-separated words to score at the mask, e.g. he,she")
    parser.add_argument("--top-k", type=int, default=10, help="top-k tokens to show (default 10)")
    parser.add_argument(
        "--attribute",
        help="a word of SENTENCE to mask for the prior; needs exactly two --targets",
    )
    parser.add_argument("--device", help="cpu, cuda, cuda:1, mps (default: best available)")
    parser.add_argument("--revision", help="model revision (branch, tag or commit)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Runs the probe and prints the result."""
    from cdsbias.benchmarks.kurita_probe import log_probability_bias
    from cdsbias.errors import CdsbiasError
    from cdsbias.scoring import MaskedLMScorer
    from cdsbias.scoring.probes import fill

    targets = [t.strip() for t in (args.targets or "").split(",") if t.strip()]
    if args.top_k < 0:
        raise CdsbiasError(f"--top-k must be 0 or more, got {args.top_k}.")
    if args.attribute and len(targets) != 2:
        raise CdsbiasError("--attribute needs exactly two --targets, e.g. --targets he,she.")
    scorer = MaskedLMScorer.from_pretrained(args.model, device=args.device, revision=args.revision)
    result = fill(scorer, args.sentence, targets, top_k=args.top_k)
    probe = (
        log_probability_bias(scorer, args.sentence, (targets[0], targets[1]), args.attribute)
        if args.attribute
        else None
    )
    if args.json:
        payload = result.as_dict()
        if probe is not None:
            payload["bias"] = probe.__dict__
        print(json.dumps(payload, indent=2, default=_json_number))
        return 0
    print(f"sentence: {args.sentence}")
    if result.targets:
        print(f"\n{'target':<16}{'P':>12}{'ln P':>10}  pieces")
        for t in result.targets:
            print(f"{t.word:<16}{t.prob:>12.4e}{t.log_prob:>10.3f}  {' '.join(t.pieces)}")
    if result.ratio is not None:
        first, second = result.targets
        print(
            f"\nP({first.word}) - P({second.word}) = {result.difference:.4e}   "
            f"P({first.word}) / P({second.word}) = {result.ratio:.4g}   "
            f"ln ratio = {result.log_ratio:.3f}"
        )
    if probe is not None:
        print(
            f"\nbias of '{probe.attribute}' towards {probe.a} vs {probe.b}: {probe.score:.3f}"
            f"  (shown {probe.log_ratio_shown:.3f} - masked {probe.log_ratio_masked:.3f})"
        )
    if result.top_k:
        print(f"\n{'rank':<6}{'token':<20}{'P':>12}")
        for rank, p in enumerate(result.top_k, start=1):
            print(f"{rank:<6}{p.token:<20}{p.prob:>12.4e}")
    return 0


def _json_number(value: object) -> object:
    if hasattr(value, "item"):
        return value.item()  # type: ignore[attr-defined]
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
