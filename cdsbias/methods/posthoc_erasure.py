"""What SentenceDebias, INLP and LEACE share as ``posthoc`` methods: fit once after training
(or instead of it, ``posthoc_only: true``), apply to the model, record the fit.

A run's post-hoc step (:meth:`ErasureMethod.after_training`) chooses fit sentences from the
run's corpus (original text; :mod:`cdsbias.methods.fit_sentences`), encodes them with the
batched scorer and fits the map (``context.fit``: :func:`cdsbias.train.posthoc_fit.fit_posthoc`),
then

* ``posthoc_apply: fold`` (default): folds ``h ↦ P h + b`` into the first layer of the MLM
  head (:func:`cdsbias.methods.head_fold.fold`): the saved model is a plain checkpoint that
  ``from_pretrained``, ``cdsbias evaluate`` and ``publish`` load with no custom code, and only
  the MLM head sees the projection; benchmarks that read sentence encodings (SEAT) read them
  through the saved map all the same (:func:`cdsbias.methods.head_fold.through_map`), so
  they score what the hooked model (and bias-bench) scores;
* ``posthoc_apply: hook``: a forward hook on the base model's output (as bias-bench), so
  every reader of the hidden states sees debiased states during the run; the hook is not
  part of the saved weights: a run folder holding a hooked fit (:meth:`ErasureMethod.holds`)
  gets it re-attached when loaded (``cdsbias evaluate``, ``load_masked_lm``:
  :meth:`ErasureMethod.attach`), so it scores what the run's post-hoc point scored, and a
  published card's loading code attaches it (:meth:`ErasureMethod.usage`).

Under a multi-process launch the fit runs once, on the main process, and every process
applies the map it hands them (``context.fit``); the main process writes the record.
Each method fits on the run's bias axis (``bias_axis``, cdsbias.axes; docs/methods.md "Per
bias axis"). The fit is recorded in the run folder (``posthoc_fit.json``: method, the axis
(``BiasAxis.record()``), word-list source and hash, sentences per class, labels,
per-iteration dev accuracy, rank removed, seconds; beside it the
map, ``posthoc_erasure.safetensors``), and its cost (fit seconds, directions removed) in
``run_info.json`` for ``cdsbias compare``. Before training, the corpus is checked to give
the fit its sentences and a folded head to be known, so a bad input fails before anything
is written.

The shared recipe keys (``posthoc_method``, ``posthoc_apply``, ``posthoc_word_pairs``,
``posthoc_sentences_per_class``, ``posthoc_min_sentences_per_class``) are declared by
:class:`cdsbias.methods.selection.PosthocSelection`; each method declares only its own.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.io import check_safetensors
from cdsbias.methods.base import Method, PosthocContext
from cdsbias.methods.erasure import (
    DAMAGED_FIT_FIX,
    ERASURE_FILE,
    ERASURE_RECORD,
    read_fit_record,
)

#: Shared keys, their defaults (as :class:`~cdsbias.methods.selection.PosthocSelection`).
SHARED_DEFAULTS: dict[str, Any] = {
    "posthoc_apply": "fold",
    "posthoc_word_pairs": None,
    "posthoc_sentences_per_class": 10_000,
    "posthoc_min_sentences_per_class": 100,
}


def word_pairs_file(name: str | None) -> Path | None:
    """The word-pair file: the path given, or a file of that name shipped with cdsbias."""
    if name is None:
        return None
    from cdsbias.resources import resource_path

    path = Path(name)
    shipped = resource_path("wordlists", name)
    if not path.exists() and path.name == name and shipped.is_file():
        return shipped
    return path


class ErasureMethod(Method):
    """A projection fitted once on sentence features and applied to the model."""

    role = "posthoc"
    reads_axis = True
    #: ``"sentence_debias"``, ``"inlp"`` or ``"leace"``: the fit of
    #: :func:`~cdsbias.train.posthoc_fit.fit_posthoc` (the registry name).
    name: str

    #: A ``posthoc_apply: hook`` run saves the map beside its weights (the record first).
    attached_files = (ERASURE_RECORD, ERASURE_FILE)
    attached_fix = (
        "re-run its fit with posthoc_apply: fold (the map folded into the MLM head's "
        "weights, a plain checkpoint to train on)"
    )

    def __init__(self, options: Any = None, shared: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.shared = {**SHARED_DEFAULTS, **(shared or {})}
        self.erasure: Any = None
        self.fit_seconds: float | None = None
        #: A finished run's fit record (:meth:`read_run`), for the card.
        self.record: dict[str, Any] | None = None

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        return values.get("posthoc_method") == cls.name

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Method:
        keys = {k: values[k] for k in cls.option_keys() if k in values}
        shared = {k: values[k] for k in SHARED_DEFAULTS if values.get(k) is not None}
        return cls(cls.Options(**keys), shared)

    def option_values(self) -> dict[str, Any]:
        return {**super().option_values(), **self.shared}

    @property
    def apply_mode(self) -> str:
        return str(self.shared["posthoc_apply"])

    @property
    def edits_weights(self) -> bool:  # type: ignore[override]
        """Folding writes into the MLM head's weights; a hook leaves them as they are."""
        return self.apply_mode == "fold"

    def fit_arguments(self) -> dict[str, Any]:
        """The method's own arguments of :func:`~cdsbias.train.posthoc_fit.fit_posthoc`."""
        return {}

    def select(self, documents: Any, pairs: Any) -> dict[str, int]:
        """Chooses the fit sentences as the fit will (raising its errors); their counts
        (one class per group and a neutral class; INLP on an axis other than gender reads
        attribute vs neutral sentences instead, :meth:`Inlp.select`)."""
        from cdsbias.methods.fit_sentences import select_inlp_sentences

        arguments = self.fit_arguments()
        chosen = select_inlp_sentences(
            documents, pairs, per_class=arguments["per_class"],
            min_per_class=arguments["min_per_class"],
        )  # fmt: skip
        return chosen.counts()

    def fit_words(self) -> Any:
        """The word tuples of the run's axis that choose the fit sentences
        (:func:`~cdsbias.methods.fit_sentences.axis_fit_words`; ``posthoc_word_pairs`` for
        gender)."""
        from cdsbias.methods.fit_sentences import axis_fit_words

        return axis_fit_words(self.bias_axis, word_pairs_file(self.shared["posthoc_word_pairs"]))

    def check_axis(self) -> None:
        """The axis's words can choose fit sentences (a word-pair file only for gender)."""
        self.fit_words()

    def prepare(self, model: Any, tokenizer: Any = None) -> Any:
        """With ``posthoc_apply: fold``, checks that the model's MLM head is known before
        anything is written (the error names the fix, ``posthoc_apply: hook``)."""
        from cdsbias.methods.head_fold import head_layer

        if self.apply_mode == "fold":
            head_layer(model)
        return model

    def prepare_data(
        self,
        documents: Any,
        tokenizer: Any,
        model: Any,
        *,
        max_length: int | None = None,
        original: Any = None,
    ) -> str | None:
        """Checks before training that the corpus gives the fit its sentences (no word pair
        found, too few sentences per class: one line naming the counts found)."""
        pairs = self.fit_words()
        counts = self.select(documents, pairs)
        found = ", ".join(f"{name} {count}" for name, count in counts.items())
        kind = "word pairs" if len(pairs.groups) == 2 else f"{pairs.axis} word tuples"
        return f"{self.title} fit sentences in the corpus: {found} ({kind} {pairs.hash})"

    def after_training(self, model: Any, context: PosthocContext) -> Any:
        """Fits the map on the corpus, applies it (fold or hook), records the fit."""
        from cdsbias.methods.head_fold import fold, hook

        pairs = self.fit_words()
        start = time.perf_counter()
        erasure = context.fit(self.name, pairs=pairs, axis=self.bias_axis, **self.fit_arguments())
        self.fit_seconds = time.perf_counter() - start
        erasure.details.update(posthoc_apply=self.apply_mode, total_seconds=self.fit_seconds)
        if self.apply_mode == "fold":
            fold(model, erasure)
        else:
            hook(model, erasure)
        # The record (RunFolder.fit_record) and the map itself, to re-apply or re-attach it;
        # written once, by the process that writes the run folder.
        if context.main_process:
            erasure.save(context.folder.path)
        self.erasure = erasure
        return model

    # ------------------------------------------------------- a saved hook, re-attached
    @classmethod
    def holds(cls, folder: Path) -> bool:
        """Whether ``folder`` holds this method's fit applied by a hook (a folded fit is in
        the weights already and is never applied twice).

        Raises:
            CdsbiasError: A damaged fit, never read as no hook: a record that cannot be
                read, or one that says this hook applies while its map is missing or cut
                short, or a map without the record that says how it applies.
        """
        folder = Path(folder)
        if not (folder / ERASURE_RECORD).is_file():
            if (folder / ERASURE_FILE).is_file():
                raise CdsbiasError(
                    f"{folder / ERASURE_FILE} is there without {ERASURE_RECORD}, which says "
                    f"whether the map is folded into the weights or applied by a hook; "
                    f"{DAMAGED_FIT_FIX}."
                )
            return False
        if not cls.attaches(folder):
            return False
        if not (folder / ERASURE_FILE).is_file():
            raise CdsbiasError(
                f"{folder / ERASURE_RECORD} says a {cls.title} map is applied by a forward "
                f"hook, but the map {folder / ERASURE_FILE} is missing, so the model would be "
                f"scored without it; {DAMAGED_FIT_FIX}."
            )
        check_safetensors(folder / ERASURE_FILE, fix=DAMAGED_FIT_FIX)
        return True

    @classmethod
    def attaches(cls, folder: Path) -> bool:
        """Whether the fit record in ``folder`` is this method's, applied by a hook (a
        record that cannot be read is an error, never "no")."""
        record = read_fit_record(folder)
        if record is None:
            return False
        details = record.get("details") or {}
        return record.get("method") == cls.name and details.get("posthoc_apply") == "hook"

    @classmethod
    def attach(cls, model: Any, folder: Path) -> Any:
        """Re-attaches the saved map as the run's forward hook
        (:func:`~cdsbias.methods.head_fold.hook`)."""
        from cdsbias.methods.erasure import AffineErasure
        from cdsbias.methods.head_fold import hook

        hook(model, AffineErasure.load(folder))
        return model

    @classmethod
    def usage(cls, repo_id: str, base: str | None, tokenizer_from: str | None) -> list[str]:
        """Code that continues the card's loading code: the map ``h ↦ P h + b`` of
        ``posthoc_erasure.safetensors`` as a forward hook on the base model's output, as
        :func:`~cdsbias.methods.head_fold.hook` (float32 ``hidden @ Pᵀ + b``)."""
        return [
            "",
            f"# {cls.title} acts through a forward hook on the base model's output (not part",
            "# of the weights): attach it. Every reader of the hidden states sees it.",
            "from huggingface_hub import snapshot_download",
            "from safetensors.torch import load_file",
            "",
            f'folder = snapshot_download("{repo_id}")',
            f'erasure = load_file(f"{{folder}}/{ERASURE_FILE}")',
            'projection, shift = erasure["projection"].float(), erasure["bias"].float()',
            "",
            "",
            "def erase(module, args, output):",
            '    output["last_hidden_state"] = output["last_hidden_state"] @ projection.T + shift',
            "    return output",
            "",
            "",
            'inner = model.get_base_model() if hasattr(model, "get_base_model") else model',
            "inner.base_model.register_forward_hook(erase)",
        ]

    def costs(self, model: Any = None, tokenizer: Any = None) -> dict[str, str]:
        if self.erasure is None:
            return {}
        return {
            "post-hoc fit": f"{self.fit_seconds:.1f} s, {self.erasure.rank_removed} "
            f"direction(s) removed"
        }

    def label(self, model: Any = None) -> str:
        return f"{self.title} ({self.apply_mode})"

    def read_run(self, folder: Path) -> None:
        """Reads the run's fit record (``posthoc_fit.json``) for :meth:`card_text`."""
        record = read_fit_record(folder)
        if record is not None and record.get("method") == self.name:
            self.record = record

    def card_text(self) -> str:
        """What was fitted, on which sentences (with the run's record: how many per class
        and the rank removed), and how it is applied (fold or hook)."""
        where = (
            "folded into the first layer of the MLM head (only the head sees it; the hidden "
            "states are the original ones, and cdsbias reads sentence encodings, e.g. for "
            "SEAT, through the saved map, as bias-bench's hook does)"
            if self.apply_mode == "fold"
            else "applied by a forward hook on the base model's output (not saved in the "
            "weights; re-attach it from posthoc_erasure.safetensors)"
        )
        fit = "fitted once on original sentences of the run's corpus"
        if self.record:
            record = self.record
            counts = ", ".join(f"{name} {n:,}" for name, n in record["sentences_per_class"].items())
            fit += f" ({counts}), removing {record['rank_removed']} direction(s),"
        # The axis the fit recorded is the one the map was fitted on (a user's attribute
        # file may have moved since, leaving the plan the default axis).
        axis = (self.record or {}).get("details", {}).get("bias_axis") or self.bias_axis.record()
        on = f"bias axis {axis['name']}: {', '.join(axis['groups'])}"
        return f"{self.description} ({on}), {fit} and {where}"
