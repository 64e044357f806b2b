"""Recompute the golden numbers and print how they differ from tests/assets/golden/.

    python scripts/golden.py                    # compare; exit 1 on any difference
    python scripts/golden.py --write            # store what is computed now, print what moved
    python scripts/golden.py --part benchmarks  # only the benchmarks (a few seconds)
    python scripts/golden.py --kernels          # compare under each of KERNELS' settings

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

#: Kernel settings that order float32 sums differently on one x86-64 CPU, standing in for
#: other CPUs: oneDNN's and MKL's instruction-set caps, MKL's reproducibility modes, and
#: ATen's non-vectorised kernels. A cap above what the CPU has (AVX-512 on an AVX2 CPU)
#: changes nothing there.
KERNELS: dict[str, dict[str, str]] = {
    "default": {},
    "avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "avx512": {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE", "MKL_ENABLE_INSTRUCTIONS": "AVX512"},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "sse": {"ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
            "MKL_CBWR": "SSE4_2"},
    "avx": {"ONEDNN_MAX_CPU_ISA": "AVX", "MKL_ENABLE_INSTRUCTIONS": "AVX", "MKL_CBWR": "AVX"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    "all-scalar": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41",
                   "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "MKL_CBWR": "COMPATIBLE"},
}  # fmt: skip


def compute(part: str, work: Path) -> dict[str, str]:
    """Relative path -> text of every golden file of ``part``."""
    import torch
    from tests_helpers import small_becpro

    torch.set_num_threads(1)
    becpro = small_becpro(work)
    files: dict[str, str] = {}
    if part in ("all", "benchmarks"):
        for model, folder in golden.build_models(work / "models").items():
            for name in golden.benchmark_names():
                print(f"benchmark {name} on {model}", file=sys.stderr)
                files.update(golden.benchmark_files(model, folder, name, becpro, work))
    if part in ("all", "training"):
        base = golden.build_training_base(work)
        for method in golden.METHODS:
            print(f"training: {method}", file=sys.stderr)
            files.update(golden.training_files(method, base, becpro, work))
    return files


def kernels(part: str, work: Path) -> int:
    """Recompute ``part`` in a fresh process per :data:`KERNELS` setting; print, per
    setting, how far the numbers moved from the stored ones (the largest K of
    :func:`golden_numbers.spread`) and every difference beyond the tolerance."""
    import subprocess

    failed = 0
    for name, env in KERNELS.items():
        out = work / name
        command = [sys.executable, __file__, "--part", part, "--save", str(out)]
        subprocess.run(command, env={**os.environ, **env}, capture_output=True, check=False)
        now = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
               for p in out.rglob("*") if p.is_file()}  # fmt: skip
        stored = golden.read_stored(now)
        moved = golden.spread(stored, now)
        lines = golden.differences(stored, now) if now else ["nothing computed"]
        for kind in ("benchmarks", "training"):
            # One part alone (--part) leaves the other kind without files to compare.
            of_kind = [(k, f"{p}: {key}") for p, (k, key) in moved.items() if p.startswith(kind)]
            worst = max(of_kind, default=(0.0, ""))
            if worst[1]:
                print(f"{name}: {kind}: largest move {worst[0]:.1f} EPS32 * scale ({worst[1]})")
        print(f"{name}: {len(lines)} differences beyond the tolerance", *lines, sep="\n  ")
        failed += bool(lines)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the numbers computed now")
    parser.add_argument("--part", choices=("all", "benchmarks", "training"), default="all")
    parser.add_argument("--save", type=Path, help="also write the computed files under DIR")
    parser.add_argument("--kernels", action="store_true",
                        help="compare under each kernel setting of KERNELS (minutes)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.kernels:
        with tempfile.TemporaryDirectory(prefix="golden-kernels-") as tmp:
            return kernels(args.part, Path(tmp))
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        now = compute(args.part, Path(tmp))
    if args.save:
        for path, text in now.items():
            (args.save / path).parent.mkdir(parents=True, exist_ok=True)
            (args.save / path).write_text(text, encoding="utf-8")
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
