"""German CDS on BEC-Pro's own 60 German profession pairs, in every case and number.

Each profession's feminine form (whose paradigm is regular: *die Fakturistin, der
Fakturistin, die Fakturistinnen, den Fakturistinnen*) is put in a definite noun phrase in
each case and number, plus a copula frame; the substitution must change the noun, give the
article and the adjective the masculine forms that the case asks for, and restore the
sentence when applied again. The masculine forms BEC-Pro gives must go to its feminine
forms. Before issue 22's fixes 11 professions were never swapped (Elektroinstallateur,
Installateur von Sicherheitssystemen, Bodenleger, Dachedecker, Dentalhygieniker,
Fakturist, Phlebologe, Haushälter, Heilpraktiker, Postbeamter, Postsortierer).
"""

from __future__ import annotations

import pytest

from cdsbias.cds.languages.de import German
from cdsbias.resources import load_professions

# BEC-Pro's typos (Professions US+DE.tsv): two feminines written like the masculine, and
# "Dachedecker", whose feminine is "Dachdeckerin" (so it swaps back to "Dachdecker").
FEMININE_TYPOS = {"Kfz-Mechaniker": "Kfz-Mechanikerin", "Rezeptionist": "Rezeptionistin"}
MASCULINE_FROM_FEMININE = {"Dachedecker": "Dachdecker"}
# Masculine articles (and weak adjective endings) by case: what a feminine singular
# phrase must become.
MASCULINE_SINGULAR = {
    "nom": ("Der", "e"),
    "gen": ("des", "en"),
    "dat": ("dem", "en"),
    "acc": ("den", "en"),
}
SINGULAR_FRAMES = {
    "nom": ("{P} ist hier.", "Die", "e"),
    "gen": ("Das Auto {P} steht hier.", "der", "en"),
    "dat": ("Wir sprachen mit {P}.", "der", "en"),
    "acc": ("Wir kennen {P}.", "die", "e"),
}
PLURAL_FRAMES = {
    "nom": ("{P} sind hier.", "Die"),
    "gen": ("Das Auto {P} steht hier.", "der"),
    "dat": ("Wir sprachen mit {P}.", "den"),
    "acc": ("Wir kennen {P}.", "die"),
}


def split_profession(form: str) -> tuple[list[str], str, str]:
    """(words before the noun, the noun, the words after it): *staatlich geprüfte
    Krankenpflegerin*, *Mechanikerin für mobile Geräte*."""
    words = form.split()
    noun = next(k for k, word in enumerate(words) if word[:1].isupper())
    return words[:noun], words[noun], " ".join(words[noun + 1 :])


def phrase(article: str, before: list[str], ending: str, noun: str, after: str) -> str:
    """``article`` + the adjectives before the noun with ``ending`` + noun + complement;
    the adjectival *Postbeamter* takes the ending too (*der Postbeamte*)."""
    if noun == "Postbeamter":
        noun = "Postbeamt" + ending
    modifiers = (
        [*before[:-1], before[-1].removesuffix("e").removesuffix("er") + ending] if before else []
    )
    return " ".join([article, *modifiers, noun, after]).strip()


def professions() -> list[tuple[str, str]]:
    table = load_professions()
    return [
        (male, FEMININE_TYPOS.get(female, female))
        for male, female in zip(
            table["profession_de_male"], table["profession_de_female"], strict=True
        )
    ]


@pytest.fixture(scope="module")
def german() -> German:
    return German()


def test_there_are_sixty_professions():
    assert len(professions()) == 60


@pytest.mark.parametrize(("male", "female"), professions())
def test_every_feminine_form_swaps_in_every_case_and_number(german, male, female):
    before, noun, after = split_profession(female)
    plural = noun + ("nen" if noun.endswith("in") else "en")  # Feuerwehrfrau -> -frauen
    male_before, male_noun, _ = split_profession(male)
    male_noun = MASCULINE_FROM_FEMININE.get(male_noun, male_noun)
    for case, (frame, article, ending) in SINGULAR_FRAMES.items():
        source = frame.format(P=phrase(article, before, ending, noun, after))
        output = german.substitute(source)
        new_article, new_ending = MASCULINE_SINGULAR[case]
        assert output != source, source
        expected_start = frame.split("{P}")[0] + phrase(new_article, before, new_ending, "", "")
        assert output.startswith(expected_start.rstrip()), (source, output)
        if case == "nom":
            assert output == frame.format(
                P=phrase(new_article, male_before, new_ending, male_noun, after)
            ), source
        assert german.substitute(output) == source, (source, output)
    for frame, article in PLURAL_FRAMES.values():
        source = frame.format(P=phrase(article, before, "en", plural, after))
        output = german.substitute(source)
        assert output != source, source
        assert german.substitute(output) == source, (source, output)
    source = f"Sie ist {phrase('eine', before, 'e', noun, after)}."
    assert (
        german.substitute(source) == f"Er ist {phrase('ein', male_before, 'er', male_noun, after)}."
    )


@pytest.mark.parametrize(("male", "female"), professions())
def test_every_masculine_form_swaps_to_its_feminine(german, male, female):
    before, noun, after = split_profession(male)
    female_before, female_noun, _ = split_profession(female)
    assert german.substitute(f"{phrase('Der', before, 'e', noun, after)} ist hier.") == (
        f"{phrase('Die', female_before, 'e', female_noun, after)} ist hier."
    )
    assert german.substitute(f"Er ist {phrase('ein', before, 'er', noun, after)}.") == (
        f"Sie ist {phrase('eine', female_before, 'e', female_noun, after)}."
    )
    bare = f"Mein Bruder ist seit Jahren {' '.join([*before, noun, after]).strip()}."
    assert german.substitute(bare) == (
        f"Meine Schwester ist seit Jahren {' '.join([*female_before, female_noun, after]).strip()}."
    )


def demo_sentence(frame: str, person: int, gender: str, form: str) -> str:
    """One sentence of the German demo corpus, as ``german_sentences`` writes it."""
    from cdsbias.data import occupations_de as demo

    agree = demo.AGREEMENT[gender]
    text = frame.format(
        P=demo.PERSONS[person][gender == "female"],
        J=form,
        A=f"{agree['A']} {form}",
        K=demo._definite(form, gender),
        S=agree["S"],
        O=agree["O"],
        D=agree["D"],
    )
    return text[0].upper() + text[1:]


def test_demo_sentences_swap_to_the_generators_own_counterfactuals(german):
    """The German demo corpus (cdsbias.data.occupations_de) drawn twice with the same
    random choices, the second time with the person's gender flipped: the substitution
    of each sentence is the flipped sentence. Left out: rows with BEC-Pro's feminine
    typos (*die Rezeptionist*, *die Kfz-Mechaniker*, ungrammatical and left alone), and
    the person words CDS pairs otherwise (*Ehefrau* for *meine Frau*'s *Ehemann*)."""
    import random

    from cdsbias.data import occupations_de as demo

    rng = random.Random(0)
    table = load_professions()
    rows = table[["profession_de_male", "profession_de_female", "percent_female_de"]]
    rows = rows.values.tolist()
    checked = 0
    for _ in range(3000):
        male, female, percent_female = rows[rng.randrange(len(rows))]
        gender = "female" if rng.random() < percent_female / 100 else "male"
        person, frame = rng.randrange(len(demo.PERSONS)), rng.choice(demo.FRAMES)
        if female in FEMININE_TYPOS:
            continue
        source = demo_sentence(frame, person, gender, male if gender == "male" else female)
        other = "female" if gender == "male" else "male"
        form = female if other == "female" else MASCULINE_FROM_FEMININE.get(male, male)
        expected = demo_sentence(frame, person, other, form)
        output = german.substitute(source).replace("Ehefrau", "Frau").replace("Ehemann", "Mann")
        assert output == expected.replace("Ehefrau", "Frau").replace("Ehemann", "Mann"), source
        checked += 1
    assert checked > 2800
