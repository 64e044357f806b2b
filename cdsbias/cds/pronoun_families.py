"""English third-person pronoun families: the five case forms of he, she, they and the
neopronouns xe, ze and ey.

One owner for the forms that gender-neutral rewriting (cdsbias.cds.languages.en_neutral)
writes and that the ``pronoun_fidelity`` benchmark's generated set asks a model to fill.
*xe* and *ey* are written as in MISGENDERED's release (Hossain et al. 2023, "MISGENDERED:
Limits of Large Language Models in Understanding Pronouns", ACL 2023;
github.com/tamannahossainkay/misgendered-backend, ``pronouns.csv``); *ze* takes the
*ze/hir* paradigm, where MISGENDERED writes *ze/zir/zir/zirs/zirself*. ``pronoun_fidelity``
on the released data uses the release's own forms
(cdsbias.benchmarks.pronoun_fidelity_released):

=======  ==========  ==========  ====================  ======================  ==========
family   nominative  accusative  possessive dependent  possessive independent  reflexive
=======  ==========  ==========  ====================  ======================  ==========
he       he          him         his                   his                     himself
she      she         her         her                   hers                    herself
they     they        them        their                 theirs                  themself
xe       xe          xem         xyr                   xyrs                    xemself
ze       ze          hir         hir                   hirs                    hirself
ey       ey          em          eir                   eirs                    emself
=======  ==========  ==========  ====================  ======================  ==========

Singular *they* takes plural verb agreement (*they are*); the neopronouns take singular
agreement (*xe is*, *ze has*), as MISGENDERED's templates write them. The reflexive of
singular *they* is *themself* by default; ``reflexive="themselves"`` gives the form most
style guides also accept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cdsbias.errors import CdsbiasError, unknown_name_error

#: The grammatical cases of a family, in the order of the table above.
CASES = (
    "nominative",
    "accusative",
    "possessive_dependent",
    "possessive_independent",
    "reflexive",
)
#: The reflexives singular *they* may take.
THEY_REFLEXIVES = ("themself", "themselves")


@dataclass(frozen=True)
class PronounFamily:
    """One pronoun family and how its verbs agree.

    Attributes:
        name: The family's nominative, which names it (``"xe"``).
        nominative: Subject form (*xe* is here).
        accusative: Object form (I saw *xem*).
        possessive_dependent: Before a noun (*xyr* book).
        possessive_independent: Standing alone (the book is *xyrs*).
        reflexive: *xemself*.
        plural_agreement: True when verbs agree as with a plural subject (*they are*).
        binary: True for *he* and *she*.
    """

    name: str
    nominative: str
    accusative: str
    possessive_dependent: str
    possessive_independent: str
    reflexive: str
    plural_agreement: bool = False
    binary: bool = False

    def form(self, case: str) -> str:
        """The family's form for one of ``CASES``."""
        return getattr(self, case)

    @property
    def forms(self) -> tuple[str, ...]:
        """The five forms in ``CASES`` order."""
        return tuple(self.form(case) for case in CASES)


FAMILIES: dict[str, PronounFamily] = {
    "he": PronounFamily("he", "he", "him", "his", "his", "himself", binary=True),
    "she": PronounFamily("she", "she", "her", "her", "hers", "herself", binary=True),
    "they": PronounFamily("they", "they", "them", "their", "theirs", "themself", True),
    "xe": PronounFamily("xe", "xe", "xem", "xyr", "xyrs", "xemself"),
    "ze": PronounFamily("ze", "ze", "hir", "hir", "hirs", "hirself"),
    "ey": PronounFamily("ey", "ey", "em", "eir", "eirs", "emself"),
}
#: The families gender-neutral rewriting can write (``neutral_pronouns``).
NEUTRAL_FAMILIES = tuple(name for name, family in FAMILIES.items() if not family.binary)


def pronoun_family(
    name: str, *, reflexive: str = "themself", neutral: bool = False
) -> PronounFamily:
    """Looks up a family by name.

    Args:
        name: ``he``, ``she``, ``they``, ``xe``, ``ze`` or ``ey``.
        reflexive: The reflexive of *they*: ``themself`` or ``themselves`` (other families
            have one reflexive).
        neutral: Accept only ``NEUTRAL_FAMILIES`` (what rewriting can write).

    Raises:
        CdsbiasError: An unknown family (did-you-mean) or reflexive.
    """
    allowed = NEUTRAL_FAMILIES if neutral else tuple(FAMILIES)
    if name not in allowed:
        raise unknown_name_error("pronoun family", str(name), allowed)
    if reflexive not in THEY_REFLEXIVES:
        raise CdsbiasError(
            f"Unknown reflexive '{reflexive}'; use one of: {', '.join(THEY_REFLEXIVES)}"
        )
    family = FAMILIES[name]
    if name == "they" and reflexive != family.reflexive:
        family = replace(family, reflexive=reflexive)
    return family
