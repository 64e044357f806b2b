"""Progress bars written to a log: a few plain lines instead of carriage-return redraws.

On a terminal tqdm redraws a bar in place, ``\\r`` by ``\\r``. Written to a file or a pipe
(``cdsbias evaluate ... 2> log``, a cluster job's log) every redraw stays: hundreds of
them on one line. While :func:`plain_progress_lines` is active, every tqdm bar whose output
is not a terminal prints its state as a line of its own instead: when it starts, each time
it passes another quarter of its total, at least every :data:`INTERVAL_S` seconds (a slow
bar, or one without a total), and when it ends, with tqdm's own statistics (``scoring:  40% 120/300
[00:12<00:18, 9.80batch/s]``). Bars on a terminal are drawn as tqdm draws them.

This is tqdm's extension point for other displays (``tqdm.contrib.telegram``, ``slack``
and ``discord`` override :meth:`tqdm.std.tqdm.display` the same way), set on
``tqdm.std.tqdm`` itself for the duration: cdsbias's bars and those transformers, datasets
and huggingface_hub make from their own tqdm subclasses all inherit it. Every command
gets it through :func:`cdsbias.cli.main` and ``train.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: A bar with a total prints a line each time it passes another 1/STEPS of it.
STEPS = 4
#: A bar without a total (or a slow one) prints a line at least this often, in seconds.
INTERVAL_S = 120.0


def _on_terminal(bar: Any) -> bool:
    try:
        return bool(bar.fp.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def _line(bar: Any) -> str:
    """The bar's state without the bar itself (``ncols=0``: tqdm's statistics only)."""
    return bar.format_meter(**{**bar.format_dict, "ncols": 0})


def _step(bar: Any) -> int | None:
    return int(STEPS * bar.n / bar.total) if bar.total else None


@contextmanager
def plain_progress_lines() -> Iterator[None]:
    """Within the block, tqdm bars that do not write to a terminal print plain lines."""
    from tqdm.std import tqdm

    display, clear = tqdm.display, tqdm.clear

    def display_line(self: Any, msg: str | None = None, pos: int | None = None) -> Any:
        if _on_terminal(self):
            return display(self, msg, pos)
        closing = self.disable  # tqdm.close() sets it before the bar's last display
        if msg == "" and not closing:
            return None  # a clear before tqdm.write: a log has no line to free
        now = time.monotonic()
        last = getattr(self, "_line_printed", None)  # (time, step) of the last line
        if closing:
            # leave=True: tqdm ends the line itself; leave=False (msg ""): end it here.
            self.fp.write(_line(self) + ("\n" if msg == "" else ""))
        elif last is None or (
            not (self.total and self.n >= self.total)  # the closing line says it
            and (_step(self) != last[1] or now - last[0] >= INTERVAL_S)
        ):
            self.fp.write(_line(self) + "\n")
        else:
            return None
        self.fp.flush()
        self._line_printed = (now, _step(self))
        return None

    def clear_line(self: Any, nolock: bool = False) -> None:
        if _on_terminal(self):
            clear(self, nolock)

    tqdm.display, tqdm.clear = display_line, clear_line
    try:
        yield
    finally:
        tqdm.display, tqdm.clear = display, clear
