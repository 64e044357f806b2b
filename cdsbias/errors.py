"""Errors that the command line reports as one readable line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class CdsbiasError(Exception):
    """A user-facing error: bad input, a missing file, an unusable model.

    The CLI prints ``error: <message>`` on one line and exits non-zero; library users
    get an ordinary exception with the same message.
    """


def close_names(name: str, names: Iterable[str], *, n: int = 1, cutoff: float = 0.5) -> list[str]:
    """The ``n`` names most like ``name`` (difflib ratio at least ``cutoff``), best first:
    what every "did you mean" of the project suggests."""
    return difflib.get_close_matches(name, list(names), n=n, cutoff=cutoff)


def unknown_name_error(kind: str, name: str, available: Iterable[str]) -> CdsbiasError:
    """Builds the lm-evaluation-harness style error for a failed registry lookup.

    Args:
        kind: What was looked up, e.g. ``"benchmark"``.
        name: The name the user gave.
        available: The valid names.

    Returns:
        An error reading ``Unknown benchmark 'x'. Did you mean 'y'? Available: a, b``.
    """
    names = sorted(available)
    close = close_names(name, names)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return CdsbiasError(f"Unknown {kind} '{name}'.{hint} Available: {', '.join(names)}")
