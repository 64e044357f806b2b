"""The ``cdsbias`` command line."""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from cdsbias import __version__
from cdsbias.errors import CdsbiasError

# Each module registers one or more sub-commands; see cdsbias/commands/__init__.py.
COMMAND_MODULES = (
    "cdsbias.commands.evaluate",
    "cdsbias.commands.data",
    "cdsbias.commands.cds",
    "cdsbias.commands.fill",
    "cdsbias.commands.publish",
    "cdsbias.commands.demo_model",
    "cdsbias.commands.report",
    "cdsbias.commands.compare",
    "cdsbias.commands.methods",
    "cdsbias.commands.downstream",
    "cdsbias.commands.study",
)


def _print_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """``warning: <message>`` on a line of its own, even while a progress bar is drawn."""
    from tqdm import tqdm

    # tqdm.write clears every active bar, prints on the freed line and redraws the bars,
    # so a warning never lands after a bar (or a bar that was just cleared) on one line.
    tqdm.write(f"warning: {message}", file=file if file is not None else sys.stderr)


def install_warning_printer() -> Callable[..., Any]:
    """Prints Python warnings as ``warning: <message>`` lines (no source line, no path).

    Every command gets it through :func:`main`. Warnings are written through
    ``tqdm.write``, so they start on a fresh line and never share one with a progress bar.

    Returns:
        The previous ``warnings.showwarning``, to restore it afterwards.
    """
    previous = warnings.showwarning
    warnings.showwarning = _print_warning
    return previous


def build_parser() -> argparse.ArgumentParser:
    """Builds the top-level parser with every registered sub-command."""
    from cdsbias.axes import AXES

    # A variant (race@bias-bench: another source's word lists) is named by its source alone:
    # argparse wraps lines at hyphens, which would split a variant's name.
    axes = [name for name in AXES if "@" not in name]
    sources = sorted({name.split("@", 1)[1] for name in AXES if "@" in name})
    variants = f"; AXIS@{'/'.join(sources)} with that source's word lists" if sources else ""
    parser = argparse.ArgumentParser(
        prog="cdsbias",
        description="Measure and mitigate social bias in masked language models along "
        f"registered bias axes ({', '.join(axes)}{variants}) or an attribute word file of "
        "your own (docs/axes.md).",
    )
    parser.add_argument("--version", action="version", version=f"cdsbias {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from cdsbias.progress import plain_progress_lines

    previous = install_warning_printer()
    try:
        with plain_progress_lines():  # progress bars in a log: plain lines, not \r redraws
            return int(args.func(args) or 0)
    except CdsbiasError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        # Unreadable paths, full disks, permissions: one line, no traceback.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    finally:
        # Library use after main() (tests, notebooks) gets Python's own printer back.
        warnings.showwarning = previous


if __name__ == "__main__":
    sys.exit(main())
