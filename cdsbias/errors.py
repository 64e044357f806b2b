"""Errors that the command line reports as one readable line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class CdsbiasError(Exception):
    """A user-facing error: bad input, a missing file, an unusable model.

    The CLI prints ``error: <message>`` on one line and exits non-zero; library users
    get an ordinary exception with the same message.
    """


def shown(value: object) -> object:
    """``value`` as a message shows it: a numpy scalar as the Python number or string it
    holds (``-1``, not ``np.int64(-1)``), anything else as it is; for ``{...!r}``."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():
        return item()
    return value


def close_names(name: str, names: Iterable[str], *, n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The ``n`` names most like ``name`` (difflib ratio at least ``cutoff``), best first:
    what every "did you mean" of the project suggests."""
    return difflib.get_close_matches(name, list(names), n=n, cutoff=cutoff)


class InputTooLongError(CdsbiasError):
    """An input longer than the model accepts (``n_tokens`` > ``max_length``).

    Raised by the scorer, which sees token ids; a caller that knows where the input came
    from (a benchmark and its row) names that instead.
    """

    def __init__(self, message: str, n_tokens: int, max_length: int) -> None:
        super().__init__(message)
        self.n_tokens = n_tokens
        self.max_length = max_length


def did_you_mean(name: str, names: Iterable[str], n: int = 1) -> str:
    """The ``Did you mean ...?`` sentence every "unknown name" error of cdsbias ends with.

    The suggestions are :func:`difflib.get_close_matches` with its default similarity
    cutoff (0.6), best first, so every lookup suggests by the same rule.

    Args:
        name: The name the user gave.
        names: The valid names.
        n: How many suggestions at most.

    Returns:
        ``"Did you mean 'y'?"`` (``"Did you mean 'a', 'b' or 'c'?"`` for several), or ``""``
        when no valid name is close.
    """
    close = [f"'{c}'" for c in close_names(str(name), [str(x) for x in names], n=n)]
    if not close:
        return ""
    listed = close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}"
    return f"Did you mean {listed}?"


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
    hint = did_you_mean(name, names)
    parts = [f"Unknown {kind} '{name}'.", hint, f"Available: {', '.join(names)}"]
    return CdsbiasError(" ".join(p for p in parts if p))
