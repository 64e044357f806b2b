"""bias-bench's own word lists as axis variants: ``gender@bias-bench``, ``race@bias-bench``
and ``religion@bias-bench``.

Meade et al. (2022, bias-bench) choose CDA's substitutions and SentenceDebias's and INLP's
fit sentences with ``data/bias_attribute_words.json``, shipped here unchanged
(``cdsbias/resources/axes/bias_attribute_words.json``, MIT; the README there gives the
licence). cdsbias's own lists differ: race and religion are revised
(``resources/axes/README.md``), gender is the project's 221 CDS pairs where bias-bench lists
57. The lists move the numbers: fitted with bias-bench's code on the same sentences,
cdsbias's race and religion lists turn bert-base-uncased's SentenceDebias direction to
|cos| 0.48 and 0.27 of the one bias-bench's lists give (issue 34). bias-bench's published
numbers are therefore comparable only on its own lists, and a reproduction uses these
variants.

A variant is its base axis (groups, Self-Debias prefix, SEAT tests, CrowS-Pairs and
StereoSet categories) with bias-bench's tuples in bias-bench's order, repeats and all
("black" in two race tuples, "mr." with its full stop, "her" after both "him" and "his"),
``word_lists="bias-bench"`` and ``variant_of`` the base's name. The JSON's columns are the
base axis's groups in order (gender: male, female; race: black, white, asian; religion:
jewish, christian, muslim). The lists are English, so a variant is English only.
"""

from __future__ import annotations

import dataclasses

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_json_axis

#: The variants' :attr:`~cdsbias.axes.base.BiasAxis.word_lists` and name suffix.
LISTS = "bias-bench"
#: The shipped copy of bias-bench's ``data/bias_attribute_words.json``.
FILE = "bias_attribute_words.json"
CITATION = (
    "Meade, N., Poole-Dayan, E., & Reddy, S. (2022). An Empirical Survey of the Effectiveness "
    "of Debiasing Techniques for Pre-trained Language Models. ACL 2022. "
    "McGill-NLP/bias-bench, data/bias_attribute_words.json (MIT)"
)


def variant(base_name: str) -> BiasAxis:
    """The registered axis ``base_name`` with bias-bench's word tuples for it.

    Raises:
        CdsbiasError: The shipped file lacks ``base_name`` (a key of bias-bench's JSON).
    """
    from cdsbias.axes import get_axis

    base = get_axis(base_name)
    path = resources.resource_path("axes", FILE)
    listed = read_json_axis(path, base_name)
    return dataclasses.replace(
        base,
        name=f"{base_name}@{LISTS}",
        tuples=listed.tuples,
        forms=(),
        source=f"shipped: {path}#{base_name}",
        description=f"{base.description}; bias-bench's own word lists (Meade et al. 2022)",
        languages=("en",),
        citations=(CITATION,),
        word_lists=LISTS,
        variant_of=base_name,
    )


def gender() -> BiasAxis:
    """``gender@bias-bench``: bias-bench's 57 gender pairs."""
    return variant("gender")


def race() -> BiasAxis:
    """``race@bias-bench``: bias-bench's 6 race tuples."""
    return variant("race")


def religion() -> BiasAxis:
    """``religion@bias-bench``: bias-bench's 6 religion tuples."""
    return variant("religion")
