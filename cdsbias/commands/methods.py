"""``cdsbias methods``: the registered debiasing methods and their recipe keys."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    listing = subparsers.add_parser(
        "methods",
        help="list the registered debiasing methods, or show one method's recipe keys",
    )
    listing.add_argument("name", nargs="?", help="a method: show its recipe keys")
    listing.set_defaults(func=run_list)


def run_list(args: argparse.Namespace) -> int:
    from cdsbias.methods import REGISTRY, get_method, list_methods
    from cdsbias.options import options_text

    if not getattr(args, "name", None):
        for name, description in list_methods().items():
            print(f"{name:<10} [{REGISTRY[name].role}] {description}")
        return 0
    cls = get_method(args.name)
    print(f"{cls.name} ({cls.role}): {cls.title}: {cls.description}")
    print(f"selected by: {cls.selected_by}")
    if cls.citation:
        print(f"cite: {cls.citation}")
    print("recipe keys (train.py RECIPE KEY=VALUE):")
    print(options_text(cls.Options))
    return 0
