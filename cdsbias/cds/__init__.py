"""Counterfactual data substitution (CDS) and augmentation (CDA): gender, and any other
bias axis (race, religion, a user's file; cdsbias.axes).

Entry points:

* ``CounterfactualSubstituter`` (engine): English word pairs, her/his by context, given
  names; ``get_language(code)`` (languages): the rules of any registered language.
* ``counterfactual_gap`` / ``read_gap`` / ``format_gap`` (gap): GAP files with re-derived
  offsets.
* ``CounterfactualMapper`` / ``counterfactual_batch`` (corpus): ``datasets.Dataset.map``.
* ``load_corpus`` / ``write_corpus`` (corpus_io): text/JSON lines/CSV/Parquet files or a
  ``datasets`` id in, ``.jsonl``/``.parquet``/``save_to_disk`` folder out.
* ``build_substituter`` (spacy_analysis): choose the rule-based or spaCy analyser.
* ``AxisSubstituter`` (axis_substitution) / ``AxisCounterfactualMapper`` (axis_corpus): n-ary
  CDA and CDS for an axis other than gender (docs/axes.md).
"""

from cdsbias.cds.axis_corpus import AxisCounterfactualMapper
from cdsbias.cds.axis_substitution import AxisSubstituter
from cdsbias.cds.corpus import (
    DEFAULT_PROBABILITY,
    MODES,
    CounterfactualMapper,
    counterfactual_batch,
    should_substitute,
    substitute_texts,
)
from cdsbias.cds.corpus_io import load_corpus, write_corpus
from cdsbias.cds.engine import CounterfactualSubstituter, Edit, apply_edits, map_offset
from cdsbias.cds.gap import counterfactual_gap, format_gap, parse_gap, read_gap
from cdsbias.cds.languages import LANGUAGES, Language, Skip, get_language
from cdsbias.cds.report import SubstitutionReport
from cdsbias.cds.spacy_analysis import SpacyAnalyzer, build_substituter
from cdsbias.cds.wordlists import WordLists, load_wordlists

__all__ = [
    "DEFAULT_PROBABILITY",
    "LANGUAGES",
    "MODES",
    "AxisCounterfactualMapper",
    "AxisSubstituter",
    "CounterfactualMapper",
    "CounterfactualSubstituter",
    "Edit",
    "Language",
    "Skip",
    "SpacyAnalyzer",
    "SubstitutionReport",
    "WordLists",
    "apply_edits",
    "build_substituter",
    "counterfactual_batch",
    "counterfactual_gap",
    "format_gap",
    "get_language",
    "load_corpus",
    "load_wordlists",
    "map_offset",
    "parse_gap",
    "read_gap",
    "should_substitute",
    "substitute_texts",
    "write_corpus",
]
