"""``cdsbias demo-model``: pre-train the small, measurably biased demo base model."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

#: The command's name before it was renamed; still accepted, with a warning.
DEPRECATED_ALIAS = "bootstrap-model"


def _corpus_language(code: str) -> str:
    """``--language``: a code with an occupational corpus, else argparse's error with the
    alias-aware suggestion (``dk`` -> ``da``, which a spelling match would miss)."""
    from cdsbias.data.occupations import LANGUAGES

    if code in LANGUAGES:
        return code
    from cdsbias.cds.languages import unknown_language_error

    raise argparse.ArgumentTypeError(
        str(unknown_language_error("occupational-corpus language", code, LANGUAGES))
    )


def register(subparsers: Any) -> None:
    from cdsbias.data.occupations import LANGUAGES
    from cdsbias.demo.base_model import AXES, DemoModelSettings

    defaults = DemoModelSettings()
    parser = subparsers.add_parser(
        "demo-model",
        aliases=[DEPRECATED_ALIAS],
        help="pre-train a small BERT with a real gender-occupation bias (offline demo base)",
        description="Pre-trains a small BERT with its own WordPiece vocabulary on sentences "
        "whose person gender follows each profession's BLS share of women, then reports "
        "the gender-profession bias it learnt. Cached: an existing model built with the same "
        "settings is reused.",
    )
    parser.add_argument("--out", type=Path, required=True, help="model folder")
    parser.add_argument("--steps", type=int, default=defaults.steps, help="training steps")
    parser.add_argument("--sentences", type=int, default=defaults.sentences)
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate)
    parser.add_argument("--hidden-size", type=int, default=defaults.hidden_size)
    parser.add_argument("--layers", type=int, default=defaults.layers)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--language", type=_corpus_language, choices=LANGUAGES, default=defaults.language,
        help="language of the occupational corpus: en (60 professions, U.S. shares of women), "
        "de (their German forms and German shares) or da (68 Danish occupations); see "
        "docs/demo.md",
    )  # fmt: skip
    parser.add_argument(
        "--axis", choices=AXES, default=defaults.axis,
        help="the planted association: gender (the occupational corpus), religion or age "
        "(plus sentences pairing each group of the axis with an invented game at skewed "
        "rates, for make demo-religion / make demo-age; English only); see docs/demo.md",
    )  # fmt: skip
    parser.add_argument(
        "--data-dir", type=Path, default=None,
        help="folder laid out like shared/data holding the de/da benchmarks' data for the "
        "report; default: the `cdsbias data fetch` cache",
    )  # fmt: skip
    parser.add_argument(
        "--force",
        action="store_true",
        help="rebuild even if cached, or when --out holds a demo model built with other "
        "settings (a folder holding anything else is never replaced)",
    )
    parser.set_defaults(func=run_demo_model)


def run_demo_model(args: argparse.Namespace) -> int:
    from cdsbias.demo.base_model import (
        REPORT_FILE,
        DemoModelSettings,
        build_demo_model,
        built_settings,
        describe,
    )
    from cdsbias.errors import CdsbiasError

    # argparse stores the name as typed, so the old alias is recognisable here.
    if getattr(args, "command", None) == DEPRECATED_ALIAS:
        print(
            f"warning: `cdsbias {DEPRECATED_ALIAS}` is deprecated; use `cdsbias demo-model`.",
            file=sys.stderr,
        )
    settings = DemoModelSettings(
        steps=args.steps, sentences=args.sentences, learning_rate=args.learning_rate,
        hidden_size=args.hidden_size,
        layers=args.layers, seed=args.seed, language=args.language, axis=args.axis,
    )  # fmt: skip
    built = built_settings(args.out) if args.out.is_dir() else None
    if not args.force and built not in (None, settings.fingerprint()):
        raise CdsbiasError(
            f"{args.out} holds a demo model built with other settings "
            f"({args.out / REPORT_FILE}); nothing was replaced. Choose another --out, or "
            "pass --force to rebuild it with these."
        )
    folder = build_demo_model(args.out, settings, force=args.force, data_dir=args.data_dir)
    print(describe(folder))
    return 0
