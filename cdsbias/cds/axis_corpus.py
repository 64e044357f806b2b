"""n-ary CDA and CDS over corpora for a bias axis other than gender (race, religion, a file).

Gender keeps its own engines and :class:`cdsbias.cds.corpus.CounterfactualMapper`; this
module is the same contract for an axis of k groups, with the words substituted by
:class:`cdsbias.cds.axis_substitution.AxisSubstituter`:

* ``cda`` (the default for an n-ary axis), ``counterfactuals: one``: bias-bench's
  ``ternary_counterfactual_augmentation`` (Meade et al. 2022, ``experiments/run_mlm.py``):
  for each document that contains an axis word, one counterfactual in which each group
  ``i`` becomes a group drawn uniformly from the *other* groups, independently per group
  (bias-bench: r1 from {1, 2}, r2 from {0, 2}, r3 from {0, 1}; :func:`draw_mapping`),
  emitted after the original.
* ``cds``: the document is *replaced* by that counterfactual with probability
  ``cds_probability`` (its seeded coin, as gender CDS).
* ``counterfactuals: all``: instead of one drawn mapping, the k-1 cyclic shifts of the
  group order (group i -> group i+s mod k, s = 1..k-1; :func:`cyclic_mappings`),
  deterministic; ``cda`` keeps the original before them, ``cds`` replaces it by them.

bias-bench quirks, and what this module does (docs/axes.md lists them all):

* bias-bench *drops* every sequence without an axis word from the CDA training set (its
  map returns only augmented pairs). Dropped here: such documents are kept, unchanged and
  once, because a model trained only on sentences naming a religion learns a different
  language model from the one it is compared with, and gender CDA keeps them too.
* bias-bench augments 128-token blocks after grouping and emits the counterfactual before
  the original; here a document is the unit (so a name keeps its counterpart across block
  boundaries) and the original comes first, as gender CDA.
* bias-bench draws from Python's global ``random`` (its order depends on batching); here
  each document's draw comes from ``document_rng(seed, key)``, so the result does not depend
  on batching, ``num_proc``, sharding or resuming.

Each output row carries ``groups``, the mapping applied as ``{group: group it became}``
(identity on originals), and ``counterfactual``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from cdsbias.axes import DEFAULT_AXIS, BiasAxis, get_axis, is_axis_file
from cdsbias.cds.corpus import REPORT_COLUMN, should_substitute, validate_settings
from cdsbias.cds.document_seed import document_rng, text_key
from cdsbias.cds.edits import apply_edits
from cdsbias.cds.rules_digest import rules_digest
from cdsbias.errors import CdsbiasError

#: Values of ``cds_counterfactuals`` / ``cdsbias cds --counterfactuals``.
COUNTERFACTUALS = ("one", "all")
#: The column of each row's group mapping.
GROUPS_COLUMN = "groups"


def is_gender(reference: str | BiasAxis) -> bool:
    """Whether ``reference`` is the registered gender axis, which keeps gender's own CDS
    engines (a user's file is n-ary even when named gender.tsv)."""
    if isinstance(reference, BiasAxis):
        return reference is get_axis(DEFAULT_AXIS)
    return not is_axis_file(reference) and reference.strip().lower() == DEFAULT_AXIS


def draw_mapping(rng: Any, k: int) -> list[int]:
    """bias-bench's draw: each group ``i`` to a uniformly drawn other group, independently.

    bias-bench (``ternary_counterfactual_augmentation``) calls ``random.choice([1, 2])``,
    ``random.choice([0, 2])``, ``random.choice([0, 1])`` in group order; this is the same for
    any k.
    """
    return [rng.choice([j for j in range(k) if j != i]) for i in range(k)]


def cyclic_mappings(k: int) -> list[list[int]]:
    """The k-1 cyclic shifts of k groups: ``[[(i + s) % k for i in range(k)] for s in 1..k-1]``."""
    return [[(i + shift) % k for i in range(k)] for shift in range(1, k)]


def validate_axis_settings(mode: str, probability: float, counterfactuals: str) -> None:
    """Raises a one-line error for an unknown mode, probability or counterfactuals value."""
    validate_settings(mode, probability)
    if counterfactuals not in COUNTERFACTUALS:
        raise CdsbiasError(
            f"counterfactuals must be one of {', '.join(COUNTERFACTUALS)}, got '{counterfactuals}'"
        )


class AxisCounterfactualMapper:
    """A picklable batched map function: n-ary CDA/CDS of a text column for one axis.

    Example:
        >>> mapper = AxisCounterfactualMapper("text", axis="religion", mode="cda", seed=1)
        >>> dataset = dataset.map(mapper, batched=True, num_proc=4)

    Args:
        column: Name of the text column.
        axis: The axis or its reference (``religion``, ``words.tsv``; cdsbias.axes).
        mode: ``cda`` (original, then counterfactuals) or ``cds`` (replace).
        probability: ``cds`` mode's per-document substitution probability.
        seed: Seed of the per-document draws and coins.
        id_column: Column whose value keys a document's draws; default its text's hash.
        counterfactuals: ``one`` (a drawn mapping) or ``all`` (the k-1 cyclic shifts).
        language: The CDS language code (agreement rules for ``en``).
        report: Also add ``REPORT_COLUMN`` (one JSON record per input document).
    """

    def __init__(
        self,
        column: str = "text",
        *,
        axis: str | BiasAxis,
        mode: str = "cda",
        probability: float = 1.0,
        seed: int = 0,
        id_column: str | None = None,
        counterfactuals: str = "one",
        language: str = "en",
        report: bool = False,
    ) -> None:
        validate_axis_settings(mode, probability, counterfactuals)
        self.column = column
        self.axis = get_axis(axis)
        self.axis.check_counterfactuals()  # an axis without counterfactuals (the CLI and
        # recipes check first and name the methods that apply)
        self.mode = mode
        self.probability = probability
        self.seed = seed
        self.id_column = id_column
        self.counterfactuals = counterfactuals
        self.language = language
        self.report = report
        self.rules = rules_digest()  # in the cache fingerprint: new rules, new mapping
        self._substituter = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_substituter"] = None  # rebuilt in each worker
        return state

    @property
    def substituter(self) -> Any:
        """The :class:`AxisSubstituter`, built on first use in each process."""
        if self._substituter is None:
            from cdsbias.cds.axis_substitution import AxisSubstituter

            self._substituter = AxisSubstituter(self.axis, self.language)
        return self._substituter

    def mappings(self, key: str) -> list[list[int]]:
        """The group mappings of the document keyed ``key`` (before its coin)."""
        if self.counterfactuals == "all":
            return cyclic_mappings(self.axis.k)
        # A key of its own, so the draw is independent of the CDS coin of the same key.
        return [draw_mapping(document_rng(self.seed, f"{key}\x00groups"), self.axis.k)]

    def _groups(self, mapping: list[int]) -> dict[str, str]:
        return {group: self.axis.groups[mapping[i]] for i, group in enumerate(self.axis.groups)}

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if self.column not in batch:
            raise CdsbiasError(
                f"Column '{self.column}' not found; available: {', '.join(sorted(batch))}"
            )
        texts = batch[self.column]
        ids = batch[self.id_column] if self.id_column else None
        identity = self._groups(list(range(self.axis.k)))
        substituter = self.substituter
        # One entry per output row: the input row it copies, its text, flag and groups;
        # the other columns are gathered once at the end (cheaper than row by row).
        sources: list[int] = []
        new_texts: list[str] = []
        flags: list[bool] = []
        groups: list[dict[str, str]] = []
        records: list[str] = []
        for row, text in enumerate(texts):
            # The key (a hash of the text when there is no id) is computed only when a
            # coin or a draw needs it: most documents of a corpus name no group.
            key = None if ids is None else str(ids[row])
            rendered: list[tuple[str, list[int], list[Any]]] = []
            analysis = None
            if self.mode == "cds":
                key = key if key is not None else text_key(text)
                chosen = should_substitute(self.seed, key, self.probability)
            else:
                chosen = True
            if chosen:
                analysis = substituter.analyse(text, unlisted=self.report)
                if analysis.matches:
                    key = key if key is not None else text_key(text)
                    for mapping in self.mappings(key):
                        edits = substituter.edits(analysis, mapping)
                        rendered.append((apply_edits(text, edits), mapping, edits))
            first = len(sources)
            if self.mode == "cda" or not rendered:
                sources.append(row)
                new_texts.append(text)
                flags.append(False)
                groups.append(identity)
            for new_text, mapping, _ in rendered:
                sources.append(row)
                new_texts.append(new_text)
                flags.append(True)
                groups.append(self._groups(mapping))
            if self.report:
                records.append(self._record(analysis, rendered))
                records.extend([""] * (len(sources) - first - 1))
        output = {name: [values[row] for row in sources] for name, values in batch.items()}
        output[self.column] = new_texts
        output["counterfactual"] = flags
        output[GROUPS_COLUMN] = groups
        if self.report:
            output[REPORT_COLUMN] = records
        return output

    def _record(self, analysis: Any, rendered: list[tuple[str, list[int], list[Any]]]) -> str:
        """One input document's report record (:class:`AxisReport` sums them)."""
        pairs: Counter = Counter()
        for _, _, edits in rendered:
            pairs.update(edit.kind for edit in edits if edit.kind != "article")
        return json.dumps(
            {
                "counterfactuals": len(rendered),
                "pairs": dict(pairs),
                "kept": dict(analysis.kept) if analysis else {},
                "unlisted": dict(analysis.unlisted) if analysis else {},
            }
        )


class AxisReport:
    """Totals of :class:`AxisCounterfactualMapper` report records over a corpus.

    Args:
        axis: The axis substituted.
    """

    def __init__(self, axis: BiasAxis) -> None:
        self.axis = axis
        self.documents = 0
        self.documents_substituted = 0
        self.counterfactuals = 0
        self.pairs: Counter = Counter()
        self.kept: Counter = Counter()
        self.unlisted: Counter = Counter()

    def add(self, record: str) -> None:
        """Adds one input document's record (the empty records of added rows are skipped)."""
        if not record:
            return
        data = json.loads(record)
        self.documents += 1
        self.documents_substituted += bool(data["counterfactuals"])
        self.counterfactuals += data["counterfactuals"]
        self.pairs.update(data["pairs"])
        self.kept.update(data["kept"])
        self.unlisted.update(data["unlisted"])

    def per_group(self) -> dict[str, int]:
        """Substitutions per source group (every group of the axis, zeros included)."""
        counts = dict.fromkeys(self.axis.groups, 0)
        for pair, number in self.pairs.items():
            counts[pair.split("->")[0]] += number
        return counts

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "axis": self.axis.record(),
            "documents_total": self.documents,
            "documents_substituted": self.documents_substituted,
            "counterfactuals": self.counterfactuals,
            "substitutions_total": sum(self.pairs.values()),
            "substitutions_per_group": self.per_group(),
            "pairs": dict(self.pairs.most_common()),
            "kept": dict(self.kept.most_common()),
            "unlisted": dict(self.unlisted.most_common()),
        }

    def summary(self) -> str:
        """A few lines for the terminal."""
        groups = ", ".join(f"{group} {n}" for group, n in self.per_group().items())
        lines = [f"substitutions per group: {groups}"]
        if self.kept:
            kept = ", ".join(f"{reason} {n}" for reason, n in self.kept.most_common())
            lines.append(f"axis words left alone: {kept}")
        if self.unlisted:
            words = ", ".join(f"{word} ({n})" for word, n in self.unlisted.most_common(10))
            lines.append(f"words that look like axis words but are in no tuple: {words}")
        return "\n".join(lines)
