"""Writes the results table of docs/methods.md from ``cdsbias compare --format markdown``.

    python scripts/methods_page.py runs/demo/methods/{full-cds,lora-cds,...}

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


def main(argv: list[str] | None = None) -> int:
    from cdsbias.cli import main as cli

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="train.py output folders, in table order")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page to update")
    parser.add_argument("--block", default="compare", help="the marker name of the table")
    args = parser.parse_args(argv)
    begin, end = f"<!-- {args.block}: begin -->", f"<!-- {args.block}: end -->"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli(["compare", *args.runs, "--format", "markdown"])
    if code != 0:
        return code
    text = args.page.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        print(f"error: {args.page} has no {begin} ... {end} block", file=sys.stderr)
        return 2
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    command = "cdsbias compare " + " ".join(Path(r).name for r in args.runs) + " --format markdown"
    block = f"{begin}\n<!-- written by scripts/methods_page.py: {command} -->\n\n"
    args.page.write_text(head + block + printed.getvalue() + "\n" + end + tail, encoding="utf-8")
    print(f"wrote the table of {len(args.runs)} runs into {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
