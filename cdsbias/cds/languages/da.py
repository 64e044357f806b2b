"""Danish: pronouns, gendered nouns with their suffixes, titles and first names.

Danish marks a person's gender in the pronoun and in the noun itself, not in what agrees
with it: *en konge* and *en dronning* take the same article and adjectives (both are
common gender), so swapping the word is the whole swap. What the rules decide:

* **Pronouns**: *han* <-> *hun*, *ham* <-> *hende*, *hans* <-> *hendes* (possessive, also
  standing alone: *bogen er hans*). The reflexive *sig*, *sin*, *sit*, *sine* refers back
  to the subject whatever its gender and stays. Capitalised *Hans* is the name (swapped
  as a name) except at the start of a sentence, where it is the possessive unless a
  surname, punctuation or a finite verb follows (*Hans bil er rød* / *Hans kom hjem*).
  *Han*/*Hun* capitalised inside a sentence is a name (*Han Solo*) and left alone.
* **Nouns**: every form of a pair (indefinite, definite, plural, definite plural, and the
  genitive of each, with *'* after s/x/z: *prins'* <-> *prinsesses*) from
  ``resources/wordlists/da/gendered_words.tsv``; *-inde*, *-ske* and *-kvinde* forms,
  kinship terms, royalty, *herre*/*dame*, *hr.*/*fru*. *mand* is *kvinde* (man/woman),
  but *kone* (husband/wife) right after a possessive (*hendes mand* -> *hans kone*).
  A capitalised noun inside a sentence is part of a name (*Kongens Nytorv*, *Den Lille
  Havfrue*) and left alone; *dronning* before a name is the title *kong*.
* **First names** from ``da/name_pairs.tsv`` (nam_dict.txt's Danish frequencies, paired by
  rank) with the genitive (*Peters* -> *Annes*); a name right after a capitalised word
  that is not a first name is a surname and stays; names that are also words
  (``da/ambiguous_given_names.tsv``: *Per*, *Bo*, *Liv*, ...) are swapped at the start
  of a sentence only in a full name.

Gender-neutral nouns (*person*, *barn*, *lærer*, *præst*) are not listed, and a word that
merely contains a gendered one (*mandskab*, *kongerige*) is a different token.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from cdsbias.cds.edits import Edit, match_case
from cdsbias.cds.languages.base import LETTERS, Language, Skip
from cdsbias.cds.wordlists import (
    data_lines,
    load_ambiguous_names,
    load_name_pairs,
    load_word_sets,
    resource_path,
)
from cdsbias.errors import CdsbiasError

PRONOUNS = {"han": "hun", "hun": "han", "ham": "hende", "hende": "ham", "hendes": "hans"}
_CONTEXT = load_word_sets(resource_path("da") / "context_words.txt")
#: Before these, "mand" is a husband: "hendes mand" -> "hans kone".
POSSESSIVES = _CONTEXT["possessives"]
#: After sentence-initial "Hans" these make it the name ("Hans kom hjem").
_AFTER_SUBJECT = _CONTEXT["after_subject"]
#: After "Hans" these make it the possessive ("Hans Majestæt"); a title after them swaps.
_HONORIFICS = _CONTEXT["honorifics"]
_SENTENCE_END = frozenset(".!?\n")
_DIRECTIONS = ("both", "m2f", "f2m", "lower", "spouse")
_KINDS = ("noun", "adjective", "title")
# Unlisted-word report: endings of female and -mand/-kvinde forms; verbs ending in -inde.
_GENDERED_LOOKING = re.compile(r"(?:inde|inden|inder|inderne|mand|manden|mænd|mændene)$")
_INDE_VERBS = re.compile(
    r"(?:finde|vinde|binde|minde|svinde|hinde|tinde|linde|kinde|tusinde)(?:n|r|s)?$"
)


def genitive(form: str) -> str:
    """The Danish genitive: ``kongen`` -> ``kongens``, ``prins`` -> ``prins'``."""
    return form + ("'" if form[-1:] in ("s", "x", "z") else "s")


def load_gendered_words(
    path: Path,
) -> tuple[dict[str, str], dict[str, str], dict[str, str], frozenset[str]]:
    """Reads ``da/gendered_words.tsv`` (format in its header).

    Returns:
        ``(word_map, spouse_map, kinds, lowercase_only)``: each form's substitute (and its
        genitive's), the after-a-possessive substitutes of ``spouse`` lines, each form's
        report kind, and the forms of ``lower`` lines.

    Raises:
        CdsbiasError: ``file:line: problem`` for a malformed line, slot counts that differ,
            an unknown direction or kind, or a form mapped to two substitutes.
    """
    word_map: dict[str, str] = {}
    spouse_map: dict[str, str] = {}
    kinds: dict[str, str] = {}
    lowercase_only: set[str] = set()
    defined_at: dict[tuple[int, str], int] = {}
    for line_number, line in data_lines(path):
        fields = line.split("\t")
        if len(fields) not in (2, 3, 4):
            raise CdsbiasError(
                f"{path}:{line_number}: expected 'male forms<TAB>female forms"
                f"[<TAB>direction[<TAB>kind]]', got {len(fields)} field(s)"
            )
        male, female = (field.lower().split() for field in fields[:2])
        direction = fields[2].strip() if len(fields) > 2 else "both"
        kind = fields[3].strip() if len(fields) > 3 else "noun"
        if len(male) != len(female) or not male:
            raise CdsbiasError(
                f"{path}:{line_number}: {len(male)} male and {len(female)} female forms; "
                "give the same slots on both sides ('-' for a missing form)"
            )
        if direction not in _DIRECTIONS or kind not in _KINDS:
            raise CdsbiasError(
                f"{path}:{line_number}: direction '{direction}' / kind '{kind}' not one of "
                f"{', '.join(_DIRECTIONS)} / {', '.join(_KINDS)}"
            )
        pairs = [(m, f) for m, f in zip(male, female, strict=True) if m != "-" and f != "-"]
        if kind == "noun":
            pairs += [(genitive(m), genitive(f)) for m, f in pairs]
        target = spouse_map if direction == "spouse" else word_map
        for m, f in pairs:
            mappings = []
            if direction in ("both", "m2f", "lower", "spouse"):
                mappings.append((m, f))
            if direction in ("both", "f2m", "lower"):
                mappings.append((f, m))
            if direction == "lower":
                lowercase_only.update((m, f))
            for source, substitute in mappings:
                if target.get(source, substitute) != substitute:
                    raise CdsbiasError(
                        f"{path}:{line_number}: '{source}' already maps to "
                        f"'{target[source]}' (line {defined_at[id(target), source]})"
                    )
                target[source] = substitute
                defined_at.setdefault((id(target), source), line_number)
            kinds.setdefault(m, kind)
            kinds.setdefault(f, kind)
    return word_map, spouse_map, kinds, frozenset(lowercase_only)


class Danish(Language):
    """Danish gender-counterfactual rules (module docstring).

    Args:
        names: Whether first names are swapped.
    """

    code = "da"
    name = "Danish"
    marker_words = frozenset({"han", "hun", "ham", "hende", "hendes"})
    swap_examples = ("han↔hun", "hans↔hendes", "kongen↔dronningen", "Peter↔Anne")

    def __init__(self, *, names: bool = True) -> None:
        super().__init__(names=names)
        folder = resource_path("da")
        self.word_map, self.spouse_map, self.kinds, self.lowercase_only = load_gendered_words(
            folder / "gendered_words.tsv"
        )
        self.name_map = load_name_pairs(folder / "name_pairs.tsv") if names else {}
        self.ambiguous_names = (
            load_ambiguous_names(folder / "ambiguous_given_names.tsv") if names else {}
        )

    @functools.cached_property
    def known_words(self) -> frozenset[str]:
        """Every swapped form (both sides, genitives, pronouns, names lower-cased)."""
        return frozenset(
            set(self.word_map)
            | set(self.word_map.values())
            | set(PRONOUNS)
            | {"hans"}
            | {name.lower() for name in self.name_map}
        )

    def edits(self, text: str, *, skipped: list[Skip] | None = None) -> list[Edit]:
        """The Danish counterfactual's edits (rules in the module docstring)."""
        tokens = [(m.start(), m.end(), m.group()) for m in LETTERS.finditer(text)]
        edits: list[Edit] = []
        candidates = self._candidates
        name_map = self.name_map
        for index, (_, _, word) in enumerate(tokens):
            lower = word.lower()
            is_name = word in name_map or (word[-1:] == "s" and word[:-1] in name_map)
            if lower not in candidates and not is_name:
                continue  # most words: one set lookup
            if word != lower and not word.isupper() and not word[1:].islower():
                continue  # mixed case ("McDonald"): a brand or a name
            initial = self._sentence_initial(text, tokens, index)
            if lower in PRONOUNS or lower == "hans":
                edit = self._pronoun(text, tokens, index, initial, skipped)
            else:
                edit = self._name(text, tokens, index, initial) if is_name else None
                if edit is None:
                    # "Hans Majestæt Kongen": a title after a form of address is a noun.
                    capitalised_inside = (
                        word[:1].isupper()
                        and not initial
                        and not self._after_honorific(text, tokens, index)
                    )
                    edit = self._word(text, tokens, index, capitalised_inside, skipped)
            if edit is not None:
                edits.append(edit)
        return edits

    @functools.cached_property
    def _candidates(self) -> frozenset[str]:
        """Lower-case tokens that may start an edit (names are looked up as written)."""
        return frozenset(set(self.word_map) | set(PRONOUNS) | {"hans"})

    @staticmethod
    def _sentence_initial(text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
        if index == 0:
            return True
        gap = text[tokens[index - 1][1] : tokens[index][0]]
        return any(char in _SENTENCE_END for char in gap)

    def _pronoun(
        self,
        text: str,
        tokens: list[tuple[int, int, str]],
        index: int,
        initial: bool,
        skipped: list[Skip] | None,
    ) -> Edit | None:
        start, end, word = tokens[index]
        lower = word.lower()
        if lower == "hans" and word != "hans" and not word.isupper():
            # "Hans": the name inside a sentence; at its start, the possessive unless the
            # next word makes it a subject.
            # Before a form of address or a listed person noun in lower case ("... og
            # Hans søster"), "Hans" is the possessive anywhere in the sentence.
            possessive = self._before_honorific(text, tokens, index) or (
                index + 1 < len(tokens)
                and tokens[index + 1][2] in self.word_map
                and text[end : tokens[index + 1][0]] == " "
            )
            if not possessive and (not initial or self._hans_is_name(text, tokens, index)):
                if not self.names:
                    return None
                return self._name(text, tokens, index, initial=False)
            return Edit(start, end, word, match_case(word, "hendes"), "possessive")
        if lower in ("han", "hun") and word[:1].isupper() and not word.isupper():
            next_is_capital = (
                index + 1 < len(tokens)
                and tokens[index + 1][2][:1].isupper()
                and text[end : tokens[index + 1][0]] == " "
            )
            if not initial or next_is_capital:  # "Han Solo", "... mødte Han Kang"
                if skipped is not None:
                    skipped.append(Skip(start, end, word, f"{word} as a name"))
                return None
        replacement = "hendes" if lower == "hans" else PRONOUNS[lower]
        kind = "possessive" if lower in ("hans", "hendes") else "pronoun"
        return Edit(start, end, word, match_case(word, replacement), kind)

    @staticmethod
    def _before_honorific(text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
        """Word ``index`` stands before a form of address: *Hans Majestæt*."""
        if index + 1 >= len(tokens):
            return False
        next_start, _, next_word = tokens[index + 1]
        return next_word.lower() in _HONORIFICS and text[tokens[index][1] : next_start] == " "

    @staticmethod
    def _after_honorific(text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
        """Word ``index`` follows a form of address: *Majestæt Kongen*."""
        if index == 0:
            return False
        _, previous_end, previous = tokens[index - 1]
        return previous.lower() in _HONORIFICS and text[previous_end : tokens[index][0]] == " "

    @staticmethod
    def _hans_is_name(text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
        if index + 1 >= len(tokens):
            return True
        end = tokens[index][1]
        next_start, _, next_word = tokens[index + 1]
        gap = text[end:next_start]
        if gap.strip():
            return True  # "Hans, ...", "Hans." — a possessive needs its noun
        return next_word[:1].isupper() or next_word.lower() in _AFTER_SUBJECT

    def _name(
        self, text: str, tokens: list[tuple[int, int, str]], index: int, initial: bool
    ) -> Edit | None:
        start, end, word = tokens[index]
        base, suffix = (word, "") if word in self.name_map else (word[:-1], "s")
        if not (base[:1].isupper() and base[1:].islower()):
            return None
        if text[start - 1 : start] == "-" or text[end : end + 1] == "-":
            return None  # a hyphenated compound or double name written with a hyphen
        followed_by_capital = (
            index + 1 < len(tokens)
            and tokens[index + 1][2][:1].isupper()
            and text[end : tokens[index + 1][0]] == " "
        )
        if index and not initial:
            previous = tokens[index - 1][2]
            gap = text[tokens[index - 1][1] : start]
            previous_initial = self._sentence_initial(text, tokens, index - 1)
            if (
                gap == " "
                and previous[:1].isupper()
                and previous not in self.name_map
                and not previous_initial
            ):
                return None  # a surname after a capitalised word: "Lise Per"
        if (
            index > 1
            and tokens[index - 1][2] == "af"
            and tokens[index - 2][2].lower() in self.word_map
        ):
            return None  # "hertugen af Kent", "prinsen af Wales": a place
        if self.ambiguous_names.get(base) and initial and not followed_by_capital:
            return None  # "Per dag", "Bo i Aarhus": the word, not the name
        replacement = self.name_map[base]
        if suffix:
            replacement = genitive(replacement)
        # A name ending in s has an apostrophe genitive: "Jens'" -> "Hannes".
        if word == base and base.endswith(("s", "x", "z")) and text[end : end + 1] in ("'", "’"):
            return Edit(start, end + 1, text[start : end + 1], genitive(replacement), "name")
        return Edit(start, end, word, replacement, "name")

    def _word(
        self,
        text: str,
        tokens: list[tuple[int, int, str]],
        index: int,
        capitalised_inside: bool,
        skipped: list[Skip] | None,
    ) -> Edit | None:
        start, end, word = tokens[index]
        lower = word.lower()
        if text[end : end + 1] in ("'", "’") and lower + "'" in self.word_map:
            end, lower = end + 1, lower + "'"  # "prins'": the apostrophe genitive
        substitute = self.word_map.get(lower)
        if substitute is None:
            return None
        if lower == "hr" and text[end : end + 1] == ".":
            end += 1  # "hr." -> "fru": the abbreviation's dot goes with it
        elif substitute == "hr":
            substitute = "hr."  # "fru Hansen" -> "hr. Hansen"
        original = text[start:end]
        kind = self.kinds.get(lower.rstrip("'"), self.kinds.get(lower[:-1], "noun"))
        if kind != "title" and capitalised_inside and not word.isupper():
            if skipped is not None:
                skipped.append(Skip(start, end, original, "capitalised noun mid-sentence"))
            return None
        if lower in self.lowercase_only and word != lower:
            return None  # "Gud": God, not a god
        if index and lower in self.spouse_map:
            previous = tokens[index - 1][2]
            if text[tokens[index - 1][1] : start] == " " and (
                previous.lower() in POSSESSIVES
                or (previous.endswith("s") and previous[:1].isupper() and previous != "Hans")
            ):
                substitute = self.spouse_map[lower]  # "hendes mand" -> "hans kone"
        if lower == "dronning" and index + 1 < len(tokens):
            next_start, _, next_word = tokens[index + 1]
            if next_word[:1].isupper() and text[end:next_start] == " ":
                substitute, kind = "kong", "title"  # "dronning Margrethe" -> "kong ..."
        return Edit(start, end, original, match_case(word, substitute), kind)

    def unlisted_words(self, text: str) -> list[str]:
        """Lower-case words ending like a female or -mand form (-inde, -inder, -mand,
        -mænd, ...) that no list covers, except verbs such as *finde*, *vinde*."""
        known = self.known_words
        return [
            word
            for word in LETTERS.findall(text)
            if word.islower()
            and len(word) > 5
            and word not in known
            and _GENDERED_LOOKING.search(word)
            and not _INDE_VERBS.search(word)
        ]
