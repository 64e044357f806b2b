"""Recompute the golden numbers and print how they differ from tests/assets/golden/.

    python scripts/golden.py                    # compare; exit 1 on any difference
    python scripts/golden.py --write            # store what is computed now, print what moved
    python scripts/golden.py --part benchmarks  # only the benchmarks (a few seconds)

Benchmarks: every registered benchmark on a tiny seeded BERT and ALBERT; training: one
6-step smoke run per method (about a minute). Everything runs on the CPU, one thread. After
an *intended* change of numbers, run with ``--write`` and commit the files with the change
(the printed difference belongs in the commit message). See tests/golden_numbers.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(name, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import golden_numbers as golden  # noqa: E402


def compute(part: str, work: Path) -> dict[str, str]:
    """Relative path -> text of every golden file of ``part``."""
    import torch
    from tests_helpers import small_becpro
    from tiny_models import tiny_masked_lm

    torch.set_num_threads(1)
    becpro = small_becpro(work)
    files: dict[str, str] = {}
    if part in ("all", "benchmarks"):
        for model, folder in golden.build_models(work / "models").items():
            for name in golden.benchmark_names():
                print(f"benchmark {name} on {model}", file=sys.stderr)
                files.update(golden.benchmark_files(model, folder, name, becpro, work))
    if part in ("all", "training"):
        base = tiny_masked_lm("bert", work / "base")
        for method in golden.METHODS:
            print(f"training: {method}", file=sys.stderr)
            files.update(golden.training_files(method, base, becpro, work))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the numbers computed now")
    parser.add_argument("--part", choices=("all", "benchmarks", "training"), default="all")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        now = compute(args.part, Path(tmp))
    prefixes = {"all": ("benchmarks", "training")}.get(args.part, (args.part,))
    stored = {p: t for prefix in prefixes for p, t in golden.stored_files(prefix).items()}
    lines = golden.differences(stored, now)
    print("\n".join(lines) if lines else f"no difference in {len(now)} golden files")
    if not args.write:
        return 1 if lines else 0
    for prefix in prefixes:
        shutil.rmtree(golden.GOLDEN / prefix, ignore_errors=True)
    for path, text in now.items():
        (golden.GOLDEN / path).parent.mkdir(parents=True, exist_ok=True)
        (golden.GOLDEN / path).write_text(text, encoding="utf-8")
    print(f"wrote {len(now)} files under {golden.GOLDEN.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
