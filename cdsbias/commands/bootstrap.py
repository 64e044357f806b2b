"""``cdsbias bootstrap-model``: pre-train the small, measurably biased demo base model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from cdsbias.bootstrap import BootstrapSettings

    defaults = BootstrapSettings()
    parser = subparsers.add_parser(
        "bootstrap-model",
        help="pre-train a small BERT with a real gender-occupation bias (offline demo base)",
        description="Pre-trains a small BERT with its own WordPiece vocabulary on sentences "
        "whose person gender follows each profession's BLS share of women, then reports "
        "its BEC-Pro bias. Cached: an existing model built with the same settings is reused.",
    )
    parser.add_argument("--out", type=Path, required=True, help="model folder")
    parser.add_argument("--steps", type=int, default=defaults.steps, help="training steps")
    parser.add_argument("--sentences", type=int, default=defaults.sentences)
    parser.add_argument("--hidden-size", type=int, default=defaults.hidden_size)
    parser.add_argument("--layers", type=int, default=defaults.layers)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.set_defaults(func=run_bootstrap)


def run_bootstrap(args: argparse.Namespace) -> int:
    from cdsbias.bootstrap import BootstrapSettings, bootstrap_model

    settings = BootstrapSettings(
        steps=args.steps, sentences=args.sentences, hidden_size=args.hidden_size,
        layers=args.layers, seed=args.seed,
    )  # fmt: skip
    folder = bootstrap_model(args.out, settings, force=args.force)
    report = json.loads((folder / "bootstrap_report.json").read_text())
    becpro = report["becpro"]
    print(f"bootstrap model: {folder} (trained in {report['train_seconds']:.0f} s)")
    print(
        f"BEC-Pro gap: male professions {becpro['gap_male_professions']:+.3f}, female "
        f"professions {becpro['gap_female_professions']:+.3f}, balanced "
        f"{becpro['gap_balanced_professions']:+.3f} nats; profession-level p = "
        f"{becpro['profession_test_p']:.3g}"
    )
    return 0
