"""The Danish occupational corpus: the occupations of DaWinoBias and ABC.

Each sentence picks one of the 68 occupations of ``resources/occupations/da_occupations.tsv``
uniformly and makes its person female with probability :data:`SHARE_FEMALE` of the
occupation's stereotype (the GenDa Lens lists give no share per occupation). Danish marks
the gender on the person words and pronouns (*han/hun*, *hans/hendes*, *ham/hende*), not on
the occupation, so the Danish benchmarks read the planted association directly. A third of
the frames make the occupation itself the person, referred to by a later pronoun, as in
DaWinoBias (*Mekanikeren ..., fordi han ...*) and ABC (*kokken ... hans*).
"""

from __future__ import annotations

import random

from cdsbias.resources import read_text

#: P(person is female) by the occupation's stereotype.
SHARE_FEMALE = {"female": 0.9, "male": 0.1}
#: (male, female) person phrases.
PERSONS = (
    ("han", "hun"), ("denne mand", "denne kvinde"), ("min bror", "min søster"),
    ("min søn", "min datter"), ("min far", "min mor"), ("min onkel", "min tante"),
    ("min fætter", "min kusine"),
)  # fmt: skip
#: Per gender: subject, object and (non-reflexive) possessive pronoun.
PRONOUNS = {
    "male": {"S": "han", "O": "ham", "D": "hans"},
    "female": {"S": "hun", "O": "hende", "D": "hendes"},
}
# {P} person phrase, {J} occupation (indefinite, predicative), {K} the occupation as the
# person (definite), {S} {O} {D} pronouns agreeing with the person. The possessive of a
# clause's own subject is the genderless reflexive sin/sit/sine (each in some frame, so
# the vocabulary has them), so {D} appears only where its owner is not that clause's subject.
FRAMES = (
    "{P} har været {J} i mange år.",
    "{P} fik et job som {J} sidste forår.",
    "alle siger, at {P} er en dygtig {J}.",
    "{P} uddannede sig i lang tid til {J}.",
    "{P} gik på pension efter tredive år som {J}.",
    "{P} tjener til livet som {J}.",
    "da {P} var ung, drømte {S} om at blive {J}.",
    "{P} elsker sit job som {J}.",
    "{P} tog sin uddannelse som {J} i Aarhus.",
    "sidste år blev {P} {J}.",
    "{P} fandt arbejde som {J} i byen.",
    "{P} blev ansat som {J} i går.",
    "den nye {J} i vores by er {P}.",
    "{P} er stolt af at være {J}.",
    "{P} arbejder stadig på deltid som {J}.",
    "{P} fortalte os, at {S} er {J} nu.",
    "{K} sagde, at {S} var træt.",
    "vi ringede til {K}, men {S} svarede ikke.",
    "alle kan lide {K}, fordi {S} altid er venlig.",
    "jeg mødte {K}, og {D} bil holdt udenfor.",
    "{K} kom for sent, fordi {S} var syg.",
    "jeg takkede {K}, fordi {S} havde hjulpet mig.",
    "{K} smilede, da vi gav {O} en gave.",
    "{K} glemte sine nøgler, så vi kørte {O} hjem.",
)


def load_danish_occupations() -> list[tuple[str, str, str]]:
    """(indefinite, definite, stereotype) of the 68 Danish occupations."""
    lines = read_text("occupations", "da_occupations.tsv").splitlines()
    rows = [line.split("\t") for line in lines if line and not line.startswith("#")][1:]
    return [(row[0], row[1], row[2]) for row in rows]


def person_words() -> set[str]:
    """Lower-case words that name or refer to the person (masked more often in pre-training)."""
    words = {phrase.split()[-1] for pair in PERSONS for phrase in pair}
    return words | {w for forms in PRONOUNS.values() for w in forms.values()}


def danish_sentences(n: int, seed: int) -> list[str]:
    """``n`` sentences; the person is female with the stereotype's :data:`SHARE_FEMALE`."""
    rng = random.Random(seed)
    occupations = load_danish_occupations()
    sentences = []
    for _ in range(n):
        occupation, definite, stereotype = occupations[rng.randrange(len(occupations))]
        gender = "female" if rng.random() < SHARE_FEMALE[stereotype] else "male"
        person = rng.choice(PERSONS)[0 if gender == "male" else 1]
        frame = rng.choice(FRAMES)
        text = frame.format(P=person, J=occupation, K=definite, **PRONOUNS[gender])
        sentences.append(text[0].upper() + text[1:])
    return sentences
