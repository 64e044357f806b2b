"""The ``cdsbias`` command line."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cdsbias import __version__
from cdsbias.errors import CdsbiasError

# Each module registers one or more sub-commands; see cdsbias/commands/__init__.py.
COMMAND_MODULES = (
    "cdsbias.commands.evaluate",
    "cdsbias.commands.data",
    "cdsbias.commands.cds",
    "cdsbias.commands.fill",
    "cdsbias.commands.publish",
    "cdsbias.commands.bootstrap",
    "cdsbias.commands.report",
)


def build_parser() -> argparse.ArgumentParser:
    """Builds the top-level parser with every registered sub-command."""
    parser = argparse.ArgumentParser(
        prog="cdsbias",
        description="Measure and mitigate gender bias in masked language models.",
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
    try:
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


if __name__ == "__main__":
    sys.exit(main())
