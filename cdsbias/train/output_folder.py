"""The run's output folder before and while it is written: a folder that holds another run
is refused, or (``overwrite_output_dir``) replaced only once the new run has a checkpoint.

``train.py`` reads and checks every input first (model, method plan, word files, fit
sentences, prefix lengths, benchmark data, corpus), then calls :func:`replacing_run`. An
earlier run in ``output_dir`` is *set aside* there — renamed to the sibling
``<output_dir>.replaced-<pid>`` (one rename on the same filesystem) — and the new run is
written under the folder's own name, so every path the Trainer, W&B or the callback holds
stays valid. The earlier run is deleted at the new run's first checkpoint (or at its end, if
it saves none); if the run fails before that, the new folder is removed and the earlier run
renamed back, byte for byte as it was. A process killed before then leaves the earlier run
whole in the sibling folder, which the line printed at the start names.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from cdsbias.errors import CdsbiasError
from cdsbias.runs.folder import RunFolder


def resolve_resume(recipe: Any) -> str | None:
    """``resume_from_checkpoint``: a folder, or true/last for the latest checkpoint; its
    weights and JSON files are checked (a damaged one is named, never a traceback from the
    Trainer's resume)."""
    from transformers.trainer_utils import get_last_checkpoint

    from cdsbias.io import check_json_files, check_safetensors

    value = recipe.training.resume_from_checkpoint
    if value is None or str(value).lower() in ("false", "none", ""):
        return None
    output_dir = recipe.training.output_dir
    if str(value).lower() in ("true", "last", "latest"):
        last = get_last_checkpoint(output_dir) if Path(output_dir).is_dir() else None
        if last is None:
            raise CdsbiasError(f"resume_from_checkpoint: no checkpoint-* folder in {output_dir}.")
        value = last
    if not Path(value).is_dir():
        raise CdsbiasError(f"resume_from_checkpoint: {value} is not a folder.")
    fix = "resume from another checkpoint (resume_from_checkpoint=FOLDER) or delete it"
    check_safetensors(value, fix=fix)
    check_json_files(value, fix=fix)
    return str(value)


def check_output_dir(output_dir: str | Path, *, overwrite: bool, resume: str | None) -> bool:
    """Refuses to write into a folder that holds another run, unless told to; touches
    nothing.

    Args:
        output_dir: The recipe's ``output_dir``.
        overwrite: ``overwrite_output_dir``.
        resume: The checkpoint the run resumes from, or None.

    Returns:
        Whether the folder holds an earlier run that this run replaces.

    Raises:
        CdsbiasError: ``output_dir`` is a file, or holds a run that may not be replaced.
    """
    path = Path(output_dir)
    if path.exists() and not path.is_dir():
        raise CdsbiasError(f"output_dir {path} exists and is not a folder.")
    if resume is not None or not RunFolder(path).holds_run():
        return False
    if not overwrite:
        raise CdsbiasError(
            f"output_dir {path} holds another run; nothing was overwritten. Resume it "
            "with resume_from_checkpoint=true, pick another output_dir, or pass "
            "overwrite_output_dir=true to delete it."
        )
    return True


class ReplacedRun:
    """An earlier run set aside while the new one starts in its folder (main process only:
    the other processes of a launch hold no files of it)."""

    def __init__(self, path: Path, aside: Path | None) -> None:
        self.path = path
        #: Where the earlier run is kept; None on other processes and once it is deleted.
        self.aside = aside

    def restore(self) -> None:
        """Removes what the failed new run wrote and puts the earlier run back."""
        if self.aside is None:
            return
        if self.path.exists():
            shutil.rmtree(self.path)
        self.aside.rename(self.path)
        self.aside = None

    def discard(self) -> None:
        """Deletes the earlier run: the new one has a checkpoint (or has ended)."""
        if self.aside is None:
            return
        shutil.rmtree(self.aside)
        self.aside = None


class DiscardReplacedRun(TrainerCallback):
    """Deletes the set-aside earlier run once the new run's first checkpoint is complete
    (``on_save`` follows the Trainer's writing of it)."""

    def __init__(self, replaced: ReplacedRun | None) -> None:
        self.replaced = replaced

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.replaced is not None:
            self.replaced.discard()
        return control


@contextmanager
def replacing_run(output_dir: str | Path, replace: bool) -> Iterator[ReplacedRun | None]:
    """The block writes the new run into ``output_dir``; with ``replace``, the earlier run
    there is set aside first, put back if the block raises, deleted when it ends (or
    earlier, by :class:`DiscardReplacedRun`).

    Every process of a launch enters the block; the main process moves the folders and
    the others wait until it has (accelerate's ``wait_for_everyone``), so none writes into
    the earlier run.

    Yields:
        The earlier run set aside, or None when nothing is replaced.
    """
    from accelerate import PartialState

    if not replace:
        yield None
        return
    state = PartialState()
    path = Path(output_dir)
    aside = None
    if state.is_main_process:
        aside = path.with_name(f"{path.name}.replaced-{os.getpid()}")
        path.rename(aside)
        print(
            f"output_dir {path} holds an earlier run: it is kept as {aside} until this "
            "run's first checkpoint, and put back if this run fails before it.",
            flush=True,
        )
    state.wait_for_everyone()
    replaced = ReplacedRun(path, aside)
    try:
        yield replaced
    except BaseException:
        replaced.restore()
        raise
    replaced.discard()
