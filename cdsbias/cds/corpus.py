"""CDS and CDA over plain-text corpora and ``datasets.Dataset`` columns.

* ``cds``: each document is replaced by its counterfactual with probability ``p`` (default
  0.5, as in Hall Maudslay et al. 2019; ``p = 1.0`` swaps everything, as in the original
  GAP setup).
* ``cda``: two-sided counterfactual data augmentation: every document is kept and its
  counterfactual is added after it.

The coin for a document is drawn from ``random.Random`` seeded with the seed and a hash of
the document's key (its id, or its text when it has none), so the result does not depend on
the order in which documents are processed, the batch size, or ``num_proc``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cdsbias.cds.document_seed import document_rng, text_key
from cdsbias.cds.edits import apply_edits
from cdsbias.cds.rules_digest import rules_digest
from cdsbias.errors import CdsbiasError

if TYPE_CHECKING:
    from cdsbias.cds.edits import Edit
    from cdsbias.cds.forms import GenderForms
    from cdsbias.cds.languages.base import Language, Skip
    from cdsbias.cds.wordlists import WordLists

MODES = ("cds", "cda")
DEFAULT_PROBABILITY = 0.5
#: Column that ``CounterfactualMapper(report=True)`` adds: per input document, a JSON record
#: ``[substituted, pairs, kinds, unlisted, skipped]`` (see ``SubstitutionReport``); ``""`` on the
#: added rows of ``cda`` mode, so every input document has exactly one record.
REPORT_COLUMN = "_cds_report"


def validate_settings(mode: str, probability: float) -> None:
    """Raises a one-line error for an unknown mode or a probability outside [0, 1]."""
    if mode not in MODES:
        raise CdsbiasError(f"Unknown mode '{mode}'; use one of: {', '.join(MODES)}")
    if not 0.0 <= probability <= 1.0 or probability != probability:
        raise CdsbiasError(f"--probability must be in [0, 1], got {probability}")


def should_substitute(seed: int, key: str, probability: float) -> bool:
    """Flips the document's seeded coin; ``probability`` 1 always and 0 never substitutes."""
    if probability >= 1.0:
        return True
    if probability <= 0.0:
        return False
    return document_rng(seed, key).random() < probability


class CounterfactualMapper:
    """A picklable map function for ``datasets.Dataset.map(batched=True, num_proc=...)``.

    In ``cds`` mode the batch keeps its size and the text column is substituted per
    document; in ``cda`` mode every row is followed by its counterfactual copy (other
    columns are duplicated). A boolean column ``counterfactual`` tells which rows were
    substituted.

    Example:
        >>> mapper = CounterfactualMapper(column="text", probability=0.5, seed=1)
        >>> dataset = dataset.map(mapper, batched=True, num_proc=4)

    Args:
        column: Name of the text column.
        mode: ``"cds"`` or ``"cda"``.
        probability: CDS substitution probability (ignored in ``cda`` mode).
        seed: Seed of the per-document coins.
        names: Whether to swap first names.
        id_column: Column whose value keys the per-document coin; default the text itself.
        analyzer: ``"rules"`` (default), ``"spacy"`` or ``"auto"``; loaded lazily in each
            worker.
        spacy_model: spaCy model package or folder; default ``build_substituter``'s.
        wordlists: Custom word and name lists; default the shipped ones.
        report: Also add ``REPORT_COLUMN`` with each document's substitution counts, for
            ``SubstitutionReport`` totals over a whole dataset.
        language: The CDS language code (``en``, ``da``, ...; cdsbias.cds.languages).
            The first batch each process maps is checked against the other languages
            (``check_language``): a corpus the chosen rules hardly touch gets a warning.
        language_option: How the user chose the language, named in that warning.
        language_options: Passed to the language's constructor, e.g. ``{"agreement":
            False}`` for German's naive variant.
        gender_forms: Binary (None, the default), neutral or both (cdsbias.cds.forms).
            With ``binary+neutral`` in ``cda`` mode each row is followed by both its
            binary and its neutral counterfactual.
    """

    def __init__(
        self,
        column: str = "text",
        *,
        mode: str = "cds",
        probability: float = DEFAULT_PROBABILITY,
        seed: int = 0,
        names: bool = True,
        id_column: str | None = None,
        analyzer: str = "rules",
        spacy_model: str | None = None,
        wordlists: WordLists | None = None,
        report: bool = False,
        language: str = "en",
        language_option: str = "cds_language",
        language_options: dict[str, Any] | None = None,
        gender_forms: GenderForms | None = None,
    ) -> None:
        validate_settings(mode, probability)
        self.column = column
        self.mode = mode
        self.probability = probability
        self.seed = seed
        self.names = names
        self.id_column = id_column
        self.analyzer = analyzer
        # In the datasets cache fingerprint: a corpus mapped by other rules is mapped again.
        self.rules = rules_digest()
        # Set only when given, so the datasets cache fingerprint of mappers built without
        # them (the training path) is the same as before these options existed.
        if spacy_model is not None:
            self.spacy_model = spacy_model
        if wordlists is not None:
            self.wordlists = wordlists
        if report:
            self.report = True
        if language != "en":
            from cdsbias.cds.languages import language_class

            language_class(language)  # an unknown code fails here, not in a worker
            self.language = language
        if language_option != "cds_language":
            self.language_option = language_option
        if language_options:
            self.language_options = dict(language_options)
        if gender_forms is not None and gender_forms.neutral:
            gender_forms.validate(language)  # a bad setting fails here, not in a worker
            self.gender_forms = gender_forms
        self._substituter = None

    def __getstate__(self) -> dict[str, Any]:
        # Workers rebuild the substituter (and any spaCy pipeline) themselves.
        state = dict(self.__dict__)
        state["_substituter"] = None
        # Not part of the fingerprint: whether this process has checked the language yet.
        state.pop("_language_checked", None)
        return state

    @property
    def substituter(self) -> Language:
        """The engine, built on first use in each process."""
        if self._substituter is None:
            from cdsbias.cds.spacy_analysis import build_substituter

            options: dict[str, Any] = {}
            if getattr(self, "spacy_model", None) is not None:
                options["spacy_model"] = self.spacy_model
            if getattr(self, "wordlists", None) is not None:
                options["wordlists"] = self.wordlists
            options.update(getattr(self, "language_options", {}))
            if getattr(self, "gender_forms", None) is not None:
                options["gender_forms"] = self.gender_forms
                options["seed"] = self.seed
            self._substituter = build_substituter(
                names=self.names,
                analyzer=self.analyzer,
                language=getattr(self, "language", "en"),
                **options,
            )
        return self._substituter

    def _record(self, text: str, edits: list[Edit], substituted: bool, skips: list[Skip]) -> str:
        """One document's ``REPORT_COLUMN`` value, counted exactly as ``SubstitutionReport``."""
        from cdsbias.cds.report import SubstitutionReport

        part = SubstitutionReport()
        part.add("", text, edits, substituted=substituted, language=self.substituter, skipped=skips)
        return json.dumps(
            [
                substituted,
                dict(part.pairs),
                dict(part.kinds),
                dict(part.unlisted),
                dict(part.skipped),
            ]
        )

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if self.column not in batch:
            raise CdsbiasError(
                f"Column '{self.column}' not found; available: {', '.join(sorted(batch))}"
            )
        texts = batch[self.column]
        if not getattr(self, "_language_checked", False) and texts:
            from cdsbias.cds.languages import check_language

            self._language_checked = True
            check_language(
                texts,
                getattr(self, "language", "en"),
                option=getattr(self, "language_option", "cds_language"),
            )
        keys = (
            [str(value) for value in batch[self.id_column]]
            if self.id_column
            else [text_key(text) for text in texts]
        )
        forms = getattr(self, "gender_forms", None)
        if self.mode == "cda" and forms is not None and forms.forms == "binary+neutral":
            return self._both_forms(batch, texts)
        if self.mode == "cds":
            chosen = [should_substitute(self.seed, key, self.probability) for key in keys]
        else:
            chosen = [True] * len(texts)
        to_substitute = [text for text, flag in zip(texts, chosen, strict=True) if flag]
        # substitute_many is apply_edits over edits_many; the edits are kept for the report.
        report = getattr(self, "report", False)
        chosen_skips: list[list[Skip]] = []
        chosen_edits = (
            self.substituter.edits_many(to_substitute, skipped=chosen_skips if report else None)
            if to_substitute
            else []
        )
        all_edits = iter(chosen_edits)
        edits = [next(all_edits) if flag else [] for flag in chosen]
        all_skips = iter(chosen_skips)
        skips = [next(all_skips) if flag and report else [] for flag in chosen]
        new_texts = [
            apply_edits(text, text_edits) if flag else text
            for text, text_edits, flag in zip(texts, edits, chosen, strict=True)
        ]
        records = (
            [
                self._record(t, e, f, s)
                for t, e, f, s in zip(texts, edits, chosen, skips, strict=True)
            ]
            if report
            else []
        )
        if self.mode == "cds":
            output = dict(batch)
            output[self.column] = new_texts
            output["counterfactual"] = chosen
            if report:
                output[REPORT_COLUMN] = records
            return output
        output = {name: [] for name in batch}
        output["counterfactual"] = []
        if report:
            output[REPORT_COLUMN] = []
        for row in range(len(texts)):
            for name, values in batch.items():
                output[name].extend([values[row], values[row]])
            output[self.column][-1] = new_texts[row]
            output["counterfactual"].extend([False, True])
            if report:
                output[REPORT_COLUMN].extend([records[row], ""])
        return output

    def _both_forms(self, batch: dict[str, list[Any]], texts: list[str]) -> dict[str, list[Any]]:
        """CDA with ``binary+neutral``: each row, then its binary and its neutral copy."""
        both = [self.substituter.both(text) for text in texts]  # type: ignore[attr-defined]
        report = getattr(self, "report", False)
        output: dict[str, list[Any]] = {name: [] for name in batch}
        output["counterfactual"] = []
        if report:
            output[REPORT_COLUMN] = []
        for row, (text, (binary, neutral)) in enumerate(zip(texts, both, strict=True)):
            for name, values in batch.items():
                output[name].extend([values[row]] * 3)
            output[self.column][-2:] = [apply_edits(text, binary), apply_edits(text, neutral)]
            output["counterfactual"].extend([False, True, True])
            if report:
                record = self._record(text, binary + neutral, True, [])
                output[REPORT_COLUMN].extend([record, "", ""])
        return output


def counterfactual_batch(
    batch: dict[str, list[Any]],
    column: str = "text",
    *,
    mode: str = "cds",
    probability: float = DEFAULT_PROBABILITY,
    seed: int = 0,
    names: bool = True,
    id_column: str | None = None,
    language: str = "en",
) -> dict[str, list[Any]]:
    """Function form of ``CounterfactualMapper`` for ``Dataset.map(..., fn_kwargs=...)``.

    Builds the rule-based engine once per process (cached).
    """
    key = (column, mode, probability, seed, names, id_column, language)
    mapper = _MAPPER_CACHE.get(key)
    if mapper is None:
        mapper = CounterfactualMapper(
            column,
            mode=mode,
            probability=probability,
            seed=seed,
            names=names,
            id_column=id_column,
            language=language,
        )
        _MAPPER_CACHE[key] = mapper
    return mapper(batch)


_MAPPER_CACHE: dict[tuple, CounterfactualMapper] = {}


def substitute_texts(
    texts: list[str],
    *,
    mode: str = "cds",
    probability: float = DEFAULT_PROBABILITY,
    seed: int = 0,
    names: bool = True,
    analyzer: str = "rules",
    language: str = "en",
) -> list[str]:
    """CDS / CDA over a list of plain texts (keys: each text's hash)."""
    mapper = CounterfactualMapper(
        "text",
        mode=mode,
        probability=probability,
        seed=seed,
        names=names,
        analyzer=analyzer,
        language=language,
    )
    return mapper({"text": list(texts)})["text"]
