"""Writes the results table of docs/methods.md from ``cdsbias compare --format markdown``.

    python scripts/methods_page.py runs/demo/methods/{full-cds,lora-cds,...}
    python scripts/methods_page.py --study runs/demo/methods full-cds lora-cds ...

With ``--study`` the runs are methods of a study (``make methods`` runs
``studies/methods_demo.yaml``): each name is the method's seed-0 cell of the study's first model.

The table between the ``<!-- compare: begin -->`` and ``<!-- compare: end -->`` markers (or
``<!-- BLOCK: begin -->`` ... with ``--block BLOCK``) is replaced by the command's output for
the given runs, so every number on the page is what the command printed (``make methods``
and ``make methods-posthoc`` run this after the runs).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "methods.md"


def study_runs(study: Path, methods: list[str]) -> list[Path]:
    """The seed-0 cell of each method of the study's first model, in the order given."""
    from cdsbias.studies.table import load_study

    folder, spec, cells = load_study(study)
    model = next(iter(spec.models))
    by_method = {c.method: c for c in cells if c.model == model and c.seed == spec.seeds[0]}
    missing = [m for m in methods if m not in by_method]
    if missing:
        raise SystemExit(f"error: {study} has no method {', '.join(missing)}")
    return [by_method[m].folder(folder.path) for m in methods]


def main(argv: list[str] | None = None) -> int:
    from cdsbias.cli import main as cli

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "runs", nargs="+", help="train.py output folders (or, with --study, methods) in table order"
    )
    parser.add_argument("--study", type=Path, help="a study folder whose methods are named")
    parser.add_argument("--compare-out", type=Path, help="also write compare's files here")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page to update")
    parser.add_argument("--block", default="compare", help="the marker name of the table")
    args = parser.parse_args(argv)
    begin, end = f"<!-- {args.block}: begin -->", f"<!-- {args.block}: end -->"
    names = list(args.runs)
    runs = study_runs(args.study, names) if args.study else names
    compare = ["compare", *map(str, runs), "--format", "markdown"]
    if args.compare_out:  # its files; what it prints then ("wrote ...") is not the page's
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli([*compare, "--out", str(args.compare_out), "--overwrite"])
        if code != 0:
            return code
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli(compare)
    if code != 0:
        return code
    text = args.page.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        print(f"error: {args.page} has no {begin} ... {end} block", file=sys.stderr)
        return 2
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    command = "cdsbias compare " + " ".join(Path(r).name for r in names) + " --format markdown"
    block = f"{begin}\n<!-- written by scripts/methods_page.py: {command} -->\n\n"
    args.page.write_text(head + block + printed.getvalue() + "\n" + end + tail, encoding="utf-8")
    print(f"wrote the table of {len(runs)} runs into {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
