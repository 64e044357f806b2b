"""German titles and given names: *Herr Müller* <-> *Frau Müller*, *Peter* <-> *Maria*.

Titles (*Herrn* in the oblique cases) and first names of ``de/name_pairs.tsv``, the latter
with their genitive: the name is swapped by its stem and the genitive re-formed for the new
name, *-s* or an apostrophe after *s, ß, x, z* (Duden § 1520: *Annas* -> *Klaus'*,
*Thomas'* -> *Andreas*). A mixin of :class:`cdsbias.cds.languages.de.German` (it uses the
language's ``lexicon``).
"""

from __future__ import annotations

from cdsbias.cds.engine import Edit, match_case
from cdsbias.cds.languages.de_lexicon import PREPOSITIONS, word_set
from cdsbias.cds.languages.de_tokens import Tokens, parse_article

_ADJECTIVE_ENDINGS = ("e", "en", "em", "er", "es")
TITLES = {"Herr": "Frau", "Herrn": "Frau"}
TITLE_WORDS = frozenset(("Herr", "Herrn", "Frau"))
_TITLES_BEFORE_SURNAME = word_set("Herr Herrn Frau Dr Prof Professor Professorin")
# A name ending so takes an apostrophe for its genitive (Duden, § 1520): Klaus' Auto.
_APOSTROPHE_ENDINGS = ("s", "ß", "x", "z")
_APOSTROPHES = frozenset("'’")
_QUOTES = frozenset("'‘’\"„“”‚")


def _apostrophe_genitive(tokens: Tokens, i: int) -> bool:
    """Name ``i`` ends in s/ß/x/z and an apostrophe right after it marks the genitive
    (*Thomas' Auto*), not a closing quote: a word follows after a space, and no quote
    mark opens before the name (*'Thomas' rief er*)."""
    gap = tokens.gaps[i + 1] if i + 1 < len(tokens.words) else ""
    return (
        tokens.words[i].endswith(_APOSTROPHE_ENDINGS)
        and tokens.gaps[i][-1:] not in _QUOTES
        and gap[:1] in _APOSTROPHES
        and gap[1:].isspace()
    )


class GermanNames:
    """The title and given-name rules of :class:`~cdsbias.cds.languages.de.German`."""

    def _title(self, tokens: Tokens, i: int) -> bool:
        """Herr/Herrn/Frau at ``i`` is a title: a capitalised word follows, no article
        precedes."""
        following = tokens.words[i + 1] if i + 1 < len(tokens.words) else ""
        title_next = following[:1].isupper() and tokens.adjacent(i + 1)
        return title_next and not self._after_article(tokens, i)

    def _after_article(self, tokens: Tokens, i: int) -> bool:
        return tokens.adjacent(i) and parse_article(tokens.lower(i - 1)) is not None

    def _name(self, tokens, i, planned, refs, surnames) -> None:
        word = tokens.words[i]
        names = self.lexicon.name_map
        base, suffix = (word, "") if word in names else (word[:-1], "s")
        if base not in names:
            return
        previous = tokens.words[i - 1] if i > 0 and tokens.adjacent(i) else ""
        if previous in names or previous.rstrip(".") in _TITLES_BEFORE_SURNAME:
            return  # a surname or a second given name read as one: "Anna Peters"
        name_class = self.lexicon.ambiguous_names.get(base, "")
        if self._after_article(tokens, i) and "," not in tokens.gap(i - 1):
            # ", der Maria behandelt" is a relative pronoun, not an article
            return  # "der Wolf"; "die Maria" (dialect) would need its article changed too
        word_like = previous.lower() in PREPOSITIONS or (
            previous.islower() and previous.endswith(_ADJECTIVE_ENDINGS)
        )
        if name_class and word_like:
            return  # "in Achim", "seinem neuen Roman": a place or a noun, not a name
        following = tokens.words[i + 1] if i + 1 < len(tokens.words) else ""
        if name_class == "proper" and not (following[:1].isupper() and tokens.adjacent(i + 1)):
            return
        new = names[base]
        end = tokens.ends[i]
        if not suffix and _apostrophe_genitive(tokens, i):
            suffix, end = "s", end + 1  # "Thomas' Auto": the apostrophe is re-formed too
        if suffix:
            suffix = "'" if new.endswith(_APOSTROPHE_ENDINGS) else "s"
        start = tokens.starts[i]
        replacement = match_case(word, new) + suffix
        planned[i] = Edit(start, end, tokens.text[start:end], replacement, "name")
        refs[i] = self.lexicon.name_gender[base] + "p"
        if following[:1].isupper() and tokens.adjacent(i + 1):
            surnames.add(i + 1)
