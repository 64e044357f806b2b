"""Which gender forms counterfactual substitution writes: ``binary``, ``neutral`` or both.

* ``binary`` (the default): today's swap, he <-> she (cdsbias.cds.languages); nothing in
  this module runs, so binary output is byte-identical to what it was before it existed.
* ``neutral``: gender-neutral rewriting (English: he/she -> they or a neopronoun family,
  cdsbias.cds.languages.en_neutral).
* ``binary+neutral``: each document gets the swap or the neutral form, by a coin seeded
  with the run's seed and the document's text (``MixedForms``), so the choice does not
  depend on batching or ``num_proc``; with ``cds_mode: cda`` a corpus keeps each document
  and adds both (cdsbias.cds.corpus.CounterfactualMapper).

Recipe keys (cdsbias.train.cds_config.CDSConfig) and ``cdsbias cds`` flags: ``gender_forms``
(``--forms``), ``neutral_pronouns`` (``--neutral-pronouns``: they, xe, ze, ey),
``neutral_reflexive`` (``--neutral-reflexive``: themself, themselves), ``neutral_nouns``,
``neutral_kinship`` and ``neutral_names`` (``--neutral-nouns`` ...).
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass, fields
from typing import Any

from cdsbias.cds.document_seed import document_rng, text_key
from cdsbias.cds.edits import Edit
from cdsbias.cds.languages.base import Language, Skip
from cdsbias.cds.pronoun_families import pronoun_family
from cdsbias.errors import CdsbiasError, unknown_name_error

FORMS = ("binary", "neutral", "binary+neutral")
DEFAULT_FORMS = "binary"


def _respelled(forms: str) -> str | None:
    """The form of :data:`FORMS` that ``forms`` names in another order, case or spacing
    (``neutral+binary`` -> ``binary+neutral``), else None."""
    parts = sorted(part.strip().lower() for part in forms.split("+"))
    return next((f for f in FORMS if sorted(f.split("+")) == parts), None)


#: Language code -> ``"module:Class"`` of its neutral rules (imported only when used).
NEUTRAL_LANGUAGES: dict[str, str] = {
    "en": "cdsbias.cds.languages.en_neutral:EnglishNeutral",
}


@dataclass(frozen=True)
class GenderForms:
    """The gender-form settings of a run (module docstring).

    Attributes:
        forms: ``binary``, ``neutral`` or ``binary+neutral``.
        pronouns: The neutral family written: ``they``, ``xe``, ``ze`` or ``ey``.
        reflexive: The reflexive of *they*: ``themself`` or ``themselves``.
        nouns: Also rewrite gendered person nouns (chairman -> chair).
        kinship: With ``nouns``, also kinship terms (mother -> parent).
        names: Replace given names by unisex names.
    """

    forms: str = DEFAULT_FORMS
    pronouns: str = "they"
    reflexive: str = "themself"
    nouns: bool = False
    kinship: bool = False
    names: bool = False

    @property
    def neutral(self) -> bool:
        """True when neutral rewriting takes part."""
        return self.forms != "binary"

    def validate(self, language: str, *, prefix: str = "") -> None:
        """Raises a one-line error for settings that cannot run on ``language``.

        Args:
            language: The CDS language code.
            prefix: How options are spelled in the message: ``""`` for recipe keys
                (``neutral_pronouns``), ``"--"`` for the command line (``--neutral-pronouns``).
        """
        flag = _namer(prefix)
        if self.forms not in FORMS:
            respelled = _respelled(str(self.forms))
            if respelled is not None:  # the right forms, another spelling: name the one
                raise CdsbiasError(
                    f"Unknown gender form '{self.forms}'. Did you mean '{respelled}'? "
                    f"Available: {', '.join(sorted(FORMS))}"
                )
            raise unknown_name_error("gender form", str(self.forms), FORMS)
        if not self.neutral:
            changed = [
                f.name
                for f in fields(self)
                if f.name != "forms" and getattr(self, f.name) != f.default
            ]
            if changed:
                raise CdsbiasError(
                    f"{flag('neutral_' + changed[0])} applies to neutral rewriting; set "
                    f"{flag('gender_forms')} neutral or binary+neutral, or drop it"
                )
            return
        if language not in NEUTRAL_LANGUAGES:
            have = ", ".join(NEUTRAL_LANGUAGES)
            raise CdsbiasError(
                f"{flag('gender_forms')} {self.forms} needs neutral rules, which only these "
                f"languages have: {have}; language '{language}' has none, so use "
                f"{flag('gender_forms')} binary with it"
            )
        pronoun_family(self.pronouns, reflexive=self.reflexive, neutral=True)
        if self.kinship and not self.nouns:
            raise CdsbiasError(
                f"{flag('neutral_kinship')} rewrites kinship nouns and needs "
                f"{flag('neutral_nouns')} too"
            )

    def to_dict(self) -> dict[str, Any]:
        """The settings, for reports."""
        return asdict(self)


def _namer(prefix: str) -> Any:
    def name(key: str) -> str:
        if not prefix:
            return key + ":"
        flag = "forms" if key == "gender_forms" else key.replace("_", "-")
        return prefix + flag

    return name


def neutral_language(code: str, forms: GenderForms, *, analyzer: Any = None) -> Language:
    """Builds language ``code``'s neutral rules with ``forms``' options (validated first)."""
    forms.validate(code)
    module_name, class_name = NEUTRAL_LANGUAGES[code].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(
        pronouns=forms.pronouns,
        reflexive=forms.reflexive,
        nouns=forms.nouns,
        kinship=forms.kinship,
        names=forms.names,
        analyzer=analyzer,
    )


def apply_forms(binary: Language, forms: GenderForms | None, *, seed: int = 0) -> Language:
    """The engine for ``forms``: ``binary`` itself, its language's neutral rules, or both.

    Args:
        binary: The language's binary rules (with its analyser, if any).
        forms: The settings; None or ``binary`` returns ``binary`` unchanged.
        seed: Seed of the per-document choice of ``binary+neutral``.
    """
    if forms is None or not forms.neutral:
        return binary
    neutral = neutral_language(binary.code, forms, analyzer=getattr(binary, "analyzer", None))
    if forms.forms == "neutral":
        return neutral
    return MixedForms(binary, neutral, seed=seed)


class MixedForms(Language):
    """``binary+neutral``: each document gets the binary swap or the neutral rewrite, by a
    coin seeded with ``seed`` and the document's text (probability 1/2 each).

    Args:
        binary: The binary rules.
        neutral: The neutral rules of the same language.
        seed: The run's seed.
    """

    def __init__(self, binary: Language, neutral: Language, *, seed: int = 0) -> None:
        super().__init__(names=binary.names)
        self.binary = binary
        self.neutral = neutral
        self.seed = seed
        self.code = binary.code  # type: ignore[misc]  # the instance reports its languages'
        self.name = binary.name  # type: ignore[misc]
        self.swap_examples = binary.swap_examples  # type: ignore[misc]

    def is_neutral(self, text: str) -> bool:
        """The document's coin: True for the neutral form."""
        return document_rng(self.seed, "gender_forms\x00" + text_key(text)).random() < 0.5

    def edits(self, text: str, *, skipped: list[Skip] | None = None) -> list[Edit]:
        """The binary or the neutral edits of ``text``, by its coin."""
        engine = self.neutral if self.is_neutral(text) else self.binary
        own: list[list[Skip]] = []
        edits = engine.edits_many([text], skipped=own)[0]
        if skipped is not None:
            skipped.extend(own[0])
        return edits

    def both(self, text: str) -> tuple[list[Edit], list[Edit]]:
        """The binary and the neutral edits of ``text`` (CDA with both forms)."""
        return self.binary.edits_many([text])[0], self.neutral.edits_many([text])[0]

    @property
    def known_words(self) -> frozenset[str]:
        """Both rules' words."""
        return self.binary.known_words | self.neutral.known_words

    @property
    def method(self) -> str:
        """The binary rules' method (both use the same analyser)."""
        return self.binary.method

    def unlisted_words(self, text: str) -> list[str]:
        """The binary rules' unlisted words."""
        return self.binary.unlisted_words(text)
