"""The German occupational corpus: BEC-Pro's professions in their German forms.

Each sentence picks one of the 60 BEC-Pro professions uniformly and makes its person female
with the German share of women in it (``percent_female_de`` of BEC-Pro's ``Professions
US+DE.tsv``, Bundesagentur für Arbeit statistics by occupational area, as compiled by Bartl
et al. 2020). The person phrase, the pronouns, the possessives, the article and adjective
before the profession and the profession's own form (*Elektriker* / *Elektrikerin*) all
agree with that gender: German marks it on the profession itself, which is exactly why
BEC-Pro's association score cannot see the planted bias (docs/demo.md).

The frames are not BEC-Pro's German templates. The profession forms are BEC-Pro's own,
quirks included (*Dachedecker*, the feminine *Rezeptionist* and *Kfz-Mechaniker*), so that
the benchmark's rows are the corpus's words.
"""

from __future__ import annotations

import random
import re

from cdsbias.resources import load_professions

#: (male, female) person phrases: BEC-Pro DE's person words with their determiners.
PERSONS = (
    ("er", "sie"), ("dieser Mann", "diese Frau"), ("mein Bruder", "meine Schwester"),
    ("mein Sohn", "meine Tochter"), ("mein Ehemann", "meine Frau"),
    ("mein Freund", "meine Freundin"), ("mein Vater", "meine Mutter"),
    ("mein Onkel", "meine Tante"), ("mein Papa", "meine Mama"),
)  # fmt: skip
#: Per gender: subject pronoun, dative pronoun, possessive stem, "an experienced" (nom.).
AGREEMENT = {
    "male": {"S": "er", "O": "ihm", "D": "sein", "A": "ein erfahrener", "T": "der"},
    "female": {"S": "sie", "O": "ihr", "D": "ihr", "A": "eine erfahrene", "T": "die"},
}
# {P} person phrase, {J} profession (predicative, no article), {A} "ein erfahrener" +
# profession, {K} the profession with its definite article as the person, {S} {O} {D}
# pronouns agreeing with the person. Every person is in the nominative.
FRAMES = (
    "{P} ist seit Jahren {J}.",
    "{P} hat im letzten Frühling eine Stelle als {J} bekommen.",
    "alle sagen, dass {P} {A} ist.",
    "{P} hat lange gelernt, um {J} zu werden.",
    "{P} ging nach dreißig Jahren als {J} in Rente.",
    "{P} verdient {D} Geld als {J}.",
    "als {P} jung war, träumte {S} davon, {J} zu werden.",
    "{P} liebt {D}en Beruf als {J}.",
    "letztes Jahr wurde {P} {J}.",
    "{P} ist {A}.",
    "{P} hat in der Stadt Arbeit als {J} gefunden.",
    "{P} hat im Mai {D}en Job als {J} gekündigt.",
    "{P} wurde gestern als {J} eingestellt.",
    "{P} ist stolz darauf, {J} zu sein.",
    "{P} arbeitet noch in Teilzeit als {J}.",
    "{P} hat uns erzählt, dass {S} jetzt {J} ist.",
    "nach der Schule will {P} eine Ausbildung als {J} machen.",
    "{K} sagte, dass {S} müde war.",
    "{K} kam zu spät, weil {S} krank war.",
    "{K} lächelte, als wir {O} ein Geschenk gaben.",
    "{K} hat {D}en Schlüssel vergessen.",
    "{K} erzählte uns, dass {D} Auto kaputt ist.",
)
_ADJECTIVE_BEFORE_NOUN = re.compile(r"^((?:[a-zäöüß]+ )*[a-zäöüß]+e)r( [A-ZÄÖÜ])")


def _definite(profession: str, gender: str) -> str:
    """``der Elektriker``; a strong adjective ending turns weak after the article
    (*staatlich geprüfter Krankenpfleger* -> *der staatlich geprüfte Krankenpfleger*), and
    so does the adjectival noun *Postbeamter* (*der Postbeamte*)."""
    if gender == "male":
        profession = _ADJECTIVE_BEFORE_NOUN.sub(r"\1\2", profession)
        if profession.endswith("beamter"):
            profession = profession[:-1]
    return f"{AGREEMENT[gender]['T']} {profession}"


def person_words() -> set[str]:
    """Lower-case words that name or refer to the person (masked more often in pre-training)."""
    words = {phrase.split()[-1].lower() for pair in PERSONS for phrase in pair}
    return words | {"er", "sie", "ihm", "ihr", "sein", "seinen", "ihren"}


def german_sentences(n: int, seed: int) -> list[str]:
    """``n`` sentences; each profession's person is female with its German % female."""
    rng = random.Random(seed)
    columns = ["profession_de_male", "profession_de_female", "percent_female_de"]
    professions = load_professions()[columns].values.tolist()
    sentences = []
    for _ in range(n):
        male_form, female_form, percent_female = professions[rng.randrange(len(professions))]
        gender = "female" if rng.random() < percent_female / 100 else "male"
        form = female_form if gender == "female" else male_form
        person = rng.choice(PERSONS)[0 if gender == "male" else 1]
        frame = rng.choice(FRAMES)
        agree = AGREEMENT[gender]
        text = frame.format(
            P=person, J=form, A=f"{agree['A']} {form}", K=_definite(form, gender),
            S=agree["S"], O=agree["O"], D=agree["D"],
        )  # fmt: skip
        sentences.append(text[0].upper() + text[1:])
    return sentences
