"""Sub-commands of the ``cdsbias`` CLI.

Each module here exposes ``register(subparsers)``, which adds its parser and sets
``func`` to a callable taking the parsed ``argparse.Namespace`` and returning an exit
code. Heavy imports (torch, transformers) happen inside ``func`` so that ``--help`` is fast.
"""
