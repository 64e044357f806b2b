"""Times this checkout's CDS engines against another checkout's in the same process.

Usage:
    python scripts/bench_cds_against.py /work/main [--rounds 20] [--corpora en,en-neutral]
        [--data-dir ../shared/data]

A shared machine's load changes from one process to the next by more than the few percent
a change to the rules costs, so two runs of ``bench_cds.py`` cannot compare two versions.
This script copies the other checkout's ``cdsbias`` package into a temporary folder under
another name (``cdsbias_baseline``, imports rewritten), imports both, builds each
corpus's engine from each (the corpora of ``bench_cds.py``: GAP text for ``en`` and
``en-neutral``, BEC-Pro and German prose for ``de``/``de-dense``, genda-lens for ``da``),
and times ``substitute_many`` over the texts with each in turn, ``--rounds`` times, the
first of each pair alternating, in CPU seconds of this process. Printed per corpus: the
best words/s of each, the ratio of the bests and the median (and quartiles) of the
per-round ratios (baseline time / this time: below 1 is slower). The same engine against
itself gives 1.00 +- 0.02 on a machine at load 8 (median of 16 paired ratios).
``--skips`` times ``edits_many`` collecting the skips instead, the path of ``cdsbias cds``
and its report (``substitute_many`` is the training path's).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import bench_cds

from cdsbias.cds import build_substituter
from cdsbias.cds.forms import GenderForms

BASELINE = "cdsbias_baseline"


def import_baseline(checkout: Path, folder: Path):
    """Copies ``checkout``'s cdsbias into ``folder`` as :data:`BASELINE` and imports it."""
    target = folder / BASELINE
    shutil.copytree(checkout / "cdsbias", target, ignore=shutil.ignore_patterns("__pycache__"))
    pattern = re.compile(r"\bcdsbias(?=[.\s])")
    for path in target.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(pattern.sub(BASELINE, text), encoding="utf-8")
    sys.path.insert(0, str(folder))
    return importlib.import_module(f"{BASELINE}.cds"), importlib.import_module(
        f"{BASELINE}.cds.forms"
    )


def paired_times(
    engines: tuple, texts: list[str], rounds: int, *, skips: bool = False
) -> tuple[list, list]:
    """CPU seconds of ``substitute_many`` (or, with ``skips``, of ``edits_many`` collecting
    the skips, as ``cdsbias cds`` does for its report) for (baseline, this), in turn,
    ``rounds`` times."""
    times: tuple[list, list] = ([], [])
    for round_number in range(rounds):
        order = (0, 1) if round_number % 2 == 0 else (1, 0)
        for which in order:
            started = time.process_time()
            if skips:
                engines[which].edits_many(texts, skipped=[])
            else:
                engines[which].substitute_many(texts)
            times[which].append(time.process_time() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path, help="the other checkout (its root folder)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--corpora", default="en,en-neutral,de,de-dense,da")
    parser.add_argument(
        "--skips", action="store_true", help="collect the skips, as `cdsbias cds` does"
    )
    default_data = Path(
        os.environ.get("CDSBIAS_SHARED_DATA", bench_cds.REPO.parent / "shared" / "data")
    )
    parser.add_argument("--data-dir", type=Path, default=default_data)
    args = parser.parse_args()
    if not (args.baseline / "cdsbias" / "__init__.py").is_file():
        raise SystemExit(f"error: {args.baseline} holds no cdsbias package; give a checkout")
    with tempfile.TemporaryDirectory() as folder:
        base_cds, base_forms = import_baseline(args.baseline.resolve(), Path(folder))
        print(
            f"baseline {args.baseline} against {bench_cds.REPO}; {args.rounds} rounds; "
            f"{'edits_many with skips' if args.skips else 'substitute_many'}"
        )
        for corpus in args.corpora.split(","):
            language = bench_cds.CORPORA.get(corpus, corpus)
            forms, text_corpus = bench_cds.FORMS.get(corpus, (None, corpus))
            texts = bench_cds.load_texts(args.data_dir, text_corpus)
            words = sum(len(text.split()) for text in texts)
            engines = (
                base_cds.build_substituter(
                    analyzer="rules",
                    language=language,
                    gender_forms=forms and base_forms.GenderForms(forms.forms),
                ),
                build_substituter(
                    analyzer="rules",
                    language=language,
                    gender_forms=forms and GenderForms(forms.forms),
                ),
            )
            old, new = paired_times(engines, texts, args.rounds, skips=args.skips)
            ratios = sorted(a / b for a, b in zip(old, new, strict=True))
            quarter = len(ratios) // 4
            print(
                f"{corpus:>10}: baseline {words / min(old):>10,.0f} words/s, this "
                f"{words / min(new):>10,.0f} words/s | ratio of bests {min(old) / min(new):.3f}, "
                f"median of paired ratios {statistics.median(ratios):.3f} "
                f"(quartiles {ratios[quarter]:.3f}-{ratios[-1 - quarter]:.3f})"
            )


if __name__ == "__main__":
    main()
