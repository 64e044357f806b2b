"""The religion and age demos' corpus and before/after report (``make demo-religion``,
``make demo-age``).

Usage:
    python scripts/demo_religion.py corpus --out runs/demo-religion/corpus.jsonl
    python scripts/demo_religion.py corpus --axis age --out runs/demo-age/corpus.jsonl
    python scripts/demo_religion.py report --base runs/demo-religion/base \\
        --run runs/demo-religion/run [--json OUT.json]

``corpus`` writes the fine-tuning text as JSON lines (``id``, ``text``): new occupational
sentences (seed 1, as ``recipes/demo.yaml`` draws them) and sentences of the axis with the
planted game shares (cdsbias.demo.religion, cdsbias.demo.age), the same mix the demo model
was built from. ``report`` reads the axis from the run's ``bias_axis``.

``report`` prints the known answer and what was measured, before (the demo model) and after
(the fine-tuned run): the religion probe's own-game gap per group (cdsbias.demo.
association_probe), the held-out MLM loss on the original text, and every benchmark the run
scored at its first and last point (BEC-Pro's gender gap, CrowS-Pairs' religion slice, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from cdsbias.demo.association_probe import PLANTED, planted
from cdsbias.demo.religion import attribute_shares, augmentation_weights, expected_gap
from cdsbias.errors import CdsbiasError
from cdsbias.io import atomic_write_text

#: Occupational sentences of the fine-tuning corpus (recipes/demo.yaml's count) and its seed.
SENTENCES = 20000
SEED = 1


def write_corpus(
    out: Path, sentences: int = SENTENCES, seed: int = SEED, axis: str = "religion"
) -> int:
    """Writes the fine-tuning corpus to ``out`` (temp file, then rename); returns its rows."""
    texts = planted(axis).demo_corpus(sentences, seed)
    lines = [json.dumps({"id": f"{axis}-demo-{i}", "text": t}) for i, t in enumerate(texts)]
    atomic_write_text(out, "\n".join(lines) + "\n")
    return len(lines)


def _probe(folder: Path, axis: str) -> dict[str, Any]:
    from cdsbias.demo.association_probe import probe
    from cdsbias.scoring import MaskedLMScorer

    return probe(MaskedLMScorer.from_pretrained(str(folder), batch_size=256), axis).as_dict()


def _known_answers(recipe: dict[str, Any], k: int) -> dict[str, float]:
    shares = attribute_shares(k)
    answers = {"planted (original corpus)": expected_gap(shares)}
    mode = recipe.get("cds_mode", "cds")
    counterfactuals = recipe.get("cds_counterfactuals", "one")
    try:
        weights = augmentation_weights(
            mode, counterfactuals, float(recipe.get("cds_probability", 1.0)), k
        )
    except ValueError:
        return answers
    answers[f"the fine-tuning text ({mode}, counterfactuals {counterfactuals})"] = expected_gap(
        shares, *weights
    )
    return answers


def report(base: Path, run: Path) -> dict[str, Any]:
    """The before/after numbers of a finished run of ``recipes/demo_religion.yaml`` or
    ``recipes/demo_age.yaml``."""
    from cdsbias.runs.folder import RunFolder
    from cdsbias.runs.points import before_after, read_points

    points = read_points(run)
    if not points:
        raise CdsbiasError(f"{run} has no evaluated points; run the demo's recipe first.")
    recipe = RunFolder(run).recipe()
    axis = recipe.get("bias_axis") or "religion"
    if axis not in PLANTED:
        raise CdsbiasError(
            f"{run} mitigates bias_axis '{axis}', which has no planted association; the "
            f"demos plant one on {', '.join(PLANTED)}."
        )
    before, after = _probe(base, axis), _probe(run, axis)
    change = before_after(points)
    benchmarks = {
        name: [(metric.key, old, new) for metric, old, new in rows]
        for name, rows in change["benchmarks"].items()
    }
    return {
        "axis": recipe.get("bias_axis"),
        "known_gap": _known_answers(recipe, len(before["groups"])),
        "probe_before": before,
        "probe_after": after,
        "heldout_loss": change.get("heldout_loss"),
        "steps": (change["first_step"], change["last_step"]),
        "benchmarks": benchmarks,
    }


def format_report(result: dict[str, Any]) -> str:
    """The report as the table ``make demo-religion`` / ``make demo-age`` prints."""
    before, after = result["probe_before"], result["probe_after"]
    first, last = result["steps"]
    lines = [
        f"{result['axis']} probe: own-game gap ln P(a_g | g) − mean ln P(a_g | other group), nats"
    ]
    lines += [
        f"  known answer, {what}: {value:+.3f}" for what, value in result["known_gap"].items()
    ]
    lines.append(f"{'':40}{'before':>10}{'after':>10}   (steps {first} → {last})")
    lines.append(f"{'  probe gap, mean of groups':40}{before['gap']:>+10.3f}{after['gap']:>+10.3f}")
    for group, old in before["per_group_gap"].items():
        new = after["per_group_gap"][group]
        lines.append(f"{'    ' + group:40}{old:>+10.3f}{new:>+10.3f}")
    if result["heldout_loss"]:
        old, new = result["heldout_loss"]
        lines.append(
            f"{'held-out MLM loss (original text)':40}{old:>10.4f}{new:>10.4f}"
            f"   ({new / old - 1:+.1%})"
        )
    for name, rows in result["benchmarks"].items():
        for key, old, new in rows:
            shown = [
                f"{v:>10.3f}" if isinstance(v, (int, float)) else f"{'—':>10}" for v in (old, new)
            ]
            lines.append(f"{(name + ': ' + key)[:39]:40}{''.join(shown)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    corpus = commands.add_parser("corpus", help="write the fine-tuning corpus (JSON lines)")
    corpus.add_argument("--out", type=Path, required=True)
    corpus.add_argument(
        "--axis",
        choices=sorted(PLANTED),
        default="religion",
        help="the planted association's axis (default: religion)",
    )
    shown = commands.add_parser("report", help="print the before/after numbers")
    shown.add_argument("--base", type=Path, required=True, help="the demo model")
    shown.add_argument("--run", type=Path, required=True, help="the fine-tuned run folder")
    shown.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args(argv)
    try:
        if args.command == "corpus":
            rows = write_corpus(args.out, axis=args.axis)
            print(f"wrote {rows} sentences to {args.out}")
            return 0
        for folder in (args.base, args.run):
            if not (folder / "config.json").exists():
                raise CdsbiasError(f"{folder} holds no model (no config.json); build it first.")
        result = report(args.base, args.run)
    except CdsbiasError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(result))
    if args.json:
        atomic_write_text(args.json, json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
