"""Writes the results table of docs/methods.md from ``cdsbias compare --format markdown``.

    python scripts/methods_page.py runs/demo/methods/{full-cds,lora-cds,...}
    python scripts/methods_page.py --study runs/demo/methods full-cds lora-cds ...

With ``--study`` the runs are methods of a study (``make methods`` runs
``studies/methods_demo.yaml``): each name is the method's seed-0 cell of the study's first model.
With ``--study`` and ``--seeds`` the block is the methods' seeds table instead: seed 0, the
mean over the study's seeds with its seed SD and interval, the change against base, and the
ranking by mean |gap| with the pairs the seeds can tell apart (``make methods-seeds``).

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


#: The columns of the seeds block: BEC-Pro's headline mean |gap| and the held-out loss.
SEED_COLUMNS = ("becpro/mean_abs_gap", "heldout_loss")


def seeds_block(study: Path, methods: list[str]) -> str:
    """The seeds table of ``methods`` (the study's first model, base first) and the
    ranking by mean |gap|: what seed 0 gave, the mean over the study's seeds with its seed
    SD and two-level bootstrap interval, the change against base, and which methods the
    seeds can tell apart (:mod:`cdsbias.studies.ranking`)."""
    from cdsbias.benchmarks.results import format_value, table_cell
    from cdsbias.studies.outputs import SAME_AS_BASE, change_text, value_text
    from cdsbias.studies.ranking import neighbours, rank_methods, ranking_text
    from cdsbias.studies.table import study_table

    spec, rows, columns = study_table(study)
    model = next(iter(spec.models))
    by_key = {c.key: c for c in columns}
    missing = [k for k in SEED_COLUMNS if k not in by_key]
    if missing:
        raise SystemExit(f"error: {study} has no column {', '.join(missing)}")
    by_method = {r.method: r for r in rows if r.model == model}
    missing = [m for m in methods if m not in by_method]
    if missing:
        raise SystemExit(f"error: {study} has no method {', '.join(missing)}")
    chosen = [by_method[m] for m in ("base", *methods) if m in by_method]
    seeds = ", ".join(map(str, spec.seeds))
    header = ["run", "seeds"]
    for key in SEED_COLUMNS:
        label = by_key[key].metric.label
        header += [f"{label}: seed {spec.seeds[0]}", f"{label}: mean ± seed SD [95%]",
                   f"{label}: Δ against base [95%]"]  # fmt: skip
    lines = ["| " + " | ".join(map(table_cell, header)) + " |", "|" + "---|" * len(header)]
    for row in chosen:
        cells = [row.method, f"{len(row.done)}/{len(row.cells)}"]
        for key in SEED_COLUMNS:
            entry = row.entries.get(key)
            first = row.per_seed.get(key, {}).get(spec.seeds[0])
            cells.append(format_value(first[0]) if first is not None else "n/a")
            if entry is None:
                cells += ["n/a", "n/a"]
                continue
            cells.append(value_text(entry))
            change = format_value(entry.change) if entry.change is not None else ""
            cells.append(change_text(entry) or change)
        lines.append("| " + " | ".join(map(table_cell, cells)) + " |")
    source = SEED_COLUMNS[0].split("/")[0]  # the benchmark of the first column
    lines += [
        "",
        f"- Seeds {seeds}; seed {spec.seeds[0]}'s cells are the tables' above. "
        f"{SAME_AS_BASE}: the change's interval contains 0 (cannot be told from base).",
        f"- The methods ranked by each headline metric of `{source}`, least biased mean over the "
        "seeds first (`<`: the two-level bootstrap interval of the difference excludes 0; "
        "`≈`: it does not), and how many pairs of methods come out in the same order in "
        "every seed and are told apart by the bootstrap:",
    ]
    for column in columns:
        if column.source != source:
            continue
        order, pairs = rank_methods(chosen, column, model, label=lambda row: row.method)
        agree = sum(p.seeds_agree == p.seeds for p in pairs)
        apart = sum(p.told_apart for p in pairs)
        adjacent = neighbours(order, pairs)
        lines.append(
            f"  - {column.metric.label} ({column.metric.direction}): "
            f"{ranking_text(order, pairs)}. Of {len(pairs)} pairs, {agree} in the same order "
            f"in every seed, {apart} told apart; of {len(adjacent)} neighbours, "
            f"{sum(p.told_apart for p in adjacent)} told apart."
        )
    return "\n".join(lines) + "\n"


def compare_block(runs: list[Path | str], compare_out: Path | None) -> tuple[int, str]:
    """``cdsbias compare --format markdown`` of ``runs``: its exit code and what it printed."""
    from cdsbias.cli import main as cli

    compare = ["compare", *map(str, runs), "--format", "markdown"]
    if compare_out:  # its files; what it prints then ("wrote ...") is not the page's
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli([*compare, "--out", str(compare_out), "--overwrite"])
        if code != 0:
            return code, ""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli(compare)
    return code, printed.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "runs", nargs="+", help="train.py output folders (or, with --study, methods) in table order"
    )
    parser.add_argument("--study", type=Path, help="a study folder whose methods are named")
    parser.add_argument("--compare-out", type=Path, help="also write compare's files here")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page to update")
    parser.add_argument("--block", default="compare", help="the marker name of the table")
    parser.add_argument(
        "--seeds", action="store_true", help="with --study: the seeds table and ranking instead"
    )
    args = parser.parse_args(argv)
    begin, end = f"<!-- {args.block}: begin -->", f"<!-- {args.block}: end -->"
    text = args.page.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        print(f"error: {args.page} has no {begin} ... {end} block", file=sys.stderr)
        return 2
    names = list(args.runs)
    if args.seeds:
        if not args.study:
            print("error: --seeds reads a study: give --study STUDY", file=sys.stderr)
            return 2
        content = seeds_block(args.study, names)
        command = f"the seeds of {' '.join(names)} in {args.study.name}"
    else:
        runs = study_runs(args.study, names) if args.study else names
        code, content = compare_block(runs, args.compare_out)
        if code != 0:
            return code
        command = "cdsbias compare " + " ".join(Path(r).name for r in names) + " --format markdown"
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    block = f"{begin}\n<!-- written by scripts/methods_page.py: {command} -->\n\n"
    args.page.write_text(head + block + content + "\n" + end + tail, encoding="utf-8")
    print(f"wrote the table of {len(names)} runs into {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
