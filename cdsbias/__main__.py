"""``python -m cdsbias``: the ``cdsbias`` command, for environments whose scripts folder is
not on ``PATH`` (a venv used without activating it, a notebook's kernel)."""

from cdsbias.cli import main

raise SystemExit(main())
