"""Optional spaCy path: part-of-speech tags decide her/his, NER decides given names.

spaCy is an optional extra (``pip install 'cdsbias[spacy]'`` plus an English model such as
``en_core_web_sm``). Without it, the rule-based fallback in cdsbias.cds.languages.en_pronouns
and en_names is used; ``analyzer="auto"`` picks spaCy when a model loads.

Decisions taken from a spaCy ``Doc``:

* ``her``: possessive (-> his) if tagged ``PRP$`` or attached as ``poss``; otherwise
  object (-> him).
* ``his``: determiner (-> her) if attached as ``poss``; otherwise independent (-> hers).
* Given names: in each ``PERSON`` entity, after leading titles (Mr, Queen, ...), every
  token but the last is a given name (first and middle names) and the last is a surname;
  a one-token entity is a given name. Where NER tags no PERSON, the rule-based decision
  stands (see ``CounterfactualSubstituter._ner_given_names``); other entity types are not
  used (on GAP validation, vetoing names inside GPE/ORG entities raised the rows that a
  second substitution fails to restore from 28 to 71 of 454).

Measured with en_core_web_sm 3.8.0 on GAP: ``her`` accuracy 177/180 (98.3 %; rules
176/180 then, 178/180 since the double-object rules); 4,300 words/s against 1.2 million for
the rules (scripts/bench_cds.py); a second substitution restores 93.6 % of rows (rules
96.9 % then, 99.0 % now), because the model's NER and tags change when names and pronouns
change. (The spaCy figures predate the rule changes and were not re-measured: spaCy is not
installed in the development environment.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cdsbias.cds.languages import DEFAULT_LANGUAGE, Language, get_language
from cdsbias.cds.languages.en_analysis import Analysis
from cdsbias.cds.languages.en_names import GIVEN_NAME_TITLES, SURNAME_TITLES
from cdsbias.errors import CdsbiasError

if TYPE_CHECKING:
    from cdsbias.cds.forms import GenderForms

DEFAULT_SPACY_MODEL = "en_core_web_sm"
ANALYZERS = ("rules", "spacy", "auto")
_TITLES = GIVEN_NAME_TITLES | SURNAME_TITLES


class SpacyAnalyzer:
    """Wraps a loaded spaCy pipeline (anything with ``pipe`` yielding spaCy-like docs).

    Args:
        nlp: The pipeline; it needs a tagger/parser for her/his and ``ner`` for names.
        model_name: Shown in reports.
        batch_size: Texts per ``nlp.pipe`` batch.
    """

    def __init__(self, nlp: Any, model_name: str = "spacy", batch_size: int = 64) -> None:
        self.nlp = nlp
        self.name = f"spacy:{model_name}"
        self.batch_size = batch_size

    @classmethod
    def load(cls, model: str = DEFAULT_SPACY_MODEL) -> SpacyAnalyzer:
        """Loads a spaCy model by package name or folder.

        Raises:
            CdsbiasError: spaCy or the model is not installed.
        """
        try:
            import spacy
        except ImportError:
            raise CdsbiasError(
                "spaCy is not installed; pip install 'cdsbias[spacy]' and an English model, "
                "or use the rule-based analyser"
            ) from None
        try:
            nlp = spacy.load(model, disable=["lemmatizer"])
        except OSError:
            raise CdsbiasError(
                f"spaCy model '{model}' is not installed (python -m spacy download {model}); "
                "or use the rule-based analyser"
            ) from None
        from pathlib import Path

        return cls(nlp, model_name=Path(model).name)

    def analyze_many(self, texts: Iterable[str]) -> list[Analysis]:
        """Runs the pipeline over ``texts`` and extracts the decisions of each."""
        return [analysis_from_doc(doc) for doc in self.nlp.pipe(texts, batch_size=self.batch_size)]


def analysis_from_doc(doc: Any) -> Analysis:
    """Turns one spaCy ``Doc`` into an ``Analysis`` keyed by character offsets."""
    analysis = Analysis(given_names=set())
    assert analysis.given_names is not None
    for token in doc:
        lower = token.lower_
        if lower == "her":
            analysis.possessive[token.idx] = token.tag_ == "PRP$" or token.dep_ == "poss"
        elif lower == "his":
            analysis.possessive[token.idx] = token.dep_ == "poss"
    for entity in doc.ents:
        if entity.label_ != "PERSON":
            # GPE/ORG tags do not veto a name: the small models often tag a lone or swapped
            # name as a place or company ("Chad", "Bridget"), and trusting that made a
            # second substitution miss names the first one introduced.
            continue
        words = [token for token in entity if token.is_alpha]
        while words and words[0].lower_ in _TITLES and len(words) > 1:
            words = words[1:]
        if not words:
            continue
        if len(words) == 1:
            analysis.given_names.add(words[0].idx)
            continue
        analysis.given_names.update(token.idx for token in words[:-1])
        analysis.surnames.add(words[-1].idx)
    return analysis


def spacy_available(model: str = DEFAULT_SPACY_MODEL) -> bool:
    """Tells whether spaCy and ``model`` (package name or model folder) are installed,
    without loading the model."""
    import importlib.util
    from pathlib import Path

    if importlib.util.find_spec("spacy") is None:
        return False
    return Path(model).is_dir() or importlib.util.find_spec(model) is not None


def build_substituter(
    *,
    names: bool = True,
    analyzer: str = "rules",
    spacy_model: str = DEFAULT_SPACY_MODEL,
    language: str = DEFAULT_LANGUAGE,
    gender_forms: GenderForms | None = None,
    seed: int = 0,
    **kwargs: Any,
) -> Language:
    """Builds a language's engine with the requested analyser.

    Args:
        names: Whether to swap first names.
        analyzer: ``"rules"``, ``"spacy"`` (error if unavailable) or ``"auto"`` (spaCy when
            the model is installed, else rules). The spaCy analysis is English's; other
            languages always use their rules (``"auto"``) or refuse ``"spacy"``.
        spacy_model: spaCy model package name.
        language: The CDS language code (cdsbias.cds.languages.LANGUAGES).
        gender_forms: Binary (default, None), neutral or both (cdsbias.cds.forms).
        seed: Seed of the per-document choice of ``binary+neutral``.
        **kwargs: Passed to the language (English: ``wordlists``).
    """
    if gender_forms is not None and gender_forms.neutral:
        from cdsbias.cds.forms import apply_forms

        gender_forms.validate(language)  # before any spaCy model is loaded
        binary = build_substituter(
            names=names, analyzer=analyzer, spacy_model=spacy_model, language=language, **kwargs
        )
        return apply_forms(binary, gender_forms, seed=seed)
    if analyzer not in ANALYZERS:
        raise CdsbiasError(f"Unknown analyser '{analyzer}'; use one of: {', '.join(ANALYZERS)}")
    if language != "en":
        if analyzer == "spacy":
            raise CdsbiasError(
                f"the spaCy analyser decides English her/his only; use --analyzer rules "
                f"(or auto) with language '{language}'"
            )
        return get_language(language, names=names, **kwargs)
    spacy_analyzer = None
    if analyzer == "spacy" or (analyzer == "auto" and spacy_available(spacy_model)):
        spacy_analyzer = SpacyAnalyzer.load(spacy_model)
    return get_language("en", names=names, analyzer=spacy_analyzer, **kwargs)
