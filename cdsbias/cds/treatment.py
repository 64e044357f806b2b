"""What training did to the corpus — counterfactual substitution (CDS), augmentation (CDA)
or nothing — described for ``cdsbias compare`` and the model card.

The data choice is the corpus's, not a debiasing method's: a dropout run on original
text cites no CDS paper, and an adapter trained on CDA cites the CDA paper. A run that
trains nothing (``posthoc_only: true``) treats no text: its post-hoc method reads the corpus
as it is, so it has the label of original text and no CDS/CDA tag or citation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdsbias.cds.corpus import DEFAULT_PROBABILITY

CDS_CITATIONS = (
    "Hall Maudslay, R., Gonen, H., Cotterell, R., & Teufel, S. (2019). It's All in the Name: "
    "Mitigating Gender Bias with Name-Based Counterfactual Data Substitution. EMNLP-IJCNLP 2019.",
    "Bartl, M., Nissim, M., & Gatt, A. (2020). Unmasking Contextual Stereotypes: Measuring "
    "and Mitigating BERT's Gender Bias. GeBNLP @ COLING 2020.",
)
NARY_CDA_CITATION = (
    "Meade, N., Poole-Dayan, E., & Reddy, S. (2022). An Empirical Survey of the Effectiveness "
    "of Debiasing Techniques for Pre-trained Language Models. ACL 2022."
)
CDA_CITATION = (
    "Webster, K., Wang, X., Tenney, I., Beutel, A., Pitler, E., Pavlick, E., Chen, J., Chi, E., "
    "& Petrov, S. (2020). Measuring and Reducing Gendered Correlations in Pre-trained Models. "
    "arXiv:2010.06032."
)


class CorpusTreatment:
    """The corpus treatment of a run, read from its recipe values (``cds_mode``,
    ``cds_probability``, ``cds_names``) as they were in effect; ``posthoc_only: true`` (no
    training) leaves the text as it is whatever ``cds_mode`` says."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        #: False for a run that trained nothing (``posthoc_only: true``).
        self.trained = not values.get("posthoc_only", False)
        self.mode = values.get("cds_mode", "cds") if self.trained else "none"
        self.probability = float(values.get("cds_probability", DEFAULT_PROBABILITY))
        self.names = values.get("cds_names", True) is not False
        self.language = values.get("cds_language", "en")
        #: ``binary``, ``neutral`` or ``binary+neutral`` (cdsbias.cds.forms).
        self.forms = values.get("gender_forms", "binary")
        self.neutral_pronouns = values.get("neutral_pronouns", "they")
        #: The axis whose words were substituted (cdsbias.axes); gender unless set.
        self.axis = str(values.get("bias_axis", "gender"))
        self.counterfactuals = values.get("cds_counterfactuals", "one")

    @property
    def nary(self) -> bool:
        """Whether an axis other than gender was substituted (cdsbias.cds.axis_corpus)."""
        from cdsbias.cds.axis_corpus import is_gender

        return not is_gender(self.axis)

    @property
    def axis_name(self) -> str:
        """The axis as a reader names it: ``religion``, or a file's key or stem (``age``
        for ``/data/age.tsv``), so that labels and cards do not carry local paths."""
        from cdsbias.axes import is_axis_file
        from cdsbias.axes.files import split_reference

        if not is_axis_file(self.axis):
            return self.axis
        path, key = split_reference(self.axis)
        return key or path.stem

    @property
    def label(self) -> str:
        """``CDS p=1.0``, ``CDA`` or ``original text`` (plus ``(no names)``)."""
        if self.mode == "none":
            return "original text"
        text = f"CDS p={self.probability}" if self.mode == "cds" else "CDA"
        if self.nary:
            groups = ", all groups" if self.counterfactuals == "all" else ""
            return f"{text} ({self.axis_name}{groups})"
        if self.forms != "binary":
            text += f" {self.forms} ({self.neutral_pronouns})"
        return text + ("" if self.names else " (no names)")

    @property
    def tags(self) -> list[str]:
        return {
            "cds": ["counterfactual-data-substitution"],
            "cda": ["counterfactual-data-augmentation"],
        }.get(self.mode, [])

    @property
    def citations(self) -> list[str]:
        if self.nary and self.mode != "none":
            return [NARY_CDA_CITATION]
        return {"cds": list(CDS_CITATIONS), "cda": [CDA_CITATION]}.get(self.mode, [])

    def card_text(self, corpus: str) -> str:
        """The card's sentence on the training data."""
        if not self.trained:
            return (
                f"not fine-tuned (`posthoc_only: true`): {corpus}, as it is (no "
                "counterfactual substitution), was read only for the post-hoc step and the "
                "held-out loss"
            )
        if self.mode == "none":
            return f"trained on {corpus} as it is (no counterfactual substitution)"
        if self.nary:
            return self._nary_card_text(corpus)
        from cdsbias.cds.languages import language_class

        language = language_class(self.language)
        examples = language.swap_examples
        if self.names:
            swapped = "gendered words and first names were swapped"
        else:
            swapped, examples = "gendered words were swapped", examples[:-1]
        if examples:
            swapped += f" ({', '.join(examples)}, ...)"
        if language.code != "en":
            swapped += f" with the {language.name} rules"
        if self.forms != "binary":
            neutral = (
                f"gendered pronouns were rewritten to the neutral '{self.neutral_pronouns}' "
                "family with verb agreement (docs/cds.md)"
            )
            swapped = (
                neutral
                if self.forms == "neutral"
                else f"{swapped}, or (each document by a seeded coin; both copies under CDA) "
                f"{neutral}"
            )
        if self.mode == "cda":
            return (
                f"trained with **counterfactual data augmentation** (CDA, two-sided as in "
                f"Webster et al. 2020) on {corpus} plus a copy in which {swapped}"
            )
        return (
            f"trained with **counterfactual data substitution** (CDS, Hall Maudslay et al. "
            f"2019; Bartl et al. 2020) on {corpus} in which {swapped}, each document with "
            f"probability p = {self.probability}"
        )

    def _nary_card_text(self, corpus: str) -> str:
        """The card's sentence for an axis other than gender (race, religion, a file)."""
        if self.counterfactuals == "all":
            swapped = (
                f"one copy per other group of the '{self.axis_name}' axis, in which every group's "
                "words were replaced by the next group's (the cyclic shifts of the groups)"
            )
        else:
            swapped = (
                f"a copy in which each group of the '{self.axis_name}' axis was replaced by "
                "another group drawn at random (per document, as Meade et al. 2022)"
            )
        if self.mode == "cda":
            return (
                f"trained with **n-ary counterfactual data augmentation** (CDA, Meade et al. "
                f"2022) on {corpus} plus, for each document naming a group, {swapped}"
            )
        return (
            f"trained with **n-ary counterfactual data substitution** on {corpus}, each "
            f"document naming a group replaced with probability p = {self.probability} by "
            f"{swapped}"
        )
