"""The German word data: person-noun paradigms, names, pronoun and determiner tables.

Data files (``cdsbias/resources/wordlists/de/``, sources and licences in the README there):
``person_nouns.tsv.gz`` (masculine/feminine paradigms, from the german-nouns lexicon),
``name_pairs.tsv`` and ``ambiguous_given_names.tsv`` (first names). Everything here is
loaded once per process (``load_german_lexicon`` is cached) and is read-only afterwards.

Grammar tables follow the standard German declension (Duden-Grammatik, §§ 1521 ff. for
the article words, §§ 481 ff. for adjectives): cases ``nom gen dat acc``, genders
``m f n``, numbers ``sg pl``.
"""

from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass
from pathlib import Path

from cdsbias.cds.wordlists import load_ambiguous_names, load_name_pairs, resource_path
from cdsbias.errors import CdsbiasError


def word_set(words: str) -> frozenset[str]:
    """A set from a whitespace-separated word list (keeps the tables readable)."""
    return frozenset(words.split())


CASES = ("nom", "gen", "dat", "acc")
NUMBERS = ("sg", "pl")

# Article words: (kind, ending) -> {(gender, number, case)} they can express.
# kind "def": der/die/das; "dies": dieser/jener/jeder/... (same endings as der except
# neuter nom/acc "-es"); "ein": ein/kein/mein/sein/ihr/... (no ending in m nom, n nom/acc).
DEFINITE = {
    "der": {("m", "sg", "nom"), ("f", "sg", "gen"), ("f", "sg", "dat"), ("x", "pl", "gen")},
    "die": {("f", "sg", "nom"), ("f", "sg", "acc"), ("x", "pl", "nom"), ("x", "pl", "acc")},
    "das": {("n", "sg", "nom"), ("n", "sg", "acc")},
    "des": {("m", "sg", "gen"), ("n", "sg", "gen")},
    "dem": {("m", "sg", "dat"), ("n", "sg", "dat")},
    "den": {("m", "sg", "acc"), ("x", "pl", "dat")},
}
EIN_ENDINGS = {
    "": {("m", "sg", "nom"), ("n", "sg", "nom"), ("n", "sg", "acc")},
    "e": {("f", "sg", "nom"), ("f", "sg", "acc"), ("x", "pl", "nom"), ("x", "pl", "acc")},
    "es": {("m", "sg", "gen"), ("n", "sg", "gen")},
    "em": {("m", "sg", "dat"), ("n", "sg", "dat")},
    "en": {("m", "sg", "acc"), ("x", "pl", "dat")},
    "er": {("f", "sg", "gen"), ("f", "sg", "dat"), ("x", "pl", "gen")},
}
# The ending an article word takes for (gender, number, case); "x" = plural of any gender.
DEF_FORM = {slot: form for form, slots in DEFINITE.items() for slot in slots}
EIN_FORM = {slot: ending for ending, slots in EIN_ENDINGS.items() for slot in slots}
_DIES_ENDING = {"der": "er", "die": "e", "das": "es", "des": "es", "dem": "em", "den": "en"}
DIES_FORM = {slot: _DIES_ENDING[form] for slot, form in DEF_FORM.items()}
DIES_ENDINGS: dict[str, set] = {}
for _slot, _ending in DIES_FORM.items():
    DIES_ENDINGS.setdefault(_ending, set()).add(_slot)
EIN_STEMS = ("ein", "kein", "mein", "dein", "sein", "ihr", "unser", "euer", "eur")
DIES_STEMS = ("dies", "jen", "jed", "welch", "manch", "solch")

# Adjective endings after each kind of article word (weak after der/dieser, mixed after
# ein-words, strong without one), for (gender, number, case).
_WEAK = {("m", "sg", "nom"): "e", ("f", "sg", "nom"): "e", ("f", "sg", "acc"): "e"}
_WEAK.update({("n", "sg", "nom"): "e", ("n", "sg", "acc"): "e"})
_MIXED = {**_WEAK, ("m", "sg", "nom"): "er", ("n", "sg", "nom"): "es", ("n", "sg", "acc"): "es"}
_STRONG = {
    ("m", "sg", "nom"): "er", ("m", "sg", "gen"): "en", ("m", "sg", "dat"): "em",
    ("m", "sg", "acc"): "en", ("f", "sg", "nom"): "e", ("f", "sg", "gen"): "er",
    ("f", "sg", "dat"): "er", ("f", "sg", "acc"): "e", ("n", "sg", "nom"): "es",
    ("n", "sg", "gen"): "en", ("n", "sg", "dat"): "em", ("n", "sg", "acc"): "es",
    ("x", "pl", "nom"): "e", ("x", "pl", "gen"): "er", ("x", "pl", "dat"): "en",
    ("x", "pl", "acc"): "e",
}  # fmt: skip


def adjective_ending(declension: str, slot: tuple[str, str, str]) -> str:
    """The adjective ending for ``declension`` (weak/mixed/strong) and a slot."""
    if declension == "strong":
        return _STRONG[slot]
    return (_WEAK if declension == "weak" else _MIXED).get(slot, "en")


# Prepositions by the case they govern; two-way ones take dative (place) or accusative.
GEN_PREPOSITIONS = word_set(
    """wegen während trotz statt anstatt innerhalb außerhalb aufgrund anhand mittels infolge
    seitens bezüglich"""
)
DAT_PREPOSITIONS = word_set(
    """mit bei von zu aus nach seit gegenüber ab außer samt nebst vom zum zur beim"""
)
ACC_PREPOSITIONS = word_set("für durch gegen ohne um bis wider")
TWO_WAY_PREPOSITIONS = word_set("in an auf über unter vor hinter neben zwischen")
PREPOSITIONS = GEN_PREPOSITIONS | DAT_PREPOSITIONS | ACC_PREPOSITIONS | TWO_WAY_PREPOSITIONS
# Words that open a subordinate clause (its finite verb comes last).
SUBORDINATORS = word_set(
    """dass daß weil ob wenn als da obwohl obgleich nachdem bevor ehe damit sodass falls
    seitdem sobald solange indem wie wo warum weshalb wieso was wer"""
)
# Subjects other than sie: a clause that already has one makes a later sie an object.
NOMINATIVE_PRONOUNS = word_set("ich du er wir man es")
# Adverbs that may stand between an article and its adjective ("ein sehr junger Arzt").
DEGREE_ADVERBS = word_set(
    """sehr so ganz recht ziemlich besonders überaus äußerst noch weniger eher zu"""
)
# Finite verbs that show number (3rd person), beyond the regular -t / -en endings.
SINGULAR_VERBS = word_set(
    """ist war hat hatte wird wurde kann konnte muss musste muß mußte soll sollte will wollte
    darf durfte mag mochte sei habe werde könne müsse wäre hätte würde könnte müsste dürfte
    möchte weiß wusste ging kam sah las lief sprach schrieb blieb fand gab nahm stand saß
    rief trug fuhr tat bat lag hielt fiel ließ schlief starb wuchs half traf zog verließ
    begann gewann verlor erhielt"""
)
PLURAL_VERBS = word_set(
    """sind waren haben hatten werden wurden können konnten müssen mussten sollen sollten
    wollen wollten dürfen durften mögen mochten seien hätten würden wären könnten müssten"""
)
# Lower-case words ending in -t or -en that are not finite verbs.
NOT_VERBS = word_set(
    """nicht jetzt oft erst selbst fast bereits meist sonst gut weit bestimmt mit seit nachts
    heut zuletzt zuerst längst stets endlich einst gleichzeitig insbesondere ihnen einen den
    denen allen seinen ihren jeden meinen keinen diesen oben unten neben eben gestern morgen
    zwischen trotzdem außen innen hinten vorn wegen ebenfalls deswegen dennoch nochmal
    alle beide aber und oder doch jedoch auch allein denn dann"""
)
# Nominalised adjectives naming persons: the ending alone gives the gender in the singular
# (der Vorsitzende / die Vorsitzende, ein Angestellter / eine Angestellte); the plural is
# the same for both. Stems, as written capitalised. Participles used as gender-fair
# forms (Studierende, Lehrende) are left out on purpose.
ADJECTIVAL_STEMS = word_set(
    """Angestellt Vorsitzend Abgeordnet Verwandt Bekannt Verlobt Geliebt Auszubildend
    Reisend Verstorben Verletzt Krank Beschuldigt Angeklagt Verdächtig Jugendlich Gefangen
    Obdachlos Arbeitslos Selbstständig"""
)
# Person-noun suffixes that form their feminine with -in productively, and the lexicon
# pair whose paradigm a word the lexicon lacks takes (*Fakturist* like *Polizist*,
# *Phlebologe* like *Biologe*, *Dentalhygieniker* like *Techniker*, *Installateur* like
# *Monteur*). Nouns of the lexicon that end like them but are no persons (*Liste*,
# *Geist*, *Monolog*) are listed in ``de/person_suffix_exceptions.txt``.
PERSON_SUFFIXES = {"ist": "Polizist", "ologe": "Biologe", "iker": "Techniker", "eur": "Monteur"}
# A word takes a suffix's paradigm only with this many letters before the suffix
# (*Fakturist*, not *Zwist*).
SUFFIX_STEM_LETTERS = 4
# The shortest exception that scripts/build_german_lexicon.py may write as an ending
# (*-geist* blocks *Zeitgeist*; *rist* only itself, not *Fakturist*).
EXCEPTION_ENDING_LETTERS = 5
# Adjectives that name a sex (Duden: männlich, weiblich): they swap with the noun they
# describe, keeping or re-taking its ending (ein männlicher Kollege <-> eine weibliche
# Kollegin), and on their own (ist männlich <-> ist weiblich).
GENDERED_ADJECTIVES = {"männlich": "weiblich", "weiblich": "männlich"}
GENDERED_ADJECTIVE_FORMS = {
    stem + ending: (stem, ending)
    for stem in GENDERED_ADJECTIVES
    for ending in ("", "e", "en", "em", "er", "es")
}
# Neutral or gender-fair words that are never touched even if they look gendered.
NEVER_TOUCH = word_set(
    """Person Personen Mitglied Mitglieder Kind Kinder Mensch Menschen Leute Eltern"""
)


@dataclass(frozen=True)
class NounForm:
    """What a surface form of a person noun can be.

    Attributes:
        pair: Index of the pair in :attr:`GermanLexicon.pairs`.
        gender: ``"m"`` or ``"f"`` (the side of the pair this form belongs to).
        slots: The (number, case) slots the form fills.
    """

    pair: int
    gender: str
    slots: frozenset[tuple[str, str]]
    neuter: bool = False

    @property
    def grammatical(self) -> str:
        """The noun's grammatical gender: ``n`` for a neuter person noun (*das Mädchen*,
        on the feminine side of its pair), else :attr:`gender`."""
        return "n" if self.neuter else self.gender

    @functools.cached_property
    def phrase_slots(self) -> frozenset[tuple[str, str, str]]:
        """The slots as (gender, number, case), gender ``x`` in the plural (as articles
        give them)."""
        gender = self.grammatical
        return frozenset(
            (gender if number == "sg" else "x", number, case) for number, case in self.slots
        )


@dataclass(frozen=True)
class GermanLexicon:
    """Everything the German rules look up.

    Attributes:
        pairs: Per pair, ``{"m": cells, "f": cells}`` with cells keyed (number, case) ->
            the form to write.
        noun_forms: Surface form (as written in the lexicon) -> its readings.
        name_map: Given name -> the name of the other gender.
        name_gender: Given name -> ``"m"`` or ``"f"``.
        ambiguous_names: Name -> ``"word"`` / ``"proper"``.
        heads: Lower-cased form (5+ letters) -> the form, for compounds the lexicon
            lacks ("Busmechaniker" = "Bus" + "mechaniker").
        adjectival_stems: Pair index -> the stem of its adjectival masculine (*Beamt* of
            *der Beamte / ein Beamter*), inflected like an adjective.
        suffixes: Suffix form (*isten*, *ologin*) -> its readings, pairs whose cells are
            suffix forms, for words the lexicon lacks (:data:`PERSON_SUFFIXES`).
        suffix_exceptions: Lower-case endings of nouns that end like a person suffix but
            are no persons (*geist*, *monologe*): words ending so are none.
        suffix_exception_words: Such nouns as whole words (*rist*, *einkaufslisten*).
        neuter_pairs: Pairs whose feminine side is a neuter noun (*Junge* <-> *Mädchen*).
    """

    pairs: list[dict[str, dict[tuple[str, str], str]]]
    noun_forms: dict[str, list[NounForm]]
    name_map: dict[str, str]
    name_gender: dict[str, str]
    ambiguous_names: dict[str, str]
    heads: dict[str, str]
    adjectival_stems: dict[int, str]
    suffixes: dict[str, list[NounForm]]
    suffix_exceptions: tuple[str, ...]
    suffix_exception_words: frozenset[str]
    neuter_pairs: frozenset[int] = frozenset()


_ALL_SLOTS = frozenset((number, case) for number in NUMBERS for case in CASES)


@dataclass(frozen=True)
class PersonNouns:
    """What ``person_nouns.tsv.gz`` holds (see :class:`GermanLexicon` for the fields)."""

    pairs: list[dict[str, dict[tuple[str, str], str]]]
    noun_forms: dict[str, list[NounForm]]
    adjectival_stems: dict[int, str]
    neuter: frozenset[int] = frozenset()


def _read_person_nouns(path: Path, first_pair: int = 0) -> PersonNouns:
    """Reads the pairs, numbered from ``first_pair``; kind ``adjectival`` rows give their
    masculine stem, kind ``neuter`` rows have a neuter feminine side (*Mädchen*), a kind
    ending in ``<`` (``>``) looks up only the feminine (masculine) forms."""
    try:
        raw = path.read_bytes()
        # The lexicon ships gzip-compressed (1 MB of text); test fixtures may be plain.
        lines = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError, gzip.BadGzipFile) as exc:
        raise CdsbiasError(f"German word list {path} cannot be read ({exc})") from None
    slots = [(number, case) for number in NUMBERS for case in CASES]
    pairs: list[dict[str, dict[tuple[str, str], str]]] = []
    readings: dict[tuple[str, int, str], set] = {}
    adjectival_stems: dict[int, str] = {}
    neuter: set[int] = set()
    for line_number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.rstrip("\r").split("\t")
        if len(cells) != 17 or not cells[0] or not cells[8]:
            raise CdsbiasError(f"{path}:{line_number}: expected 16 forms and a kind")
        pair = first_pair + len(pairs)
        kind = cells[16]
        if kind.rstrip("<>") == "neuter":
            neuter.add(pair)
        looked_up = {"<": ("f",), ">": ("m",)}.get(kind[-1:], ("m", "f"))
        adjectival = kind.rstrip("<>") == "adjectival"
        if adjectival:  # "Beamter|Beamte": the strong form, less its ending
            adjectival_stems[pair] = cells[0].split("|")[0][:-2]
        entry: dict[str, dict[tuple[str, str], str]] = {"m": {}, "f": {}}
        for gender, offset in (("m", 0), ("f", 8)):
            for slot, cell in zip(slots, cells[offset : offset + 8], strict=True):
                if not cell:
                    continue
                variants = cell.split("|")
                entry[gender][slot] = variants[0]
                if gender not in looked_up:
                    continue
                for form in variants:
                    # An adjectival form may fill any slot its ending fits (checked
                    # against the article, like an adjective's).
                    filled = _ALL_SLOTS if adjectival and gender == "m" else (slot,)
                    readings.setdefault((form, pair, gender), set()).update(filled)
        pairs.append(entry)
    noun_forms: dict[str, list[NounForm]] = {}
    for (form, pair, gender), form_slots in readings.items():
        if form in NEVER_TOUCH:
            continue
        reading = NounForm(pair, gender, frozenset(form_slots), gender == "f" and pair in neuter)
        noun_forms.setdefault(form, []).append(reading)
    return PersonNouns(pairs, noun_forms, adjectival_stems, frozenset(neuter))


def _suffix_pairs(
    nouns: PersonNouns,
) -> tuple[list[dict[str, dict[tuple[str, str], str]]], dict[str, list[NounForm]]]:
    """Pairs of suffix forms (*ist / isten* <-> *istin / istinnen*) cut from the model
    pairs of :data:`PERSON_SUFFIXES`, numbered after the lexicon's pairs."""
    pairs: list[dict[str, dict[tuple[str, str], str]]] = []
    readings: dict[str, list[NounForm]] = {}
    for suffix, model in PERSON_SUFFIXES.items():
        (reading,) = [r for r in nouns.noun_forms[model] if r.gender == "m"]
        cut = len(model) - len(suffix)
        cells = {
            gender: {slot: form[cut:] for slot, form in forms.items()}
            for gender, forms in nouns.pairs[reading.pair].items()
        }
        pair = len(nouns.pairs) + len(pairs)
        pairs.append(cells)
        for gender, forms in cells.items():
            by_form: dict[str, set] = {}
            for slot, form in forms.items():
                by_form.setdefault(form, set()).add(slot)
            for form, form_slots in by_form.items():
                readings.setdefault(form, []).append(NounForm(pair, gender, frozenset(form_slots)))
    return pairs, readings


@functools.lru_cache(maxsize=2)
def load_german_lexicon(names: bool = True) -> GermanLexicon:
    """Loads the German data files once per process.

    Raises:
        CdsbiasError: A file is missing, not UTF-8 or malformed (``file:line: problem``).
    """
    nouns = _read_person_nouns(resource_path("de/person_nouns.tsv.gz"))
    neuter = _read_person_nouns(resource_path("de/neuter_person_nouns.tsv"), len(nouns.pairs))
    for form, readings in neuter.noun_forms.items():
        nouns.noun_forms.setdefault(form, []).extend(readings)
    nouns.pairs.extend(neuter.pairs)
    suffix_pairs, suffixes = _suffix_pairs(nouns)
    exceptions_path = resource_path("de/person_suffix_exceptions.txt")
    try:
        exceptions = tuple(
            line.strip()
            for line in exceptions_path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        )
    except (OSError, UnicodeDecodeError) as exc:
        raise CdsbiasError(f"German word list {exceptions_path} cannot be read ({exc})") from None
    noun_forms = nouns.noun_forms
    name_map: dict[str, str] = {}
    name_gender: dict[str, str] = {}
    ambiguous: dict[str, str] = {}
    if names:
        path = resource_path("de/name_pairs.tsv")
        name_map = load_name_pairs(path)
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                male, female = (name.strip().capitalize() for name in line.split("\t"))
                name_gender[male], name_gender[female] = "m", "f"
        ambiguous = load_ambiguous_names(resource_path("de/ambiguous_given_names.tsv"))
    heads = {form.lower(): form for form in noun_forms if len(form) >= 5}
    return GermanLexicon(
        nouns.pairs + suffix_pairs,
        noun_forms,
        name_map,
        name_gender,
        ambiguous,
        heads,
        nouns.adjectival_stems,
        suffixes,
        tuple(entry[1:] for entry in exceptions if entry.startswith("-")),
        frozenset(entry for entry in exceptions if not entry.startswith("-")),
        neuter.neuter,
    )
