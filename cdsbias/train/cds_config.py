"""The recipe keys of counterfactual data substitution: mode, probability, language, the
gender forms of neutral rewriting and, off gender, the counterfactuals of an n-ary axis."""

from __future__ import annotations

from dataclasses import dataclass, field

from cdsbias.cds.corpus import DEFAULT_PROBABILITY
from cdsbias.cds.forms import GenderForms


@dataclass
class CDSConfig:
    """Counterfactual data substitution applied to the training documents."""

    cds_mode: str = field(
        default="cds",
        metadata={"help": "'cds' (substitute), 'cda' (original + counterfactual) or 'none'."},
    )
    cds_probability: float = field(
        default=DEFAULT_PROBABILITY,
        metadata={
            "help": f"Per-document substitution probability in 'cds' mode (default "
            f"{DEFAULT_PROBABILITY}, as Hall Maudslay et al. 2019 and `cdsbias cds`); 1.0 "
            "reproduces the GAP setup of Bartl et al. 2020 (recipes/gap_cds.yaml)."
        },
    )
    cds_names: bool = field(default=True, metadata={"help": "Also swap first names."})
    cds_seed: int = field(default=0, metadata={"help": "Seed of the per-document coins."})
    cds_language: str = field(
        default="en",
        metadata={
            "help": "Language of the corpus, whose CDS rules swap it: en, da, ... "
            "(cdsbias.cds.languages; `cdsbias cds --language`)."
        },
    )
    cds_agreement: bool = field(
        default=True,
        metadata={
            "help": "German only: false is the naive variant German(agreement=False), which "
            "swaps nouns and pronouns word for word and re-inflects nothing that agrees "
            "with them (Zmigrod et al. 2019's baseline; docs/cds_german.md)."
        },
    )
    gender_forms: str = field(
        default="binary",
        metadata={
            "help": "binary (swap he<->she), neutral (he/she -> they or a neopronoun, with "
            "verb agreement; English) or binary+neutral (each document one or the other, "
            "both with cds_mode: cda); cdsbias.cds.forms, docs/cds.md."
        },
    )
    neutral_pronouns: str = field(
        default="they", metadata={"help": "Neutral pronoun family: they, xe, ze or ey."}
    )
    neutral_reflexive: str = field(
        default="themself", metadata={"help": "Reflexive of singular they: themself or themselves."}
    )
    neutral_nouns: bool = field(
        default=False,
        metadata={"help": "Neutral rewriting also rewrites person nouns (chairman -> chair)."},
    )
    neutral_kinship: bool = field(
        default=False,
        metadata={"help": "With neutral_nouns, also kinship terms (mother -> parent)."},
    )
    neutral_names: bool = field(
        default=False, metadata={"help": "Neutral rewriting replaces given names by unisex names."}
    )
    cds_counterfactuals: str = field(
        default="one",
        metadata={
            "help": "Axes other than gender (bias_axis): one (each group to a drawn other "
            "group, bias-bench's CDA) or all (the k-1 cyclic shifts of the groups); "
            "cds_mode then defaults to cda (cdsbias.cds.axis_corpus, docs/axes.md)."
        },
    )

    def forms(self) -> GenderForms:
        """The gender-form settings (cdsbias.cds.forms)."""
        return GenderForms(
            forms=self.gender_forms,
            pronouns=self.neutral_pronouns,
            reflexive=self.neutral_reflexive,
            nouns=self.neutral_nouns,
            kinship=self.neutral_kinship,
            names=self.neutral_names,
        )
